"""IAM SimulatePrincipalPolicy, which moto 5.2.5 lacks, with the evaluation the sandbox enforces.

SimulatePrincipalPolicy evaluates the identity-based policies of a user, group or role (inline and
attached), its permissions boundary, the optional ``PolicyInputList`` and
``PermissionsBoundaryPolicyInputList``, and a ``ResourcePolicy`` given in the request, against
``ActionNames`` x ``ResourceArns`` (``*`` when none are given) and the ``ContextEntries`` the caller
supplies: the simulator, like AWS's, reads no resource tags itself ("The simulation does not
automatically retrieve policies for the specified resources", SimulatePrincipalPolicy API reference).
Keys a matching statement's condition uses but the request lacks are listed in ``MissingContextValues``.
"""

from __future__ import annotations

import moto.iam.responses
from moto.core.responses import ActionResult

from sandbox import authorization
from sandbox.authorization import iam_evaluation
from sandbox.core import graft, validate_request

_CONTEXT_TYPES = {"boolean": lambda v: v.lower() == "true"}


def _context(entries: list) -> dict:
    context = {}
    for entry in entries:
        values = entry.get("ContextKeyValues") or []
        kind = entry.get("ContextKeyType", "string")
        convert = _CONTEXT_TYPES.get(kind.replace("List", ""), str)
        converted = [convert(v) for v in values]
        context[entry["ContextKeyName"]] = converted if kind.endswith("List") else (converted[0] if converted else "")
    return context


def _condition_keys(document) -> set:
    keys = set()
    for statement in iam_evaluation.load(document).get("Statement", []) if document else []:
        for block in (statement.get("Condition") or {}).values():
            keys.update(block)
    return keys


def simulate(account_id: str, params: dict) -> dict:
    iam = authorization._iam(account_id)
    source = params["PolicySourceArn"]
    extra = [(f"PolicyInputList.{i + 1}", p) for i, p in enumerate(params.get("PolicyInputList") or [])]
    boundaries = params.get("PermissionsBoundaryPolicyInputList") or []
    kind = source.split(":", 5)[5].split("/", 1)[0]
    if kind == "role":
        role = iam.get_role_by_arn(source)
        policies = authorization._role_policies(iam, role)
        boundary = boundaries[0] if boundaries else authorization._boundary(iam, role.permissions_boundary_arn)
        principal = iam_evaluation.Principal(account_id, policies + extra, role_arn=role.arn, boundary=boundary, tags={t["Key"]: t["Value"] for t in role.tags})
    elif kind == "user":
        user = iam.get_user(source.rsplit("/", 1)[-1])
        policies = list(user.policies.items()) + [(arn, authorization._policy_document(p)) for arn, p in user.managed_policies.items()]
        principal = iam_evaluation.Principal(account_id, policies + extra, user_arn=user.arn, boundary=boundaries[0] if boundaries else None)
    else:
        group = iam.get_group(source.rsplit("/", 1)[-1])
        policies = list(group.policies.items()) + [(arn, authorization._policy_document(p)) for arn, p in group.managed_policies.items()]
        principal = iam_evaluation.Principal(account_id, policies + extra, user_arn=group.arn)
    context = _context(params.get("ContextEntries") or [])
    resources = params.get("ResourceArns") or ["*"]
    results = []
    for action in params["ActionNames"]:
        each = []
        for resource in resources:
            result = iam_evaluation.evaluate(principal, action, resource, context, params.get("ResourcePolicy"))
            used = set()
            for policy_id, document in principal.identity_policies:
                if any(m["SourcePolicyId"] == policy_id for m in result["MatchedStatements"]) or result["EvalDecision"] != "allowed":
                    used |= _condition_keys(document)
            missing = sorted(k for k in used if iam_evaluation.lookup(dict(principal.context(), **context), k) is None)
            result["MatchedStatements"] = [{k: v for k, v in m.items() if k in ("SourcePolicyId", "SourcePolicyType")} for m in result["MatchedStatements"]]
            result["MissingContextValues"] = missing
            each.append(result)
        results.append(_per_action(action, each, bool(params.get("ResourceArns"))))
    return _page(results, params)


# "The simulator now returns a single EvaluationResult per action, regardless of how many resource ARNs are
# provided ... The top-level EvalDecision reflects the most restrictive decision across all resources"; each
# resource's decision is in ResourceSpecificResults (EvaluationResult, IAM API Reference).
_RESTRICTIVE = {"explicitDeny": 0, "implicitDeny": 1, "allowed": 2}


def _per_action(action: str, each: list, named: bool) -> dict:
    worst = min(each, key=lambda r: _RESTRICTIVE[r["EvalDecision"]])
    result = {
        "EvalActionName": action,
        "EvalDecision": worst["EvalDecision"],
        "MatchedStatements": [m for r in each for m in r["MatchedStatements"]],
        "MissingContextValues": sorted({k for r in each for k in r["MissingContextValues"]}),
    }
    if len(each) == 1:
        result["EvalResourceName"] = each[0]["EvalResourceName"]
    if named:
        result["ResourceSpecificResults"] = [
            {
                "EvalResourceName": r["EvalResourceName"],
                "EvalResourceDecision": r["EvalDecision"],
                "MatchedStatements": r["MatchedStatements"],
                "MissingContextValues": r["MissingContextValues"],
            }
            for r in each
        ]
    return result


def _page(results: list, params: dict) -> dict:
    """One page of MaxItems results (100 when not given, as AWS pages), continued from Marker."""
    start = int(params.get("Marker") or 0)
    size = int(params.get("MaxItems") or 100)
    page = results[start : start + size]
    if start + size < len(results):
        return {"EvaluationResults": page, "IsTruncated": True, "Marker": str(start + size)}
    return {"EvaluationResults": page, "IsTruncated": False}


class SimulationResponse:
    def simulate_principal_policy(self) -> ActionResult:
        params = self._get_params()
        validate_request("iam", "SimulatePrincipalPolicy", params)
        return ActionResult(simulate(self.current_account, params))


def install() -> None:
    graft(moto.iam.responses.IamResponse, SimulationResponse)
