# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""One team's layers converged in one process: the same ``converge`` as each layer's module, in order.

A module run costs Python, AnsiballZ and boto3 before the first API call; a team's eight layers
in one run pay that once, and share one client per service.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple
from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.errors import UnsupportedError

from ansible_collections.hyperpod.tenancy.plugins.module_utils import (
    access_entry,
    budget,
    data_repository,
    domain,
    execution_role,
    naming,
    permission_set,
    quota,
    team_dirs,
    team_namespace,
)
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError, InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import converge_past_a_lost_race, os_error_message

# A layer: its option of team_resources, the module it stands for, that module's options, its check and converge, and
# what shared_info may hand it (the layer's ``known``, which its module does not take: the spec of each key).
Layer = namedtuple("Layer", ["option", "module", "options", "check", "converge", "known"])

# In the order a team is built: the access entry names the permission set's role, the domain runs as the execution role,
# the namespace layer adds to what the quota's Task Governance makes.
LAYERS = tuple(Layer(*layer) for layer in (
    ("permission_set", "identity_center_permission_set", permission_set.MODULE_OPTIONS, permission_set.check, permission_set.converge, permission_set.KNOWN),
    ("access_entry", "eks_access_entry", access_entry.MODULE_OPTIONS, access_entry.check, access_entry.converge, access_entry.KNOWN),
    ("execution_role", "team_execution_role", execution_role.MODULE_OPTIONS, execution_role.check, execution_role.converge, execution_role.KNOWN),
    # Studio reaches the cluster as the execution role: its access entry once the role exists.
    ("studio_access_entry", "eks_access_entry", access_entry.MODULE_OPTIONS, access_entry.check, access_entry.converge, access_entry.KNOWN),
    ("domain", "sagemaker_domain", domain.MODULE_OPTIONS, domain.check, domain.converge, domain.KNOWN),
    ("quota", "task_governance_quota", quota.MODULE_OPTIONS, quota.check, quota.converge, quota.KNOWN),
    # In the namespace the quota's Task Governance makes.
    ("namespace", "team_namespace", team_namespace.MODULE_OPTIONS, team_namespace.check, team_namespace.converge, team_namespace.KNOWN),
    ("s3_prefix", "s3_team_prefix", data_repository.PREFIX_MODULE_OPTIONS, data_repository.check_prefix, data_repository.converge_prefix,
     data_repository.KNOWN),
    ("directories", "fsx_team_dir", team_dirs.MODULE_OPTIONS, team_dirs.check, team_dirs.converge, {}),
    ("budget", "team_budget", budget.MODULE_OPTIONS, budget.check, budget.converge, budget.KNOWN),
))
# The layer each layer needs converged before it starts (what the comments above say); the others need none, and
# converge at once, each in a thread of its own, so a team's independent reads wait on AWS's latency together.
AFTER = {
    "access_entry": "permission_set",
    "studio_access_entry": "execution_role",
    "domain": "execution_role",
    "namespace": "quota",
}


def _with_team(options, given, team):
    """``given`` with ``team`` filled in where the layer takes it and nothing given excludes it."""
    params = dict(given)
    if "team" not in options["argument_spec"] or params.get("team") is not None:
        return params
    for exclusive in options.get("mutually_exclusive", ()):
        if "team" in exclusive and any(params.get(other) is not None for other in exclusive if other != "team"):
            return params
    params["team"] = team
    return params


def _no_log_values(checked):
    """The values a layer's argument spec marks ``no_log``, which the module masks in its output as a layer's own module would.

    ansible-core has no public accessor: ``ValidationResult._no_log_values`` (documented in its class; 2.11 to 2.21).
    Without it a layer's secret could reach the output: the run fails instead (docs/development.md, "ansible-core versions").
    """
    values = getattr(checked, "_no_log_values", None)
    if values is None:  # pragma: no cover - every proven ansible-core has it
        raise HyperPodError(message="this ansible-core's ArgumentSpecValidator names no no_log values (ValidationResult._no_log_values): "
                                    "team_resources cannot mask its layers' secrets; run each layer's module instead")
    return values


def with_known(layer):
    """The layer's module options and ``known``, what shared_info hands the layer (the module itself does not take it)."""
    if not layer.known:
        return layer.options
    return dict(layer.options, argument_spec=dict(layer.options["argument_spec"], known=dict(type="dict", options=layer.known)))


def validated_layers(team, given, no_log_values):
    """Every given layer's parameters, checked against its module's options and by its ``check`` before any layer runs.

    Returns ``[(option, converge, params)]`` in build order; raises ``InputError`` naming the team,
    the layer and every problem found.
    """
    layers, problems = [], []
    for layer in LAYERS:
        option = layer.option
        if given.get(option) is None:
            continue
        params = _with_team(layer.options, given[option], team)
        checked = ArgumentSpecValidator(**with_known(layer)).validate(params)
        no_log_values.update(_no_log_values(checked))
        problems.extend(
            # An unsupported option's message is only its name; basic.py puts the words in front of it.
            "%s (options of %s): %s%s" % (option, layer.module, "unsupported parameters " if isinstance(error, UnsupportedError) else "", error)
            for error in checked.errors
        )
        if not checked.error_messages:
            if checked.validated_parameters["state"] != "present":
                problems.append("%s: team_resources only builds and converges; offboard with the layer's module or remove_team.yml" % option)
            elif checked.validated_parameters.get("team") not in (None, team):
                problems.append("%s: team is %r, not the team being converged (%r)" % (option, checked.validated_parameters["team"], team))
            else:
                try:
                    layer.check(checked.validated_parameters)
                except InputError as e:
                    problems.append("%s: %s" % (option, e.message))
            layers.append((option, layer.converge, checked.validated_parameters))
    if problems:
        raise InputError(message="team %r: %s" % (team, "; ".join(problems)))
    return layers


def converge_team(context, layers, done, diff):
    """Converge ``layers``, each once the layer it needs (``AFTER``) has converged, the others at once; put each
    layer's result in ``done`` and its before/after in ``diff``, in build order.

    A layer whose needed layer failed does not run; the others run to their end. Then the first error in build order
    is raised, with ``done`` and ``diff`` holding what every layer that converged did.
    """
    options = [layer[0] for layer in layers]
    if len(layers) < 2:
        outcomes = [_converge_layer(context, option, converge, params, None) for option, converge, params in layers]
    else:
        futures = {}
        # One thread per layer: a layer waiting for the one it needs never holds the thread that one runs in.
        with ThreadPoolExecutor(max_workers=len(layers)) as pool:
            for option, converge, params in layers:  # in build order: the layer a layer needs is submitted first
                futures[option] = pool.submit(_converge_layer, context, option, converge, params, futures.get(AFTER.get(option)))
        outcomes = [futures[option].result() for option in options]
    for option, outcome in zip(options, outcomes):
        if outcome[0] is not None:
            diff["before"][option], diff["after"][option] = outcome[1].get("before"), outcome[1].get("after")
            done[option] = outcome[0]
    error = next((outcome[2] for outcome in outcomes if outcome[2] is not None and outcome[2] is not _NOT_RUN), None)
    if error is None:
        error = _studio_policy_of_the_domain(context, dict((layer[0], layer[1:]) for layer in layers), done, diff)
    if error is not None:
        raise error


def _studio_policy_of_the_domain(context, layers, done, diff):
    """The execution role converged again with the ARN of the domain the domain layer returned, when the role was given none;
    the error it raised, or None.

    The role's ``team-studio`` policy names the domain's id (execution_role.studio_policy), and the domain runs as the role:
    on the run that makes the domain, the role is converged before the id exists (and without ``domain_arn`` the first pass
    leaves the policy as it is). Without this second pass Studio could not make a space until the next run. When the
    caller knew the domain (shared_info's ``domain_ids``) there is no second pass.
    """
    converge, role_params = layers.get("execution_role") or (None, None)
    domain = (done.get("domain") or {}).get("domain") or {}
    domain_arn = domain.get("domain_arn")
    if role_params is None or role_params.get("domain_arn") or "execution_role" not in done:
        return None
    if not domain_arn:
        if context.check_mode and done.get("domain", {}).get("changed"):
            # A dry run cannot name the id AWS will give the new domain, so it cannot show the policy either: say so.
            context.warn(
                "team %s: the execution role's %s policy, which names the team's domain, is written once the domain exists; "
                "this dry run does not show it" % (role_params.get("team"), execution_role.STUDIO_POLICY)
            )
        return None
    # The role the first pass wrote: read it again, not the copy shared_info read before the run's writes.
    again = dict(role_params, domain_arn=domain_arn, known=None)
    result, layer_diff, error = _converge_layer(context, "execution_role", converge, again, None)
    if error is not None:
        return error
    done["execution_role"] = dict(result, changed=done["execution_role"]["changed"] or result["changed"])
    diff["after"]["execution_role"] = layer_diff.get("after")
    return None


# What a layer whose needed layer failed reports instead of an error of its own.
_NOT_RUN = object()


def _converge_layer(context, option, converge, params, needed):
    """(result, diff, None) of one layer, or (None, None, the error it raised, or _NOT_RUN)."""
    if needed is not None:
        needed_result, unused_diff, needed_error = needed.result()
        if needed_error is not None:
            return None, None, _NOT_RUN
        if option == "domain" and params.get("execution_role") is None:
            # The role the run just converged: its ARN is known (predicted in check mode) only now.
            params = dict(params, execution_role=needed_result["role"].get("arn"))
    context.layer = option
    try:
        result = converge_past_a_lost_race(converge, context, params)
    except (HyperPodError, OSError) as e:
        return None, None, e
    finally:
        context.layer = None
    return result, result.pop("diff", {}), None


def layers_changed(done):
    return any(result["changed"] for result in done.values())


def team_summary(layers, team_name):
    """One team's row of the summary table, from what each layer returned."""
    quota_found = (layers.get("quota") or {}).get("quota") or {}
    resources = (quota_found.get("compute_quota_config") or {}).get("compute_quota_resources") or []
    domain_found = (layers.get("domain") or {}).get("domain") or {}
    budget_found = (layers.get("budget") or {}).get("budget") or {}
    kube = (layers.get("namespace") or {}).get("namespace") or {}
    return {
        "team": team_name,
        "namespace": naming.namespace(team_name),
        "permission_set": ((layers.get("permission_set") or {}).get("permission_set") or {}).get("name", "-"),
        "domain_id": domain_found.get("domain_id", "-"),
        "user_profiles": len(domain_found.get("user_profiles") or []),
        "quota": ", ".join("%s x %s" % (resource.get("count"), resource["instance_type"]) for resource in resources) or "-",
        "quota_status": quota_found.get("status", "-"),
        "budget_usd": (budget_found.get("budget_limit") or {}).get("amount", "-"),
        "service_account": kube.get("service_account") or "-",
        "kubernetes_role": kube.get("role") or "-",
        "volume": kube.get("volume") or "-",
        "queue": kube.get("queue") or "-",
        "priorities": (", ".join(kube["priority_classes"]) or "none") if "priority_classes" in kube else "-",
    }


def failure_message(team, layers, done, error):
    """What a failed run says: the team, the layer that failed (none when the input was refused), and why."""
    failed = next(((option, params) for option, _converge, params in layers if option not in done), None)
    reason = os_error_message(error, failed[1].get("root") if failed else None) if isinstance(error, OSError) else error.message
    return "team %r, %s: %s" % (team, failed[0], reason) if failed else reason
