"""IAM Access Analyzer CheckAccessNotGranted, which moto 5.2.5 lacks (it has no Access Analyzer at all).

``POST /policy/check-access-not-granted`` (rest-json, signing name ``access-analyzer``) answers PASS or
FAIL with the statements that may grant the access (``iam_evaluation.access_granting_statements``:
conditions are assumed met by some request, as Access Analyzer reasons about every request). The
sandbox's server routes the path here before moto, which would not know the service.
"""

from __future__ import annotations

import json
import re

from sandbox import core
from sandbox.authorization import iam_evaluation

PATH = "/policy/check-access-not-granted"
_WILDCARD = re.compile(r"[*?]")


def _error(code: str, message: str, status: str = "400 Bad Request"):
    body = json.dumps({"message": message}).encode()
    return status, [("Content-Type", "application/json"), ("x-amzn-ErrorType", code)], body


# An injected fault (``server.Faults``) as Access Analyzer answers it: its own codes and statuses (CheckAccessNotGranted's
# errors in botocore's accessanalyzer model: ThrottlingException 429, InternalServerException 500, AccessDeniedException 403).
FAULTS = {
    "throttle": ("ThrottlingException", "429 Too Many Requests", "Rate exceeded"),
    "error": ("InternalServerException", "500 Internal Server Error", "Internal server error"),
    "deny": ("AccessDeniedException", "403 Forbidden", "User: sandbox is not authorized to perform: access-analyzer:CheckAccessNotGranted"),
}


def fault(kind: str):
    """(status, headers, body) of an injected fault: ``"throttle"``, ``"error"`` or ``"deny"``."""
    code, status, message = FAULTS[kind]
    return _error(code, message, status)


# An access's resources are "Any strings that can be used as an Amazon Resource Name (ARN) in an IAM policy ... You can
# only use a wildcard in the portion of the ARN that specifies the resource ID", while its actions are "Any strings that
# can be used as an action in an IAM policy", wildcards included (Access, IAM Access Analyzer API Reference). So a
# resource with a wildcard in its partition, service, Region or account, or one that is a wildcard and no ARN ("*"), is
# refused. The error is not documented: ValidationException, one of the operation's, and its message are assumptions.
# Where a resource type ends and the ID begins depends on the service (arn:aws:s3:::bucket/key has no type), so a
# wildcard in the type is let through: an assumption, the lenient one.
def _misplaced_wildcard(resource: str) -> bool:
    fields = resource.split(":", 5)
    if len(fields) < 6 or fields[0] != "arn":
        return bool(_WILDCARD.search(resource))
    return any(_WILDCARD.search(field) for field in fields[1:5])


def check_access_not_granted(params: dict) -> dict:
    core.validate_request("accessanalyzer", "CheckAccessNotGranted", params)
    access = params["access"][0] if params["access"] else {}
    for resource in access.get("resources") or []:
        if _misplaced_wildcard(resource):
            raise core.AwsError("ValidationException", f"Invalid resource {resource}: a wildcard is allowed only in the resource ID of an ARN")
    try:
        document = json.loads(params["policyDocument"])
        indexes = iam_evaluation.access_granting_statements(document, access.get("actions") or [], access.get("resources") or [])
    except (ValueError, iam_evaluation.PolicyError) as error:
        raise core.AwsError("ValidationException", f"Invalid policy document: {error}") from None
    if not indexes:
        return {"result": "PASS", "message": "The policy document does not grant access to perform the listed actions or resources.", "reasons": []}
    statements = iam_evaluation.as_list(document.get("Statement"))
    reasons = []
    for index in indexes:
        reason = {"description": f"One or more of the listed actions or resources in the statement with index: {index}.", "statementIndex": index}
        if statements[index].get("Sid"):
            reason["statementId"] = statements[index]["Sid"]
        reasons.append(reason)
    return {"result": "FAIL", "message": "The policy document grants access to perform one or more of the listed actions or resources.", "reasons": reasons}


def handle(environ: dict, body: bytes):
    """(status, headers, body) of a CheckAccessNotGranted request."""
    try:
        params = json.loads(body or b"{}")
    except ValueError:
        return _error("ValidationException", "The request body is not valid JSON")
    try:
        result = check_access_not_granted(params if isinstance(params, dict) else {})
    except core.AwsError as error:
        return _error(error.error_type, json.loads(error.description)["message"])
    payload = json.dumps(result).encode()
    return "200 OK", [("Content-Type", "application/json")], payload
