#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: fsx_team_dir
short_description: A team's directories on the shared FSx file system, and its S3 data repository association
version_added: 0.1.0
description:
  - Manages the team directory C(<root>/<team>), the home parent C(<root>/<team>/home) and one home directory
    C(<root>/<team>/home/<member>) per member with a uid, on an FSx for Lustre or OpenZFS file system mounted at O(root).
    This is the layout the SageMaker workspace uses (FSx path C(/<team>) for the team, C(/<team>/home/<member>) for users).
  - "Modes: the team directory O(mode) (default C(2770): setgid, so what members create belongs to the team group),
    owned by O(uid):O(gid); C(home) C(2750) O(uid):O(gid); each home C(0700) C(<member uid>):O(gid).
    With O(s3_link=true) (or once C(s3-export) exists) the team directory also has the sticky bit (C(3770) for the default)
    and C(s3-export) is O(uid):O(gid) with O(mode) without it. Only these directories are changed, never their contents."
  - Runs on a host that mounts the file system (the control node, an AWX execution node, or a host reached with C(delegate_to)).
  - Every path is walked from a descriptor of O(root) without following symbolic links; a link anywhere on a managed path
    (including the team path itself) fails the task before anything is written. Ownership and modes are set through descriptors.
  - Home directories of people no longer in O(members) are left as they are and listed in RV(unlisted_homes).
  - With O(s3_link=true), also makes the export directory C(<root>/<team>/s3-export) (O(uid):O(gid), O(mode) as the team
    directory's), gives the team directory the sticky bit (so no member renames C(home) or C(s3-export)), and manages the
    FSx for Lustre data repository association linking FSx path C(/<team>/s3-export), never C(/<team>) with the homes,
    to C(s3://<bucket>/<team>/) (automatic export only, no import). Only then does the module call AWS.
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  state:
    description:
      - V(present) creates or corrects the directories; V(absent) offboards the team as O(on_remove) says.
    type: str
    choices: [present, absent]
    default: present
  team:
    description:
      - The team name; a single path component that follows the team naming rules (no C(/), C(.) or C(..)).
    type: str
    required: true
  root:
    description:
      - The mount point of the file system (its C(/)).
    type: path
    required: true
  require_mount:
    description:
      - Refuse to run when O(root) is not a mount point, so an unmounted file system never gets a local copy.
      - Set to V(false) only for tests and demos that use a local directory; with V(false) a missing O(root) is made
        (mode C(0755)), and check mode predicts it.
    type: bool
    default: true
  uid:
    description:
      - Numeric owner of the team directory and of C(home).
    type: int
    default: 0
  gid:
    description:
      - Numeric POSIX group of the team; group of every managed directory. Required with O(state=present).
    type: int
  mode:
    description:
      - Mode of the team directory, an octal string such as V('2770').
    type: str
    default: '2770'
  members:
    description:
      - Members that get a home directory.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: User name, the home directory's name.
        type: str
        required: true
      uid:
        description: Numeric owner of the home directory.
        type: int
        required: true
  acl:
    description:
      - Also set POSIX ACLs on the team directory (access and default entries for O(gid) with the mode's group permissions),
        so files members create stay readable by the team whatever their umask.
      - Needs C(getfacl) and C(setfacl); without them the result says unsupported and the task warns.
    type: bool
    default: false
  project_quota:
    description:
      - A Lustre project quota on the team directory (C(lfs project -p -s -r), C(lfs setquota -p)).
      - Needs C(lfs); without it (OpenZFS, or no Lustre client tools) the result says unsupported and the task warns.
    type: dict
    suboptions:
      project_id:
        description: Lustre project ID of the team directory tree.
        type: int
        required: true
      block_hard_limit_gib:
        description: Hard limit on the project's space, in GiB.
        type: int
      inode_hard_limit:
        description: Hard limit on the project's number of files.
        type: int
  on_remove:
    description:
      - What O(state=absent) does with the team directory. V(keep) leaves it and reports it;
        V(archive) renames it (atomically, same file system) to C(<root>/.archive/<team>-<UTC timestamp>);
        V(delete) removes it and everything in it, and needs O(confirm_delete).
    type: str
    choices: [keep, archive, delete]
    default: keep
  confirm_delete:
    description:
      - The team name, to confirm O(on_remove=delete).
    type: str
  s3_link:
    description:
      - "Manage the export directory C(<root>/<team>/s3-export) and the data repository association of FSx path
        C(/<team>/s3-export) and C(s3://<bucket>/<team>/): created with O(state=present), deleted (keeping the files on FSx)
        with O(state=absent)."
      - Before any write the module reads the file system's associations, whoever made them, and fails naming the team,
        the file system and the count when the new one would be more than FSx's 8 per file system, when another
        association's path overlaps C(/<team>/s3-export), when another one's S3 path overlaps C(s3://<bucket>/<team>/) or one
        links another path inside C(/<team>), or when an association of C(/<team>) (the whole team directory,
        made by this module before) exists; it never deletes that one itself.
      - Before the first link, an existing C(s3-export) (of any kind) is refused before any write, never taken over; without
        the link one that the module did not make is warned about and left as it is.
      - With V(false) and O(state=present) the module makes no AWS call and leaves any association alone.
      - O(state=absent) with O(file_system_id) deletes the association of C(/<team>/s3-export) whatever O(s3_link) says,
        and refuses before any write to archive or delete the team directory while an association of C(/<team>) exists
        (with O(on_remove=keep) that one is reported, RV(legacy_association), and left).
    type: bool
    default: false
  file_system_id:
    description:
      - The FSx for Lustre file system mounted at O(root). Required with O(s3_link=true); with O(state=absent) the team's
        associations are looked up whenever it is given.
    type: str
  bucket:
    description:
      - The data bucket that holds a prefix per team. Required with O(s3_link=true).
    type: str
  tags:
    description:
      - Extra tags on the association. Team tags are added or corrected, never removed.
    type: dict
  wait:
    description:
      - Wait for the association to be C(AVAILABLE) (or deleted).
  wait_timeout:
    description:
      - Seconds to wait.
    default: 600
notes:
  - Create and correct need root (or CAP_CHOWN) on the host to give directories to other users; on FSx for Lustre with
    root squash enabled, the host's NID must be in the root squash exceptions.
  - The association's data repository path cannot be changed in place; the module fails before any write when it would have to.
  - In the team file, C(storage.s3_link) is refused unless the platform allows it (C(hyperpod_team_limits.choices)).
extends_documentation_fragment:
  - hyperpod.tenancy.ownership
  - hyperpod.tenancy.attributes
  - hyperpod.tenancy.team
  - hyperpod.tenancy.aws
  - hyperpod.tenancy.wait
"""

EXAMPLES = r"""
- name: Create the vision team's directories and homes
  hyperpod.tenancy.fsx_team_dir:
    team: vision
    root: /fsx
    gid: 20001
    members:
      - {name: alice, uid: 10001}
      - {name: bob, uid: 10002}

- name: Link the team directory to the team's S3 prefix
  hyperpod.tenancy.fsx_team_dir:
    team: vision
    root: /fsx
    gid: 20001
    s3_link: true
    file_system_id: fs-0123456789abcdef0
    bucket: hyperpod-team-data
    cost_center: CC-1001

- name: Offboard the team, moving its data to /fsx/.archive
  hyperpod.tenancy.fsx_team_dir:
    team: vision
    root: /fsx
    state: absent
    on_remove: archive
"""

RETURN = r"""
path:
  description: The team directory.
  returned: always
  type: str
  sample: /fsx/vision
directories:
  description: The managed directories as they are after the run (predicted in check mode).
  returned: state=present
  type: list
  elements: dict
  contains:
    path:
      description: Absolute path.
      type: str
    uid:
      description: Owner.
      type: int
    gid:
      description: Group.
      type: int
    mode:
      description: Octal mode.
      type: str
      sample: '2770'
unlisted_homes:
  description: Home directories of people not in O(members); left untouched.
  returned: state=present
  type: list
  elements: str
action:
  description: What O(state=absent) did with the team directory.
  returned: state=absent
  type: str
  sample: archived
archive_path:
  description: Where O(on_remove=archive) moved the team directory.
  returned: state=absent
  type: str
  sample: /fsx/.archive/vision-20261130T091500Z
acl:
  description: The ACL result, when O(acl=true).
  returned: when O(acl=true)
  type: dict
  contains:
    supported:
      description: Whether getfacl and setfacl exist on the host.
      type: bool
    changed:
      description: Whether entries were (or would be) added.
      type: bool
    reason:
      description: Why it is unsupported.
      type: str
    entries:
      description: The ACL entries set.
      type: list
      elements: str
project_quota:
  description: The Lustre project quota result, when O(project_quota) is set.
  returned: when O(project_quota) is set
  type: dict
  contains:
    supported:
      description: Whether lfs exists on the host.
      type: bool
    changed:
      description: Whether the project or its limits changed.
      type: bool
    reason:
      description: Why it is unsupported.
      type: str
association:
  description: The data repository association (after the run; predicted in check mode), when O(s3_link=true).
  returned: when O(s3_link=true), or with O(state=absent) and O(file_system_id)
  type: dict
  contains:
    association_id:
      description: The DRA ID.
      type: str
      sample: dra-0123456789abcdef0
    file_system_path:
      description: FSx path (the team's export directory).
      type: str
      sample: /vision/s3-export
    data_repository_path:
      description: S3 path.
      type: str
      sample: s3://hyperpod-team-data/vision/
    lifecycle:
      description: AWS lifecycle state.
      type: str
      sample: AVAILABLE
    s3:
      description: Automatic import and export events.
      type: dict
    tags:
      description: Tags.
      type: dict
legacy_association:
  description:
    - An association of the whole team directory C(/<team>) found when offboarding, left as it is (a warning says so).
  returned: with O(state=absent) and O(file_system_id), when there is one
  type: dict
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import ModuleFailure, os_error_message, run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_dirs import MODULE_OPTIONS, converge


def converge_under_root(context, params):
    """The layer's converge; a file system error that names no file names O(root)."""
    try:
        return converge(context, params)
    except OSError as e:
        raise ModuleFailure(os_error_message(e, params["root"]), errno=e.errno)


def main():
    run_module(MODULE_OPTIONS, converge_under_root)


if __name__ == "__main__":
    main()
