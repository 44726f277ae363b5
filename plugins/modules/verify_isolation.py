#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: verify_isolation
short_description: Prove that no team principal reaches another team's resources
version_added: 0.1.0
description:
  - For every team principal (the role IAM Identity Center made for the team's permission set, the team's
    Studio execution role, the team's EKS Pod Identity role C(<name_prefix>-<team>-pods) that
    M(hyperpod.tenancy.team_namespace) makes) and every team's resources (S3 objects and the listing of its
    prefix, SageMaker AI domain, user profiles, spaces and apps, the domain's home EFS file system, compute quota,
    budget, EKS access entry, permission set, execution role, Pod Identity role), asks IAM C(SimulatePrincipalPolicy) about every action
    botocore's service models list for that kind of resource, with the resource's team tag and the listing's
    C(s3:prefix) as context entries.
  - The resources the teams share are crossed with every team principal too, one of each whatever the number of
    teams. They are the data bucket itself (its policy, ACL, ownership, encryption, lifecycle, replication, deletion, ...),
    the EKS cluster (access entries, Pod Identity associations, add-ons, its configuration), an add-on and a Pod
    Identity association of it, the HyperPod cluster (updates, software, nodes, scheduler configuration, new compute
    quotas) and a scheduler configuration, the FSx file system (data repository tasks and associations, backups,
    updates) and a data repository association of it, the Grafana workspace named by O(grafana_workspace_id)
    (permissions, API keys, service accounts), the Amazon Managed Service for Prometheus workspace the usage reports read
    (O(prometheus_workspace_arn), O(prometheus_workspace_id) or O(prometheus_workspace_alias); its queries, remote
    write, rules, alert manager, configuration, deletion) and a rule groups namespace and an anomaly detector of it, the
    Identity Center instance (permission sets, account
    assignments), its identity store (users, groups, memberships), the teams' Identity Center groups, and the roles the
    platform's HyperPod cluster runs as (each instance group's C(ExecutionRole), its autoscaling C(ClusterRole), and
    C(cluster_execution_role_arn) and C(cluster_autoscaling_role_arn) of O(shared); passing, assuming, policies, trust).
    Every action the models list for them is expected denied, but the reads of the clusters the rendered policies grant
    (C(isolation.SHARED_ALLOWED)).
  - So are the data bucket's places no present team owns, and the cluster's lifecycle scripts, which HyperPod runs as root
    on every node the teams share. Every object action and the listing (C(s3:prefix)) are asked of the bucket's root, of the
    platform's prefix C(_hyperpod/) (the lifecycle scripts, the ownership marks, the ledger) and each of its folders, of
    every other top-level prefix that is no present team's (data kept from an offboarded team, anything put there by
    hand), and of each instance group's lifecycle folder with its entry scripts, wherever it is. The root's listing is
    every C(s3:prefix) that shows the name of a key no present team's prefix holds (any prefix but one under a team's).
    They are found with two C(ListObjectsV2) of the bucket (its folders, the platform prefix's folders) and the cluster's
    C(DescribeCluster).
  - A resource is the B(set) of requests it stands for, not a sample of it. A team's S3 objects are every key under
    C(<team>/); its listing is every C(ListBucket) whose C(s3:prefix) shows one of them (none, a prefix of C(<team>/), or
    C(<team>/) and anything after); its Studio user profiles, spaces and apps every one of its domain, those made later
    too. Every condition key the principal and the resource do not pin (C(aws:RequestedRegion), C(aws:SourceIp),
    C(aws:CurrentTime), a session tag, ...) may take any value or none. A cell is I(denied) only when no request of its
    set can be allowed; an Allow counts when it may apply to one of them, a Deny only when it applies to all of them
    (the collection's evaluator, C(iam_sets), over the principal's policies as IAM holds them, inline, attached,
    permissions boundary, role tags, and the sessions the role's trust allows).
  - An allow on another team's resource, or on a shared resource beyond those reads, is a I(leak); a cell that cannot be
    proven denied (IAM missed a context key a statement for that action tests, or the evaluator cannot read the
    principal's policies) is a leak too, with decision C(unknown); a denial of an action a team needs on its own
    resources (asked on one request, its sample) is a I(gap).
  - IAM Access Analyzer C(CheckAccessNotGranted) checks each policy of each team principal (the role's inline and
    attached policies) against every other team's resources and the shared ones whose isolation is in the Resource
    element (S3 objects asked as C(arn:aws:s3:::<bucket>/<team>/*), roles, compute quotas, budgets, access entries,
    permission sets, the clusters and their parts) with the actions botocore lists for them, less those the team is
    given on a shared resource; a policy it says may grant them (a condition counts as met by some request) is a
    I(finding). Kinds isolated by a tag condition or by C(s3:prefix) are decided by the evaluator over every value.
  - Access Analyzer sees one document alone, every condition met and every policy variable any value. Where it finds a
    policy with a condition or a variable (or a principal with a Deny elsewhere, or a permissions boundary) granting what
    the evaluator proves the principal reaches none of (a condition on the principal's own ARN or type, a Deny of its
    sessions), IAM is asked every cell of that principal, and the finding stands only if an allow shows there; otherwise
    it is dropped, said in RV(evaluator_fallbacks). A finding on a policy without a condition or a variable always stands.
  - IAM's C(SimulatePrincipalPolicy) witnesses the evaluator on samples, with the keys AWS sets on every request of a
    role session given as context entries. With O(iam_simulation=witness) (the default) it answers each principal's
    samples of its own team's resources, of the shared resources and of one other team's, its I(witness) (the next team
    by name); with O(iam_simulation=every_cell), every sample. On its own team IAM and the evaluator must agree; elsewhere
    an IAM allow where the evaluator decided the set denied shows the evaluator wrong. A principal on which either
    happens is asked of IAM in full (RV(evaluator_fallbacks)), and any IAM allow counts. IAM's calls grow with the number
    of teams instead of its square.
  - IAM is not asked again what it answered in an earlier run (O(witnessed)), about a principal whose policy documents,
    boundary, tags and asked cells are the same as when IAM agreed with the evaluator on them; nor Access Analyzer a
    check of the same document and access that passed. The evaluator still answers every cell of every run, from the
    policies as read in this run, so a statement added by hand is a leak at once and its principal is asked of IAM
    again. What a digest cannot see (a service control policy, IAM's own evaluation) is why an answer is kept
    O(witness_max_age) hours only.
  - The module reports leaks, gaps and findings; the playbook C(playbooks/verify_isolation.yml) fails on any.
  - Read-only; runs the same in check mode (the drift job).
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  teams:
    description: The names of the teams to cross (the present teams of the team file).
    type: list
    elements: str
    required: true
  shared:
    description:
      - What M(hyperpod.tenancy.shared_info) returned as C(hyperpod_shared) (C(account_id), C(region), C(cluster_arn),
        C(eks_cluster_name), C(permission_sets), C(sso_role_arns), C(domain_ids), C(data_bucket), C(tag_keys),
        C(cluster_execution_role_arn), C(cluster_autoscaling_role_arn)).
    type: dict
    required: true
  principals:
    description:
      - Cross only these team principals, each named by its role ARN, by its team (its three principals) or as
        C(<team>/<kind>) with kind C(permission_set), C(execution_role) or C(pod_identity). Every team of O(teams) is
        still crossed as the owner of its resources, and the shared resources are too.
      - For a check of the principals whose policies just changed, in a fraction of the time; the others keep what an
        earlier run proved of them, which this run does not prove again. All the principals when empty.
      - A name that names no principal of O(teams) fails the run.
    type: list
    elements: str
    default: []
  pod_identity_roles:
    description:
      - The ARN of a team's EKS Pod Identity role, by team name, when it is not the role C(<name_prefix>-<team>-pods)
        that M(hyperpod.tenancy.team_namespace) makes (that one is found by name; a team without either has no Pod Identity principal).
    type: dict
    default: {}
  iam_simulation:
    description:
      - C(witness) asks IAM the samples of each principal's own team, of the shared resources and of one other team;
        C(every_cell) asks IAM every sample, one call per principal, group of resources and 50 actions whatever the team
        count. Either way the collection's evaluator decides every cell over its set of requests, and an IAM allow counts.
    type: str
    choices: [witness, every_cell]
    default: witness
  grafana_workspace_id:
    description:
      - The Amazon Managed Grafana workspace the teams share (C(hyperpod_grafana.workspace_id)), probed as a shared
        resource. Without it the workspace is left out of the matrix.
    type: str
  prometheus_workspace_arn:
    description:
      - The ARN of the Amazon Managed Service for Prometheus workspace the usage reports read
        (C(hyperpod_observability.prometheus_workspace_arn)), probed as a shared resource at that ARN, in whatever region
        or account it names, with its rule groups namespaces and anomaly detectors. It comes before
        O(prometheus_workspace_id) and O(prometheus_workspace_alias).
    type: str
  prometheus_workspace_id:
    description:
      - Without O(prometheus_workspace_arn), the ID of that workspace, probed in the region and account of O(shared).
    type: str
  prometheus_workspace_alias:
    description:
      - Without O(prometheus_workspace_arn) or O(prometheus_workspace_id), the alias of that workspace
        (C(<name_prefix>-observability), the one the observability role makes); every live workspace with it in the
        region of O(shared) is probed. Without any of the three, no workspace is.
    type: str
  witnessed:
    description:
      - What an earlier run returned as RV(witnessed), the digests of the questions IAM and Access Analyzer answered,
        with the time of the answer. The playbooks keep it in Ansible's fact cache (C(hyperpod_isolation_witnessed) of
        C(localhost)); AWX keeps it between jobs with the job template's C(use_fact_cache).
      - Not used with O(iam_simulation=every_cell).
    type: dict
    default: {}
  witness_max_age:
    description:
      - How many hours an answer of O(witnessed) stands before IAM or Access Analyzer is asked again. C(0) asks every time.
    type: int
    default: 24
extends_documentation_fragment:
  - hyperpod.tenancy.attributes.info_module
  - hyperpod.tenancy.team.name_prefix
  - hyperpod.tenancy.aws
"""

EXAMPLES = r"""
- name: Cross every team principal with every team's resources
  hyperpod.tenancy.verify_isolation:
    teams: "{{ hyperpod_teams_normalized | selectattr('state', 'equalto', 'present') | map(attribute='name') | list }}"
    shared: "{{ hyperpod_shared }}"
  register: isolation

- name: Fail on a cross-team allow
  ansible.builtin.fail:
    msg: "{{ isolation.leaks }}"
  when: isolation.leaks | length > 0
"""

RETURN = r"""
summary:
  description:
    - How many cells were asked, how many cross teams, how many are on shared resources (C(shared_cells), on
      C(shared_resources) resources), how many leaks and gaps were found, and how many
      C(SimulatePrincipalPolicy) calls it took (C(simulate_calls), one per group of resources asked the same
      actions with the same condition keys, per 50 actions and 100 resources), how many cells the evaluator alone
      decided (C(local_cells), with O(iam_simulation=witness)), how many principals and Access Analyzer checks were
      not asked again as an earlier run had (C(remembered_principals), C(remembered_checks)), and how many Access Analyzer
      findings IAM, asked every cell, did not bear out (C(access_analyzer_dropped)).
  returned: always
  type: dict
  sample: {"cells": 6264, "cross_team_cells": 2538, "shared_cells": 2457, "leaks": 0, "gaps": 0, "principals": 9, "resources": 46,
           "shared_resources": 13, "simulate_calls": 270, "local_cells": 1269, "access_analyzer_checks": 18, "access_analyzer_findings": 0,
           "remembered_principals": 0, "remembered_checks": 0, "access_analyzer_dropped": 0}
witnessed:
  description:
    - The digests of the questions this run relied on IAM's or Access Analyzer's answer to, with the time IAM or Access
      Analyzer gave it (epoch seconds; a recalled answer keeps its time), to be the next run's O(witnessed).
    - With O(principals), the answers of O(witnessed) not yet aged out too, as the other principals' stand.
  returned: always
  type: dict
matrix:
  description: The matrix at a glance, one line per team principal, owner and resource kind.
  returned: always
  type: list
  elements: str
leaks:
  description: Each action allowed to a team principal on another team's resource.
  returned: always
  type: list
  elements: dict
  contains:
    # The principal, as RV(access_analyzer) gives it too.
    <<: &team_principal
      team:
        description: The team of the principal.
        type: str
      principal:
        description: C(permission_set), C(execution_role) or C(pod_identity).
        type: str
      principal_arn:
        description: The principal's role ARN.
        type: str
    owner:
      description: The team whose resource it is, C((shared)) for a resource the teams share.
      type: str
    resource_kind:
      description: The kind of resource (C(shared_bucket), C(shared_objects), C(eks_cluster), C(hyperpod_cluster), ... for a shared one).
      type: str
    resource:
      description: The resource's sample ARN (the set it stands for is described above).
      type: str
    action:
      description: The IAM action.
      type: str
    decision:
      description:
        - C(allowed) (some request of the set may be allowed), C(unknown) (not proven denied), C(explicitDeny) or C(implicitDeny).
      type: str
gaps:
  description: Each action a team needs on its own resources that is denied, in the shape of RV(leaks).
  returned: always
  type: list
  elements: dict
access_analyzer:
  description: Each policy of a team principal that IAM Access Analyzer says may grant access to another team's resources.
  returned: always
  type: list
  elements: dict
  contains:
    <<: *team_principal
    policy:
      description: The inline policy's name or the managed policy's ARN.
      type: str
    owner:
      description: The team whose resources the policy may grant.
      type: str
    resource_kind:
      description: C(s3_objects) or C(role).
      type: str
    statements:
      description: The statements (Sid, or index without one) Access Analyzer points at.
      type: list
      elements: raw
evaluator_fallbacks:
  description:
    - One sentence per principal that IAM answered in full with O(iam_simulation=witness), because the evaluator and IAM
      disagreed on one of its cells (naming the action, the resource and both answers) or the evaluator could not read
      one of its policies. Not a leak by itself; a difference worth reporting to the collection.
    - One sentence per Access Analyzer finding dropped, as IAM asked every cell of its principal allowed none of them
      (see the description).
  returned: always
  type: list
  elements: str
problems:
  description:
    - One sentence per leak and gap (the first 50), naming the team, the principal, the action and the resource,
      then one per Access Analyzer finding.
  returned: always
  type: list
  elements: str
html:
  description: The matrix as an HTML page.
  returned: always
  type: str
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils import isolation, isolation_report
from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import each, together
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import NAME_PREFIX, options

MODULE_OPTIONS = options(
    dict(
        teams=dict(type="list", elements="str", required=True),
        shared=dict(type="dict", required=True),
        principals=dict(type="list", elements="str", default=[]),
        pod_identity_roles=dict(type="dict", default={}),
        iam_simulation=dict(type="str", choices=["witness", "every_cell"], default="witness"),
        grafana_workspace_id=dict(type="str"),
        prometheus_workspace_arn=dict(type="str"),
        prometheus_workspace_id=dict(type="str"),
        prometheus_workspace_alias=dict(type="str"),
        witnessed=dict(type="dict", default={}),
        witness_max_age=dict(type="int", default=24),
    ),
    NAME_PREFIX,
)


def converge(context, p):
    shared = p["shared"]
    iam = context.client("iam")
    roles = isolation.AccountRoles(iam)
    prometheus = dict((key, p["prometheus_workspace_" + key]) for key in ("arn", "id", "alias") if p["prometheus_workspace_" + key])
    principals, resources = isolation.discover(
        context, roles, p["teams"], shared, p["name_prefix"], shared.get("tag_keys"), p["pod_identity_roles"], p["grafana_workspace_id"], prometheus
    )
    # Every team's resources are discovered whichever principals are crossed: a principal reaches any of them.
    principals = isolation.select_principals(principals, p["principals"])
    witness = p["iam_simulation"] == "witness"
    actions = isolation.actions_by_kind()

    def policies_of(principal):
        documents = roles.policy_documents(principal["arn"])
        return documents, roles.evaluation_inputs(principal["arn"], documents)

    read = dict(zip([principal["id"] for principal in principals], each(policies_of, principals)))
    documents = dict((principal_id, principal_documents) for principal_id, (principal_documents, unused_inputs) in read.items())
    inputs = dict((principal_id, principal_inputs) for principal_id, (unused, principal_inputs) in read.items())
    simulate = isolation.simulate_decider(iam, region=shared.get("region") or context.region, inputs=inputs)
    memory = isolation.Memory(p["witnessed"], p["witness_max_age"] if witness else 0)
    # The evaluator decides every cell over the set of requests it stands for; IAM's samples can only add allows.
    local = isolation.local_decider(inputs, shared["account_id"])
    decide = isolation.witness_decider(simulate, local, memory, inputs, every_cell=not witness)
    analyzer = context.client("accessanalyzer")
    found, analyzed = together(
        ("iam", lambda: isolation.matrix(principals, resources, decide, actions, keep_cells=False)),
        ("accessanalyzer", lambda: isolation.access_not_granted(analyzer, documents, principals, resources, actions, memory=memory)),
    )
    full = isolation.witness_decider(simulate, local, memory, inputs, every_cell=True)
    found, findings, dropped = isolation.settle_findings(
        analyzed["findings"], found, principals, documents, inputs, lambda asked: isolation.matrix(asked, resources, full, actions, keep_cells=False)
    )
    fallbacks = decide.fallbacks + full.fallbacks + dropped
    summary = dict(found["summary"], simulate_calls=simulate.calls, local_cells=decide.local_cells)
    summary.update(access_analyzer_checks=analyzed["checks"], access_analyzer_findings=len(findings), access_analyzer_dropped=len(dropped))
    summary.update(remembered_principals=memory.recalled["iam"], remembered_checks=memory.recalled["accessanalyzer"])
    return dict(
        changed=False,
        summary=summary,
        access_analyzer=findings,
        evaluator_fallbacks=fallbacks,
        matrix=isolation_report.matrix_lines(found),
        leaks=found["leaks"],
        gaps=found["gaps"],
        problems=isolation_report.problem_lines(found) + isolation_report.finding_lines({"findings": findings}),
        html=isolation_report.render_html(found, findings, fallbacks),
        # A run of some principals leaves the others' answers for the next full run.
        witnessed=dict(memory.known, **memory.used) if p["principals"] else memory.used,
    )


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
