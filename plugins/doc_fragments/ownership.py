# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # A module that finds a team's resource by its derived name: it manages only what the collection made for the team.
    DOCUMENTATION = r"""
options:
  adopt:
    description:
      - An existing resource found for the team is changed or deleted only when it carries the collection's ownership
        mark for that team, the tags C(managed-by=hyperpod.tenancy) and the team tag naming O(team) (for
        M(hyperpod.tenancy.fsx_team_dir), the file C(<root>/.hyperpod-tenancy/<team>) naming the team and the
        directory's inode). Any other is refused before any write, with an error naming it and its owner.
      - V(true) takes over an existing resource that carries no mark (a migration) and marks it. One marked for another
        team is refused even then. The team file's C(adopt) list sets it (docs/team-file.md).
    type: bool
    default: false
"""
