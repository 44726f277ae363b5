"""IAM SimulatePrincipalPolicy, which moto 5.2.5 lacks, with the evaluation the sandbox enforces.

SimulatePrincipalPolicy evaluates the identity-based policies of a user, group or role (inline and
attached), its permissions boundary, the optional ``PolicyInputList`` and
``PermissionsBoundaryPolicyInputList``, and a ``ResourcePolicy`` given in the request, against
``ActionNames`` x ``ResourceArns`` (``*`` when none are given) and the ``ContextEntries`` the caller
supplies: the simulator, like AWS's, reads no resource tags itself ("The simulation does not
automatically retrieve policies for the specified resources", SimulatePrincipalPolicy API reference).

Nor does it fill any condition key from the principal. The IAM API reference has the caller supply them:
"Use GetContextKeysForPrincipalPolicy to understand what key names and values you must supply when you call
SimulatePrincipalPolicy" (GetContextKeysForPrincipalPolicy), ContextEntries are "A list of context keys and
corresponding values for the simulation to use"; and the user guide ("Testing IAM policies with the IAM policy
simulator", access_policies_testing-policies.html): "The policy simulator doesn't consider real context key
values in production", "If you don't provide a value for a context key, the simulation still runs. But the
results might not be reliable because the policy simulator cannot include that context key in the evaluation."
No page says the simulator sets ``aws:PrincipalArn``, ``aws:PrincipalTag/*``, ``aws:username`` or ``aws:userid``
from the PolicySourceArn by itself: that it sets none is an assumption, the stricter one for the collection
(a key the collection does not pass is reported missing rather than silently given the value the collection
expects).

``MissingContextValues`` lists the keys, as the policies spell them, that a statement which may apply to the
action and resource (its Action covers the action, its Resource may cover the resource) uses in its Condition
or names as a policy variable, and that the request lacks: "A list of context keys that are required by the
included input policies but that were not provided by one of the input parameters" (EvaluationResult). Which
statements count is not documented; every statement that may apply to the pair counts (an assumption, the
stricter one). The list is on the EvaluationResult when the resource is ``*`` and on each
ResourceSpecificResult otherwise: "This list is used when the resource in a simulation is "*" ... If you
include a list of resources, then any missing context values are instead included under the
ResourceSpecificResults section" (EvaluationResult, IAM API reference).
"""

from __future__ import annotations

import copy

import moto.iam.responses
from moto.core.responses import ActionResult

from sandbox import authorization
from sandbox.authorization import iam_evaluation
from sandbox.core import graft, validate_request
from sandbox.services import sts_identity

# The AWS managed policy AdministratorAccess's document.
ADMINISTRATOR_ACCESS = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
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


class _SimulatedPrincipal(iam_evaluation.Principal):
    """The PolicySourceArn's policies, evaluated with the ContextEntries only: the simulator sets no principal key."""

    def context(self):
        return {}


def _variables(values) -> list:
    """The context keys a policy value names as variables (``${aws:PrincipalTag/team, 'x'}`` names aws:PrincipalTag/team)."""
    found = []
    for value in iam_evaluation.as_list(values):
        for inner in iam_evaluation._VARIABLE.findall(iam_evaluation.policy_value_text(value)):
            if inner.strip() not in ("*", "?", "$"):
                found.append(inner.split(",", 1)[0].strip())
    return found


def _may_cover(statement: dict, resource: str) -> bool:
    """Whether the statement's Resource may cover ``resource`` whatever its variables resolve to (NotResource: may)."""
    if resource == "*" or "Resource" not in statement:
        return True
    patterns = [iam_evaluation._VARIABLE.sub("*", p) for p in iam_evaluation.as_list(statement["Resource"])]
    return any(iam_evaluation.arn_matches(p, resource) for p in patterns)


def _keys_used(documents: list, action: str, resource: str) -> list:
    """The condition keys and variables of the statements that may apply to (action, resource), first spelling kept."""
    keys = {}
    for document in documents:
        for statement in iam_evaluation.policy_statements(document) if document else []:
            if not iam_evaluation.action_applies(statement, action) or not _may_cover(statement, resource):
                continue
            named = _variables(statement.get("Resource")) + _variables(statement.get("NotResource"))
            for block in (statement.get("Condition") or {}).values():
                for key, values in block.items():
                    named += [key] + _variables(values)
            for key in named:
                keys.setdefault(key.lower(), key)
    return list(keys.values())


def _naming(document, action: str):
    """``document`` (parsed) with only its statements whose Action names ``action``: the others apply to no request for it.
    Every statement is checked first, as the evaluation of each request would check it."""
    if not document:
        return document
    statements = iam_evaluation.policy_statements(document)
    for statement in statements:
        iam_evaluation.check_statement(statement)
    return dict(document, Statement=[statement for statement in statements if iam_evaluation.action_applies(statement, action)])


def _for_action(principal, action: str):
    """The principal with each of its policies narrowed to the statements naming ``action`` (``_naming``)."""
    narrowed = copy.copy(principal)
    narrowed.identity_policies = [(policy_id, _naming(document, action)) for policy_id, document in principal.identity_policies]
    narrowed.boundary = _naming(principal.boundary, action)
    return narrowed


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
        principal = _SimulatedPrincipal(account_id, policies + extra, role_arn=role.arn, boundary=boundary)
    elif kind == "user" and source.rsplit("/", 1)[-1] == sts_identity.SANDBOX_USER and sts_identity.SANDBOX_USER not in iam.users:
        # The sandbox's own keys, which it authorizes for everything (sandbox/authorization.py), as AWS would an IAM user
        # with the AWS managed policy AdministratorAccess: simulated so.
        principal = _SimulatedPrincipal(account_id, [("AdministratorAccess", ADMINISTRATOR_ACCESS)] + extra, user_arn=source,
                                        boundary=boundaries[0] if boundaries else None)
    elif kind == "user":
        user = iam.get_user(source.rsplit("/", 1)[-1])
        # Its groups' policies and its boundary too, as IAM evaluates the user's requests (sandbox/authorization.py).
        policies, boundary = authorization.user_policies(iam, user)
        principal = _SimulatedPrincipal(account_id, policies + extra, user_arn=user.arn, boundary=boundaries[0] if boundaries else boundary)
    else:
        group = iam.get_group(source.rsplit("/", 1)[-1])
        policies = list(group.policies.items()) + [(arn, authorization._policy_document(p)) for arn, p in group.managed_policies.items()]
        principal = _SimulatedPrincipal(account_id, policies + extra, user_arn=group.arn)
    context = _context(params.get("ContextEntries") or [])
    resources = params.get("ResourceArns") or ["*"]
    # Each policy parsed once, and each action evaluated against the statements naming it (which are all that can apply
    # to a request for it): a call asks up to 50 actions of up to 100 resources.
    principal.identity_policies = [(policy_id, iam_evaluation.load(document)) for policy_id, document in principal.identity_policies]
    principal.boundary = iam_evaluation.load(principal.boundary) if principal.boundary else principal.boundary
    resource_policy = iam_evaluation.load(params["ResourcePolicy"]) if params.get("ResourcePolicy") else None
    results = []
    for action in params["ActionNames"]:
        narrowed = _for_action(principal, action)
        named = _naming(resource_policy, action)
        documents = [document for unused_id, document in narrowed.identity_policies] + [narrowed.boundary, named]
        each = []
        for resource in resources:
            result = iam_evaluation.evaluate(narrowed, action, resource, context, named)
            missing = sorted(k for k in _keys_used(documents, action, resource) if iam_evaluation.lookup(context, k) is None)
            result["MatchedStatements"] = [{k: v for k, v in m.items() if k in ("SourcePolicyId", "SourcePolicyType")} for m in result["MatchedStatements"]]
            result["MissingContextValues"] = missing
            each.append(result)
        # "*" given explicitly is the blank ResourceArns' "*": "the resource in a simulation is "*", either explicitly, or
        # when the ResourceArns parameter blank" (EvaluationResult's MissingContextValues).
        results.append(_per_action(action, each, resources != ["*"]))
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
        # Named resources carry their missing keys in ResourceSpecificResults "instead" (EvaluationResult).
        "MissingContextValues": [] if named else sorted({k for r in each for k in r["MissingContextValues"]}),
    }
    # "*" for "*" as AWS answers; the newest model makes it "The ARN template for the simulated resource type", which the
    # sandbox does not know: one named resource keeps its ARN, several none (the docs are silent: an assumption).
    if len(each) == 1:
        result["EvalResourceName"] = each[0]["EvalResourceName"]
    if named:
        # The simulation is of one account's policies (the sandbox's evaluation knows no other): "If the simulation
        # evaluates policies within the same account and includes a resource ARN, then the parameter is present but the
        # response is empty. If the simulation ... specifies all resources (*), then the parameter is not returned"; nor
        # is it on a ResourceSpecificResult, where it "is returned only for cross-account simulations" (EvaluationResult,
        # ResourceSpecificResult, IAM API Reference).
        result["EvalDecisionDetails"] = {}
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
