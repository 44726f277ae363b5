# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""One team's layers converged in one process: the same ``converge`` as each layer's module, in order.

A module run costs Python, AnsiballZ and boto3 before the first API call; a team's eight layers
in one run pay that once, and share one client per service.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.errors import UnsupportedError

from ansible_collections.hyperpod.tenancy.plugins.module_utils import (
    access_entry,
    budget,
    data_repository,
    domain,
    execution_role,
    permission_set,
    quota,
    team_dirs,
)
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError

# (option, the module it stands for, its module options, its converge), in the order a team is built:
# the access entry names the permission set's role, the domain runs as the execution role.
LAYERS = (
    ("permission_set", "identity_center_permission_set", permission_set.MODULE_OPTIONS, permission_set.converge),
    ("access_entry", "eks_access_entry", access_entry.MODULE_OPTIONS, access_entry.converge),
    ("execution_role", "team_execution_role", execution_role.MODULE_OPTIONS, execution_role.converge),
    ("domain", "sagemaker_domain", domain.MODULE_OPTIONS, domain.converge),
    ("quota", "task_governance_quota", quota.MODULE_OPTIONS, quota.converge),
    ("s3_prefix", "s3_team_prefix", data_repository.PREFIX_MODULE_OPTIONS, data_repository.converge_prefix),
    ("directories", "fsx_team_dir", team_dirs.MODULE_OPTIONS, team_dirs.converge),
    ("budget", "team_budget", budget.MODULE_OPTIONS, budget.converge),
)


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


def validated_layers(team, given, no_log_values):
    """Every given layer's parameters, checked against its module's options before any layer runs.

    Returns ``[(option, converge, params)]`` in build order; raises ``InputError`` naming the team,
    the layer and every problem found.
    """
    layers, problems = [], []
    for option, module_name, options, converge in LAYERS:
        if given.get(option) is None:
            continue
        params = _with_team(options, given[option], team)
        checked = ArgumentSpecValidator(**options).validate(params)
        no_log_values.update(checked._no_log_values)
        problems.extend(
            # An unsupported option's message is only its name; basic.py puts the words in front of it.
            "%s (options of %s): %s%s" % (option, module_name, "unsupported parameters " if isinstance(error, UnsupportedError) else "", error)
            for error in checked.errors
        )
        if not checked.error_messages:
            if checked.validated_parameters["state"] != "present":
                problems.append("%s: team_resources only builds and converges; offboard with the layer's module or remove_team.yml" % option)
            elif checked.validated_parameters.get("team") not in (None, team):
                problems.append("%s: team is %r, not the team being converged (%r)" % (option, checked.validated_parameters["team"], team))
            layers.append((option, converge, checked.validated_parameters))
    if problems:
        raise InputError(message="team %r: %s" % (team, "; ".join(problems)))
    return layers


def converge_team(context, team, layers, done):
    """Converge ``layers`` in order; each layer's result is put in ``done`` as soon as it is known.

    ``done`` is filled as the layers run, so that a failure can still report what changed before it.
    Returns ``(changed, diff)``.
    """
    changed, before, after = False, {}, {}
    for option, converge, params in layers:
        if option == "domain" and params.get("execution_role") is None and "execution_role" in done:
            # The role the run just converged: its ARN is known (predicted in check mode) only now.
            params = dict(params, execution_role=done["execution_role"]["role"].get("arn"))
        result = converge(context, params)
        diff = result.pop("diff", {})
        before[option], after[option] = diff.get("before"), diff.get("after")
        done[option] = result
        changed = changed or result["changed"]
    return changed, {"before": before, "after": after}
