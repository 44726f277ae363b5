#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: s3_team_prefix
short_description: A team's prefix in the shared S3 data bucket
version_added: 0.1.0
description:
  - Makes sure the team's prefix C(<team>/) exists in the data bucket as a zero-byte marker object
    C(<team>/) that carries exactly the team tags (object tags), so cost and ownership are visible before the team writes.
  - The team's permission set grants that prefix only; this module does not manage bucket policies.
  - "Offboarding (O(state=absent)) keeps every object under the prefix by default (O(on_remove=keep)) and reports how many there are;
    O(on_remove=delete) deletes them all, marker included, and needs O(confirm_delete) set to the team name."
  - Unlike M(amazon.aws.s3_object) in C(mode=create), which leaves an existing key alone, tag drift on the marker is corrected.
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  state:
    description:
      - V(present) creates or re-tags the marker; V(absent) offboards as O(on_remove) says.
    type: str
    choices: [present, absent]
    default: present
  team:
    description:
      - The team name; the prefix is C(<team>/).
    type: str
    required: true
  bucket:
    description:
      - The shared data bucket.
    type: str
    required: true
  on_remove:
    description:
      - V(keep) leaves the objects (and the marker); V(delete) deletes every current object under the prefix.
      - In a versioned bucket V(delete) leaves noncurrent versions to the bucket's lifecycle rules.
    type: str
    choices: [keep, delete]
    default: keep
  confirm_delete:
    description:
      - The team name, to confirm O(on_remove=delete).
    type: str
  tags:
    description:
      - Extra tags on the marker. S3 allows at most 10 tags on an object, team tags included.
      - The marker's tags are set to exactly the team tags plus these.
    type: dict
  known_marker:
    description:
      - The team's marker object as read earlier in the run, as RV(hyperpod.tenancy.shared_info#module:hyperpod_shared.s3_markers)
        returns it by team (M(hyperpod.tenancy.shared_info) reads it to check every team's prefix's owner before the run's
        first write) - C(bucket), C(tags) (its tags, null without a marker) and C(objects) (whether a prefix without a
        marker holds objects, else null).
      - The module takes it instead of reading the marker's tags (and listing the prefix) when C(bucket) is O(bucket). It
        only tells that nothing changes; outside check mode, a difference makes the module read the marker again and
        plan its write from that. Used with O(state=present).
    type: dict
extends_documentation_fragment:
  - hyperpod.tenancy.ownership
  - hyperpod.tenancy.attributes
  - hyperpod.tenancy.team
  - hyperpod.tenancy.aws
"""

EXAMPLES = r"""
- name: Create the vision team's prefix
  hyperpod.tenancy.s3_team_prefix:
    team: vision
    bucket: hyperpod-team-data
    cost_center: CC-1001

- name: Offboard the team, keeping its data
  hyperpod.tenancy.s3_team_prefix:
    team: vision
    bucket: hyperpod-team-data
    state: absent

- name: Offboard the team and delete its data
  hyperpod.tenancy.s3_team_prefix:
    team: vision
    bucket: hyperpod-team-data
    state: absent
    on_remove: delete
    confirm_delete: vision
"""

RETURN = r"""
prefix:
  description: The prefix after the run (predicted in check mode).
  returned: always
  type: dict
  contains:
    bucket:
      description: The bucket.
      type: str
      sample: hyperpod-team-data
    prefix:
      description: The team prefix.
      type: str
      sample: vision/
    marker:
      description: Whether the C(<team>/) marker object exists.
      type: bool
    tags:
      description: The marker's tags.
      type: dict
      sample: {team: vision, cost-center: CC-1001, managed-by: hyperpod.tenancy}
    objects:
      description: Objects under the prefix (O(state=absent) only).
      type: int
action:
  description: What O(state=absent) did, V(none), V(kept) or V(deleted).
  returned: state=absent
  type: str
  sample: kept
objects:
  description: Objects under the prefix before the run (O(state=absent) only).
  returned: state=absent
  type: int
  sample: 12
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils.data_repository import PREFIX_MODULE_OPTIONS, converge_prefix
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import run_module


def main():
    run_module(PREFIX_MODULE_OPTIONS, converge_prefix)


if __name__ == "__main__":
    main()
