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

from sandbox.core import validate_request

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


def trust_allows(trust: dict, caller_names: set[str] | str, caller_account: str, external_id: str | None) -> bool:
    """Whether a role's trust policy lets the caller assume it.

    ``caller_names`` are the ARNs that name the caller in a Principal: an IAM user's ARN, or an assumed-role session's
    ARN and its role's ARN ("AWS JSON policy elements: Principal", IAM User Guide: a role session is named by the
    session ARN or, in a trust policy, by the role's ARN). A statement allows when it grants ``sts:AssumeRole`` to one
    of them, to the caller's account (``<account>``, ``arn:aws:iam::<account>:root``, which "delegates authority to
    the account": the caller's identity policy must then allow ``sts:AssumeRole``, checked by sandbox/authorization.py)
    or to ``*``, and its ``sts:ExternalId`` condition, if any, names ``external_id`` ("How to use an external ID", IAM
    User Guide). A statement naming only a service (``sagemaker.amazonaws.com``, ``pods.eks.amazonaws.com``) or a
    federated provider (Identity Center's SAML provider) names no IAM caller. An explicit Deny that matches refuses.
    Assumption: other conditions of an AWS-principal statement are taken as met (the collection writes none).
    """
    names = {"*", caller_account, f"arn:aws:iam::{caller_account}:root"} | ({caller_names} if isinstance(caller_names, str) else set(caller_names))
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


def caller_names(backend, access_key: str, caller_arn: str) -> set[str]:
    """The ARNs a trust policy may name the caller by: its own, and for a role's session the role's (with its path)."""
    names = {caller_arn}
    session = backend.get_assumed_role_from_access_key(access_key)
    if session is not None:
        names.add(session.role_arn)
    return names


def _enforce_trust() -> None:
    """AssumeRole needs the role to exist and its trust policy to allow the caller, in the caller's account too.

    moto lets any ARN be assumed ("the role does not need to exist"); AWS refuses with AccessDenied ("User: ... is not
    authorized to perform: sts:AssumeRole on resource: ..."). AssumeRole, AWS STS API Reference: "the trust policy of
    the role being assumed must ... specify the user/role ... as a principal", and "To allow a user to assume a role in
    the same account, you can do either of the following: attach a policy to the user that allows the user to call
    AssumeRole (as long as the role's trust policy trusts the account) [or] add the user as a principal directly in the
    role's trust policy" ("Cross account resource access in IAM" and "Cross-account policy evaluation logic", IAM User
    Guide, for another account: both the trust policy and the caller's identity policy must allow). So a role whose
    trust names only a service (a Studio execution role, a pod role) or Identity Center's SAML provider (an
    ``AWSReservedSSO_`` role) cannot be assumed with AssumeRole by anyone, the sandbox's admin included.

    The sandbox's admin key (``SANDBOX_CREDENTIALS``) is the IAM user ``sandbox`` with every permission (as an account's
    administrator user with AdministratorAccess), not the root user: "You cannot call AssumeRole with the credentials of
    the AWS account root user" (AssumeRole, AWS STS API Reference). Its identity policy allows ``sts:AssumeRole`` on
    every role, so a trust naming its account (or it) is enough. For keys moto issued, sandbox/authorization.py
    evaluates the identity policy before the request gets here. Assumption: the sandbox asks the identity policy also
    when the trust names the caller's own ARN in the same account, where AWS would not need it (stricter than AWS).
    """
    response_cls = moto.sts.responses.TokenResponse
    original = response_cls.assume_role
    if getattr(original, "_checks_trust", False):
        return

    def assume_role(self):
        # The model's limits, which moto does not hold: RoleSessionName "[\w+=,.@-]*" of 2 to 64 characters (no colon,
        # so no "system:" session name), DurationSeconds 900 to 43200 (AssumeRole, AWS STS API Reference).
        wanted = {"RoleArn": self._get_param("RoleArn") or "", "RoleSessionName": self._get_param("RoleSessionName") or ""}
        if self._get_param("DurationSeconds"):
            wanted["DurationSeconds"] = int(self._get_param("DurationSeconds"))
        validate_request("sts", "AssumeRole", wanted)
        role_arn = self._get_param("RoleArn") or ""
        access_key = self.get_access_key()
        user_id, caller_arn, caller_account = self.backend.get_caller_identity(access_key, self.region)
        target = role_arn.split(":")[4] if role_arn.count(":") >= 5 else caller_account
        from moto.iam.models import iam_backends

        role = next((r for r in iam_backends[target]["global"].roles.values() if r.arn == role_arn), None) if target in iam_backends else None
        document = role.assume_role_policy_document if role is not None else "{}"
        trust = json.loads(document) if isinstance(document, str) else document
        names = caller_names(self.backend, access_key, caller_arn)
        if role is None or not trust_allows(trust, names, caller_account, self._get_param("ExternalId")):
            raise STSClientError("AccessDenied", f"User: {caller_arn} is not authorized to perform: sts:AssumeRole on resource: {role_arn}")
        return original(self)

    assume_role._checks_trust = True
    response_cls.assume_role = assume_role


def install() -> None:
    _wrap_caller_identity()
    _enforce_trust()
