# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import yaml

from ansible_collections.amazon.aws.plugins.doc_fragments.boto3 import ModuleDocFragment as Boto3
from ansible_collections.amazon.aws.plugins.doc_fragments.common import ModuleDocFragment as Common
from ansible_collections.amazon.aws.plugins.doc_fragments.region import ModuleDocFragment as Region


def merged(*documents):
    """One fragment of several: their options, notes and requirements together, each text as amazon.aws writes it."""
    merged = {}
    for document in documents:
        for key, value in yaml.safe_load(document).items():
            if isinstance(value, dict):
                merged.setdefault(key, {}).update(value)
            else:
                merged.setdefault(key, []).extend(value)
    return yaml.safe_dump(merged, default_flow_style=False, sort_keys=False)


class ModuleDocFragment(object):
    # The AWS connection every module of this collection that calls AWS takes (module_utils/layer.py run_module builds
    # an AnsibleAWSModule): amazon.aws.common.modules, amazon.aws.region.modules and amazon.aws.boto3 in one fragment.
    # Set on the instance, as amazon.aws.boto3 sets its own: ansible-test's yamllint reads class-level DOCUMENTATION as
    # a string literal.
    def __init__(self):
        self.DOCUMENTATION = merged(Common.MODULES, Region.MODULES, Boto3().MODULES)
