# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # module_options.wait(seconds). What the module waits for differs, and so does the timeout: each module documents
    # O(wait)'s description and O(wait_timeout)'s default (Ansible merges them over these).
    DOCUMENTATION = r"""
options:
  wait:
    type: bool
    default: true
  wait_timeout:
    description: How many seconds to wait.
    type: int
"""
