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

import moto.sts.models

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


def install() -> None:
    _wrap_caller_identity()
