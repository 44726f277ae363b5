#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: preflight
short_description: Check, read only, that an account is ready for the collection's first write
version_added: 0.2.0
description:
  - Reads what a real account must have before C(site.yml) writes there, and returns one row per check in
    RV(checks), with every problem in RV(problems). It never fails for what it finds (C(playbooks/preflight.yml) prints
    the table, then fails with every problem at once); a check whose own read is refused is a problem row of its own.
  - B(The caller) (C(GetCallerIdentity)) and whether its policies allow each statement of the automation policy
    (C(docs/automation-policy.md)), by C(SimulatePrincipalPolicy) on the caller's own user or role, with each statement's
    own scope and the run's resources (the teams' Studio execution and Pod Identity roles, their ownership marks and
    budgets), and the context each statement's condition names (the C(managed-by) tag, C(iam:PassedToService)). The
    simulation counts the caller's identity policies, its permissions boundary and the organization's SCPs as AWS's
    simulator does; a simulation that lacked a context key the caller's policies name is a warning.
  - B(IAM Identity Center), where the run asks for it (O(identity_center)); one instance, active, its identity store
    and owner account, and its permission sets against O(permission_set_quota).
  - B(The EKS cluster), C(ACTIVE); its authentication mode grants access entries (C(API) or C(API_AND_CONFIG_MAP)); each
    add-on of O(addons) offered for its Kubernetes version (the version pinned, when one is); every EKS access policy
    the teams' access entries are given offered in the Region.
  - B(Quotas) the teams count against, the account's IAM roles (C(GetAccountSummary)) and the instance's permission sets.
  - B(The data bucket) exists and is the caller's account's (C(ExpectedBucketOwner)); Block Public Access on at the bucket
    (a problem when any of its four settings is off there; the account-level setting is not read); object
    ownership C(BucketOwnerEnforced), default encryption not a KMS key the team roles cannot use, and versioning (a
    warning each otherwise).
  - B(The FSx file system), when O(fsx_file_system_id) is set, is Lustre, C(AVAILABLE), in the VPC of O(subnet_ids), and,
    for the teams whose C(storage.s3_link) is true, one that holds data repository associations (Lustre 2.12 or 2.15, not
    C(SCRATCH_1), not Intelligent-Tiering, not linked the legacy way) with room for theirs (8 per file system).
  - What only the teams' own lookups show (their Identity Center groups and users, resources not theirs to change, the
    retired names) is M(hyperpod.tenancy.shared_info)'s; C(playbooks/preflight.yml) adds its problems to the table
    through O(known_problems) and O(team_problems).
  - A scope with a wildcard (C(arn:aws:sagemaker:<region>:<account>:*), C(*)) is simulated as that pattern and as each SageMaker
    resource type the run makes (C(domain/*), ...); a Deny of the caller's own on one resource of it (one domain's ARN) is
    not seen; on the resources the run names before it makes them (the teams' roles, marks and budgets) it is.
  - The simulation sends the context a request of the run carries (C(aws:RequestedRegion), C(aws:PrincipalArn),
    C(aws:PrincipalAccount), the statement's own condition values); a denial where the simulation lacked a key the caller's
    policies name is a warning, since the real request may carry it. It does not evaluate resource-based policies (the
    bucket's policy), resource control policies or session policies.
  - When IAM Identity Center is in another account (O(identity_center) with C(assume_role_arn) or C(profile)), its role is
    checked by reading there (C(ListInstances), C(ListPermissionSets)), not by simulation.
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  eks_cluster_name:
    description: The EKS cluster that orchestrates the HyperPod cluster.
    type: str
    required: true
  data_bucket:
    description: The teams' data bucket (C(hyperpod_data_bucket)).
    type: str
    required: true
  teams:
    description: The teams, as normalized by M(hyperpod.tenancy.validate_team_file); the C(present) ones are checked for.
    type: list
    elements: dict
    default: []
  cluster_execution_role_arns:
    description: The roles the HyperPod cluster's instance groups run as, which the automation passes to SageMaker.
    type: list
    elements: str
    default: []
  addons:
    description: The EKS add-ons the run installs, each with its C(name) and, when pinned, its C(version).
    type: list
    elements: dict
    default: []
  subnet_ids:
    description: The shared subnets; the FSx file system must be in their VPC.
    type: list
    elements: str
    default: []
  fsx_file_system_id:
    description: The shared FSx for Lustre file system.
    type: str
  identity_center_instance_arn:
    description: The Identity Center instance. When omitted, the account must have exactly one.
    type: str
  permission_set_quota:
    description: Permission sets the instance allows ("Number of permission sets allowed in IAM Identity Center"), AWS's default unless raised.
    type: int
    default: 3500
  budget_name_prefix:
    description: The prefix of the teams' budget names when it is not O(name_prefix) (the role C(cost)'s C(cost_name_prefix)).
    type: str
  budget_account_id:
    description:
      - The account of the teams' budgets (C(cost_account_id)). When it is another account than the caller's, the caller's
        policies are not asked for the budgets' statement.
    type: str
  known_problems:
    description: What M(hyperpod.tenancy.shared_info) found missing, added to the table as C(teams) rows.
    type: list
    elements: str
    default: []
  team_problems:
    description:
      - The teams M(hyperpod.tenancy.shared_info) refuses (RV(hyperpod.tenancy.shared_info#module:hyperpod_shared.team_problems)),
        each added to the table as a problem row of its team.
    type: dict
    default: {}
extends_documentation_fragment:
  - hyperpod.tenancy.attributes.info_module
  - hyperpod.tenancy.team.name_prefix
  - hyperpod.tenancy.identity_center
  - hyperpod.tenancy.aws
"""

EXAMPLES = r"""
- name: Check the account before the first run
  hyperpod.tenancy.preflight:
    eks_cluster_name: ml-shared-eks
    data_bucket: hyperpod-team-data
    fsx_file_system_id: fs-0123456789abcdef0
    addons:
      - name: amazon-sagemaker-hyperpod-taskgovernance
      - name: eks-pod-identity-agent
  register: preflight

- name: Show it
  ansible.builtin.debug:
    msg: "{{ preflight.table }}"
"""

RETURN = r"""
checks:
  description: One row per check, in the table's order.
  returned: always
  type: list
  elements: dict
  contains:
    area:
      description: What was checked (caller, permissions, identity center, eks, add-on, access policies, quotas, data bucket, fsx, teams).
      type: str
    subject:
      description: Which one (a statement's Sid, a setting, an add-on, ...).
      type: str
    status:
      description: C(ok), C(warning) or C(problem).
      type: str
    detail:
      description: What was found, and for a problem what to do.
      type: str
  sample: [{"area": "eks", "subject": "ml-shared-eks", "status": "ok", "detail": "Kubernetes 1.33, authentication mode API_AND_CONFIG_MAP"}]
problems:
  description: Every row whose status is C(problem), as its area, subject and detail on one line.
  returned: always
  type: list
  elements: str
table:
  description: RV(checks) as fixed-width lines.
  returned: always
  type: list
  elements: str
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils import preflight
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import IDENTITY_CENTER, NAME_PREFIX, options

MODULE_OPTIONS = options(
    dict(
        eks_cluster_name=dict(type="str", required=True),
        data_bucket=dict(type="str", required=True),
        teams=dict(type="list", elements="dict", default=[]),
        cluster_execution_role_arns=dict(type="list", elements="str", default=[]),
        addons=dict(type="list", elements="dict", default=[]),
        subnet_ids=dict(type="list", elements="str", default=[]),
        fsx_file_system_id=dict(type="str"),
        identity_center_instance_arn=dict(type="str"),
        permission_set_quota=dict(type="int", default=3500),
        budget_name_prefix=dict(type="str"),
        budget_account_id=dict(type="str"),
        known_problems=dict(type="list", elements="str", default=[]),
        team_problems=dict(type="dict", default={}),
    ),
    NAME_PREFIX,
    IDENTITY_CENTER,
)


def converge(context, p):
    # Identity Center's statements go to its own account's role when the run reaches it with other credentials.
    elsewhere = any((p["identity_center"] or {}).get(key) for key in ("assume_role_arn", "profile"))
    settings = dict(p, identity_center_elsewhere=elsewhere)
    present = [t for t in p["teams"] if t.get("state", "present") == "present"]
    rows = preflight.checks(context, settings, present)
    rows += [preflight.row("teams", "shared_info", preflight.PROBLEM, problem) for problem in p["known_problems"]]
    rows += [preflight.row("teams", team, preflight.PROBLEM, "refused: %s" % "; ".join(reasons)) for team, reasons in sorted(p["team_problems"].items())]
    problems = ["%s %s: %s" % (r["area"], r["subject"], r["detail"]) for r in rows if r["status"] == preflight.PROBLEM]
    return dict(changed=False, checks=rows, problems=problems, table=preflight.table(rows))


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
