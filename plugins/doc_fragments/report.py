# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # A monthly report over the teams and the cluster's capacity (usage_report, chargeback_report).
    DOCUMENTATION = r"""
options:
  month:
    description: The month, V(YYYY-MM). By default the last full month (UTC).
    type: str
  teams:
    description:
      - The normalized teams (C(hyperpod_teams_normalized)); C(name), C(state) and C(quota) are read.
      - Only the teams with C(state=present) are reported.
    type: list
    elements: dict
    required: true
  instance_groups:
    description: The cluster's instance groups (C(hyperpod_cluster.instance_groups)); C(instance_type) and C(count) give the capacity.
    type: list
    elements: dict
    required: true
"""
