# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # module_options.STATE for a module whose state means only whether its resource exists. A module whose V(absent)
    # does more (offboards as an option says) or whose states are others documents its own state instead.
    DOCUMENTATION = r"""
options:
  state:
    description: Whether the resource should exist.
    type: str
    choices: [present, absent]
    default: present
"""
