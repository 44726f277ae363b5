# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.amazon.aws.plugins.doc_fragments.tags import ModuleDocFragment as Tags
from ansible_collections.hyperpod.tenancy.plugins.doc_fragments.attributes import ModuleDocFragment as Attributes
from ansible_collections.hyperpod.tenancy.plugins.doc_fragments.aws import ModuleDocFragment as Aws
from ansible_collections.hyperpod.tenancy.plugins.doc_fragments.aws import merged
from ansible_collections.hyperpod.tenancy.plugins.doc_fragments.state import ModuleDocFragment as State


class ModuleDocFragment(object):
    # A module that keeps one tagged AWS resource present or absent (module_options STATE and TAGS, with the AWS
    # connection run_module adds): hyperpod.tenancy.attributes, hyperpod.tenancy.state, hyperpod.tenancy.aws and
    # amazon.aws.tags in one fragment. Set on the instance, as hyperpod.tenancy.aws is.
    def __init__(self):
        self.DOCUMENTATION = merged(Attributes.DOCUMENTATION, State.DOCUMENTATION, Aws().DOCUMENTATION, Tags.DOCUMENTATION)
