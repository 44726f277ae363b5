"""GetCallerIdentity for the sandbox's own credentials, as AWS answers for an IAM user.

moto answers requests signed with keys it did not issue as ``arn:aws:sts::<account>:user/moto``,
an ARN AWS never gives (an IAM user is ``arn:aws:iam::<account>:user/<name>``, an assumed role
``arn:aws:sts::<account>:assumed-role/<role>/<session>``: "GetCallerIdentity", AWS STS API
Reference). The sandbox's keys belong to the IAM user ``sandbox``, whose unique id (``AIDA`` and
17 characters, "IAM identifiers", IAM User Guide) is the one SageMaker records as the creator
(``CreatedBy.IamIdentity``) of what the sandbox makes. Keys moto issued (AssumeRole, IAM access
keys) keep moto's answers, which already follow AWS.
"""

from __future__ import annotations

import json

import moto.sts.models
import moto.sts.responses
from moto.sts.exceptions import STSClientError

SANDBOX_USER = "sandbox"
SANDBOX_USER_ID = "AIDASANDBOXUSER000001"


def user_arn(account_id: str, partition: str = "aws") -> str:
    return f"arn:{partition}:iam::{account_id}:user/{SANDBOX_USER}"


def _wrap_caller_identity() -> None:
    backend_class = moto.sts.models.STSBackend
    original = backend_class.get_caller_identity

    def get_caller_identity(self, access_key_id: str, region: str):
        user_id, arn, account_id = original(self, access_key_id, region)
        if arn.endswith(":user/moto") and ":sts::" in arn:
            return SANDBOX_USER_ID, user_arn(account_id, arn.split(":")[1]), account_id
        return user_id, arn, account_id

    backend_class.get_caller_identity = get_caller_identity


def _principals(statement: dict) -> list[str]:
    principal = statement.get("Principal")
    if principal == "*":
        return ["*"]
    found = (principal or {}).get("AWS") if isinstance(principal, dict) else None
    return [found] if isinstance(found, str) else list(found or [])


def _as_list(value) -> list:
    return [value] if isinstance(value, str) else list(value or [])


def trust_allows(trust: dict, caller_arn: str, caller_account: str, external_id: str | None) -> bool:
    """Whether a role's trust policy lets ``caller_arn`` (of ``caller_account``) assume it across accounts.

    A statement allows when it grants ``sts:AssumeRole`` to the caller's account (``<account>``,
    ``arn:aws:iam::<account>:root``), to the caller's ARN or to ``*``, and its ``sts:ExternalId`` condition, if any,
    names ``external_id`` ("How to use an external ID", IAM User Guide). An explicit Deny that matches refuses.
    """
    names = {"*", caller_account, f"arn:aws:iam::{caller_account}:root", caller_arn}
    allowed = False
    for statement in _as_list(trust.get("Statement")):
        actions = _as_list(statement.get("Action"))
        if not any(a in ("sts:AssumeRole", "sts:*", "*") for a in actions) or not names & set(_principals(statement)):
            continue
        wanted = ((statement.get("Condition") or {}).get("StringEquals") or {}).get("sts:ExternalId")
        if wanted is not None and external_id not in _as_list(wanted):
            continue
        if statement.get("Effect") == "Deny":
            return False
        allowed = allowed or statement.get("Effect") == "Allow"
    return allowed


def _enforce_cross_account_trust() -> None:
    """AssumeRole of a role in another account needs the role and its trust policy naming the caller.

    moto lets any ARN be assumed ("the role does not need to exist"); AWS refuses with AccessDenied ("User: ... is not
    authorized to perform: sts:AssumeRole on resource: ...", AWS STS API Reference, AssumeRole: "the trust policy of
    the role being assumed must ... specify the user/role ... as a principal"). Within one account the sandbox's own
    admin may still assume any role of that account (the tests act as a team that way).
    """
    response_cls = moto.sts.responses.TokenResponse
    original = response_cls.assume_role
    if getattr(original, "_checks_trust", False):
        return

    def assume_role(self):
        role_arn = self._get_param("RoleArn") or ""
        user_id, caller_arn, caller_account = self.backend.get_caller_identity(self.get_access_key(), self.region)
        target = role_arn.split(":")[4] if role_arn.count(":") >= 5 else caller_account
        if target != caller_account:
            from moto.iam.models import iam_backends

            role = next((r for r in iam_backends[target]["global"].roles.values() if r.arn == role_arn), None)
            document = role.assume_role_policy_document if role is not None else "{}"
            trust = json.loads(document) if isinstance(document, str) else document
            if role is None or not trust_allows(trust, caller_arn, caller_account, self._get_param("ExternalId")):
                raise STSClientError("AccessDenied", f"User: {caller_arn} is not authorized to perform: sts:AssumeRole on resource: {role_arn}")
        return original(self)

    assume_role._checks_trust = True
    response_cls.assume_role = assume_role


def install() -> None:
    _wrap_caller_identity()
    _enforce_cross_account_trust()
