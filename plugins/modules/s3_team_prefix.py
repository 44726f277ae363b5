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
  - "Marks the team's prefix C(<team>/) of the data bucket as made for the team: its ownership mark is the zero-byte object
    C(_hyperpod/owners/<team>) that carries exactly the team tags (object tags). It lies under the platform's prefix
    C(_hyperpod/), which no team policy names (a team name never starts with C(_)): the team's members, who may write
    anything under C(<team>/), cannot overwrite or untag it."
  - The mark was the object C(<team>/) inside the prefix before. Such an old mark, made by this collection for the team, is
    taken as the mark while no new one exists, and moved (the new mark written, the old object deleted) by the next run.
  - The team's permission set grants that prefix only; this module does not manage bucket policies.
  - "Offboarding (O(state=absent)) keeps every object under the prefix by default (O(on_remove=keep)) and reports how many there are;
    O(on_remove=delete) deletes them all, mark included, and needs O(confirm_delete) set to the team name. The mark of a
    prefix that holds no object goes too."
  - "Offboarding that keeps data (the objects under the prefix, or what O(retire.kept) names) records the team in the ledger of
    retired names: the object C(_hyperpod/retired/<team>) in the data bucket, a JSON document naming the team, its
    O(retire.gid), its O(retire.identity_center_group), the date and what was kept. M(hyperpod.tenancy.shared_info) then
    refuses a new team of that name or gid unless the platform lets it inherit (C(hyperpod_inherit), O(inherit)). A
    confirmed O(on_remove=delete) that keeps nothing removes the team's entry."
  - Unlike M(amazon.aws.s3_object) in C(mode=create), which leaves an existing key alone, tag drift on the mark is corrected.
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  state:
    description:
      - V(present) creates or re-tags the mark; V(absent) offboards as O(on_remove) says.
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
      - V(keep) leaves the objects (and the mark); V(delete) deletes every current object under the prefix.
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
      - Extra tags on the mark. S3 allows at most 10 tags on an object, team tags included.
      - The mark's tags are set to exactly the team tags plus these.
    type: dict
  identity:
    description:
      - O(state=present) only. Who the team is beyond its name, recorded as tags of its ownership mark
        (C(hyperpod.tenancy/identity-center-group-id), C(hyperpod.tenancy/gid)), never taken from O(tags).
      - M(hyperpod.tenancy.shared_info) then refuses a later team of the name whose Identity Center group is another, and,
        once the team is no longer present in the team file, a team of its name or of the gid recorded, unless the
        platform's C(hyperpod_inherit) lets it inherit.
      - What is not given, the mark keeps as it records it.
    type: dict
    suboptions:
      identity_center_group_id:
        description: The id of the team's Identity Center group (not its display name).
        type: str
      gid:
        description: The team's gid (C(storage.gid)).
        type: int
  retire:
    description:
      - Offboarding (O(state=absent)) only. What the ledger of retired names records of the team when its data is kept.
    type: dict
    suboptions:
      gid:
        description:
          - The team's gid, recorded when data that the gid reads was kept (the team's FSx directory). A new team of that
            gid is then refused too.
        type: int
      identity_center_group:
        description: The team's Identity Center group, recorded to name the retired team.
        type: str
      kept:
        description:
          - What else of the team's data offboarding kept (the FSx directory's path), recorded; with any, the team is
            recorded even when its prefix holds no object.
        type: list
        elements: str
        default: []
  inherit:
    description:
      - O(state=present) only. The retired teams whose ledger entries the team takes, as the platform let it
        (C(hyperpod_inherit); RV(hyperpod.tenancy.shared_info#module:hyperpod_shared.team_inherits)). The team is recorded
        in each entry, which then refuses no one for the name or gid the team took.
    type: dict
    suboptions:
      retired:
        description: The retired teams' names.
        type: list
        elements: str
        required: true
      gid:
        description: The team's gid (C(storage.gid)), recorded with it.
        type: int
      identity_center_group:
        description: The team's Identity Center group, recorded with it.
        type: str
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

- name: Offboard the team, keeping its data and recording it in the ledger of retired names
  hyperpod.tenancy.s3_team_prefix:
    team: vision
    bucket: hyperpod-team-data
    state: absent
    retire:
      identity_center_group: TeamVision
      gid: 20100
      kept: [/fsx/vision]

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
      description: Whether the prefix has an ownership mark.
      type: bool
    mark:
      description: Where its ownership mark is (C(s3://<bucket>/_hyperpod/owners/<team>), or the old C(s3://<bucket>/<team>/) until moved), null without one.
      type: str
      sample: s3://hyperpod-team-data/_hyperpod/owners/vision
    tags:
      description: The mark's tags.
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
retired:
  description:
    - The team's entry in the ledger of retired names after the run (predicted in check mode), when offboarding kept data;
      null otherwise.
  returned: state=absent
  type: dict
  sample: {team: vision, gid: 20100, identity_center_group: TeamVision, offboarded_at: "2025-06-01T09:00:00Z",
           kept: ["/fsx/vision", "s3://hyperpod-team-data/vision/"], inherited_by: []}
inherited:
  description: The ledger's entries of the retired teams of O(inherit) after the run, by retired team (predicted in check mode).
  returned: with O(inherit)
  type: dict
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils.data_repository import PREFIX_MODULE_OPTIONS, converge_prefix
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import run_module


def main():
    run_module(PREFIX_MODULE_OPTIONS, converge_prefix)


if __name__ == "__main__":
    main()
