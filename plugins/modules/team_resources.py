#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: team_resources
short_description: Build or converge all of one team's resources in one module run
version_added: 0.1.0
description:
  - Converges the layers of one team exactly as their own modules would, in one process. Each layer option takes
    the options of its module and is left out to skip the layer.
  - A layer that needs another starts once that one has converged (O(access_entry) after O(permission_set), whose
    role it names; O(studio_access_entry) and O(domain) after O(execution_role); O(namespace) after O(quota), in
    whose namespace it works); the other layers converge at the same time, each in a thread of its own, so a team's
    reads wait on AWS's latency together. A service gets at most three of a team's layers in flight (EKS's access
    entries and Pod Identity).
  - The layers and their modules are O(permission_set) with M(hyperpod.tenancy.identity_center_permission_set),
    O(access_entry) with M(hyperpod.tenancy.eks_access_entry), O(execution_role) with M(hyperpod.tenancy.team_execution_role),
    O(studio_access_entry) with M(hyperpod.tenancy.eks_access_entry), O(domain) with M(hyperpod.tenancy.sagemaker_domain),
    O(quota) with M(hyperpod.tenancy.task_governance_quota),
    O(namespace) with M(hyperpod.tenancy.team_namespace),
    O(s3_prefix) with M(hyperpod.tenancy.s3_team_prefix), O(directories) with M(hyperpod.tenancy.fsx_team_dir) and
    O(budget) with M(hyperpod.tenancy.team_budget).
  - A module run spends most of a no-op's time on Python, AnsiballZ and boto3 before its first API
    call. The ten layers of a team in one run pay that once and share one client per service; the
    checks and API calls are those of the layers' modules.
  - Every layer's options are checked before any layer runs, against its module's options and by
    the checks its module makes without a call (names, patterns, amounts, addresses); bad input fails
    naming the team, the layer and the option, with nothing changed. What only AWS can tell (a
    missing cluster, an instance type it lacks) fails in the layer that asks.
  - A layer's O(team) defaults to O(team). The domain's C(execution_role) defaults to the ARN of the
    role O(execution_role) converged. When O(execution_role) has no C(domain_arn) and O(domain) returns one (a domain this
    run made, or one the caller did not know), the role is converged again with it once the domain exists (its
    C(team-studio) policy names the domain's id).
  - Builds and converges only (C(state=present)). Offboarding has an order and data choices of its
    own; C(playbooks/remove_team.yml) and the layers' modules do it.
  - When a layer fails, the layers that need it do not run, and the others run to their end; the failure names the
    first failed layer in the order above and reports every layer that converged in RV(layers) and their C(diff).
  - A layer's warnings start with its option name.
  - "A layer's options may also hold C(known): what M(hyperpod.tenancy.shared_info) read of the layer's resources earlier
    in the run (its RV(hyperpod.tenancy.shared_info#module:hyperpod_shared)), which the layer then takes instead of reading
    them again. The team roles hand it on (filter P(hyperpod.tenancy.team_layer_args#filter)); the layers' own modules do
    not take it. It only tells that nothing changes: before a write planned from it, the layer reads the resource again
    and plans again (never in check mode), and when another run wrote first, the layer converges again without it.
    Its keys, by layer: O(permission_set) C(permission_set) (as C(hyperpod_shared.permission_sets) holds it), C(absent)
    (shared_info described every permission set and none has the name) and C(outdated_permission_sets);
    O(access_entry) and O(studio_access_entry) C(access_entry) (as C(hyperpod_shared.access_entries) holds it) and
    C(principal_created) (the role's C(CreateDate)); O(execution_role) C(role) (C(hyperpod_shared.execution_roles));
    O(domain) C(user_profiles) and C(tags) (C(hyperpod_shared.user_profiles), C(hyperpod_shared.domain_tags));
    O(quota) C(tags) (by quota id) and C(listing) (the quota's id and what the cluster's other quotas guarantee);
    O(namespace) C(pod_identity) (C(hyperpod_shared.pod_identities)); O(s3_prefix) C(marker) (C(hyperpod_shared.s3_markers));
    O(budget) C(budget) (C(hyperpod_shared.budgets))."
  - With O(refused), fails before any layer runs, naming the team and every reason. The team roles pass what
    M(hyperpod.tenancy.shared_info) found (C(hyperpod_shared.team_problems)), so that a team it refuses changes nothing
    while the run's other teams converge.
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  team:
    description:
      - The team. Lower-case letters, digits and inner hyphens.
    type: str
    required: true
  refused:
    description:
      - "Why the team must not be converged (M(hyperpod.tenancy.shared_info)'s RV(hyperpod.tenancy.shared_info#module:hyperpod_shared.team_problems)
        of the team): a resource that is not the team's to change, the name or gid of a retired team whose data was kept."
      - When given, the module fails before any layer runs, naming the team and each reason.
    type: list
    elements: str
  notes:
    description:
      - What the layers' options stand in for, said as warnings before the layers run. In a dry run (check mode) on an account
        whose HyperPod cluster the run would create, the team roles pass that the cluster's ARN and capacity are predicted
        (filter P(hyperpod.tenancy.team_layer_args#filter)).
      - Given outside check mode, the module fails before any layer runs, so a stand-in never reaches a write.
    type: list
    elements: str
  permission_set:
    description: Options of M(hyperpod.tenancy.identity_center_permission_set) for the team's permission set.
    type: dict
  access_entry:
    description: Options of M(hyperpod.tenancy.eks_access_entry) for the team's kubectl access.
    type: dict
  execution_role:
    description: Options of M(hyperpod.tenancy.team_execution_role) for the team's Studio execution role.
    type: dict
  studio_access_entry:
    description:
      - Options of M(hyperpod.tenancy.eks_access_entry) for the kubectl access of the team's Studio execution role
        (O(hyperpod.tenancy.eks_access_entry#module:principal=execution_role)), after the role exists.
    type: dict
  domain:
    description: Options of M(hyperpod.tenancy.sagemaker_domain) for the team's SageMaker domain.
    type: dict
  quota:
    description: Options of M(hyperpod.tenancy.task_governance_quota) for the team's compute quota.
    type: dict
  namespace:
    description: Options of M(hyperpod.tenancy.team_namespace) for the team's objects in its Kubernetes namespace.
    type: dict
  s3_prefix:
    description: Options of M(hyperpod.tenancy.s3_team_prefix) for the team's prefix in the data bucket.
    type: dict
  directories:
    description: Options of M(hyperpod.tenancy.fsx_team_dir) for the team's directories on FSx.
    type: dict
  budget:
    description: Options of M(hyperpod.tenancy.team_budget) for the team's monthly budget.
    type: dict
notes:
  - Warnings and check mode are those of the layers' modules.
extends_documentation_fragment:
  - hyperpod.tenancy.attributes
  - hyperpod.tenancy.identity_center
  - hyperpod.tenancy.aws
"""

EXAMPLES = r"""
- name: Converge team vision's permission set, kubectl access, quota and budget
  hyperpod.tenancy.team_resources:
    team: vision
    permission_set:
      description: Team vision
      groups: [TeamVision]
      accounts: ["123456789012"]
      managed_policies: []
    access_entry:
      cluster_name: hyperpod-eks
      principal_arn: arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_hyperpod-vision_0123456789abcdef
      kubernetes_groups: [hyperpod-vision-users]
      access_policies:
        - name: AmazonSagemakerHyperpodTrainingPolicy
          access_scope: {type: namespace, namespaces: [hyperpod-ns-vision]}
    quota:
      cluster: hyperpod-cluster
      resources:
        - instance_type: ml.p5.48xlarge
          count: 2
    budget:
      monthly_usd: 25000
      notify: [ml-platform@example.com]
  register: vision

- name: Show the quota's status
  ansible.builtin.debug:
    msg: "{{ vision.layers.quota.quota.status }}"
"""

RETURN = r"""
layers:
  description:
    - The result of each layer that ran, by option name, as its module returns it (without C(diff)),
      with its own C(changed).
    - On failure, the layers that converged (all but the failed ones and those that need them).
  returned: always
  type: dict
  sample:
    quota:
      changed: false
      quota: {compute_quota_id: q-0123456789ab, status: Created}
      namespace: hyperpod-ns-vision
      local_queue: hyperpod-ns-vision-localqueue
    budget:
      changed: true
      budget: {budget_name: hyperpod-vision-monthly}
summary:
  description:
    - The team's row of the summary table C(playbooks/summary.yml) prints, from what the layers returned (C(-) for what
      a layer did not return).
  returned: success
  type: dict
  sample: {team: vision, namespace: hyperpod-ns-vision, permission_set: hyperpod-vision, domain_id: d-0123456789ab, user_profiles: 3,
           quota: "4 x ml.p5.48xlarge", quota_status: Created, budget_usd: "40000.0", service_account: hyperpod-vision,
           kubernetes_role: hyperpod-ns-vision-namespace-role, volume: hyperpod-vision-fsx}
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import ModuleFailure, run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import IDENTITY_CENTER, options
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_resources import (
    LAYERS,
    converge_team,
    failure_message,
    layers_changed,
    team_summary,
    validated_layers,
)

MODULE_OPTIONS = options(
    dict(team=dict(type="str", required=True), refused=dict(type="list", elements="str"), notes=dict(type="list", elements="str")),
    dict((layer.option, dict(type="dict")) for layer in LAYERS),
    IDENTITY_CENTER,
)


def converge(context, params):
    team, layers, done, diff = params["team"], [], {}, {"before": {}, "after": {}}
    if params["refused"]:
        # Refused by shared_info before the run's first write: nothing of this team is read or changed; the other teams go on.
        raise ModuleFailure(
            "team %r is refused, nothing of it was changed: %s" % (team, "; ".join(params["refused"])),
            problems=["team %r: %s" % (team, problem) for problem in params["refused"]], layers={}, changed=False,
        )
    if params["notes"] and not context.module.check_mode:
        # What a dry run stands in for (a cluster not made yet) is for predicting, never for writing to AWS.
        raise ModuleFailure(
            "team %r: options that stand in for what a dry run predicts reached a run that writes, nothing was changed: %s"
            % (team, "; ".join(params["notes"])), layers={}, changed=False,
        )
    for note in params["notes"] or []:
        # What the options stand in for (a dry run's cluster that does not exist yet): said, so a prediction is not taken for a read.
        context.warn("team %r: %s" % (team, note))
    try:
        layers = validated_layers(team, params, context.module.no_log_values)
        converge_team(context, layers, done, diff)
    except (HyperPodError, OSError) as e:
        # What the layers that converged did is returned with the failure.
        extra = dict(errno=e.errno) if isinstance(e, OSError) else {}
        raise ModuleFailure(
            failure_message(team, layers, done, e), exception=getattr(e, "exception", None), layers=done, diff=diff, changed=layers_changed(done), **extra
        )
    return dict(changed=layers_changed(done), layers=done, summary=team_summary(done, team), diff=diff)


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
