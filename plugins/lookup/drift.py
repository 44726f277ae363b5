# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: drift
short_description: The drift recorded so far in this run
version_added: 0.1.0
description:
  - Returns, per team, the changes that the P(hyperpod.tenancy.drift#callback) callback recorded in
    plays with C(hyperpod_drift=true) until now.
  - With the term C(loaded), returns whether that callback is loaded at all.
options:
  _terms:
    description: Nothing, or C(loaded).
    required: false
"""

EXAMPLES = r"""
- name: Fail when a team differs from the team file
  ansible.builtin.fail:
    msg: "{{ lookup('hyperpod.tenancy.drift') }}"
  when: lookup('hyperpod.tenancy.drift') | length > 0
"""

RETURN = r"""
_raw:
  description: One mapping of team name to a list of C({task, module, fields}); with C(loaded), a boolean.
  type: list
  elements: dict
"""

from ansible.plugins.lookup import LookupBase

from ansible_collections.hyperpod.tenancy.plugins.module_utils import drift


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        if terms == ["loaded"]:
            return [bool(drift.CALLBACK_LOADED)]
        return [drift.summary()]
