"""IAM's roles per account quota, which moto 5.2.5 reports (GetAccountSummary's ``RolesQuota``) but never applies.

"IAM roles per account: 1000", adjustable ("IAM and AWS STS quotas"): CreateRole beyond it is refused with
``LimitExceeded`` (HTTP 409, from botocore's iam model when moto serializes it) "Cannot exceed quota for RolesPerAccount: 1000". The quota is the
sandbox setting ``iam_roles_per_account`` (``sandbox.core.SETTINGS``: an account whose quota was raised sets it), and
GetAccountSummary reports it. Every role counts, the ones IAM Identity Center makes when it provisions a permission set
(services/sso_admin.py) too: that provisioning then fails.
"""

from __future__ import annotations

import moto.iam.models
from moto.iam.exceptions import LimitExceededException

from sandbox import core

_CREATE_ROLE = moto.iam.models.IAMBackend.create_role
_SUMMARY_MAP = moto.iam.models.AccountSummary.summary_map


def create_role(self, *args, **kwargs):
    quota = core.quota("iam_roles_per_account")
    if len(self.roles) >= quota:
        raise LimitExceededException(f"Cannot exceed quota for RolesPerAccount: {quota}")
    return _CREATE_ROLE(self, *args, **kwargs)


def summary_map(self) -> dict:
    return dict(_SUMMARY_MAP.fget(self), RolesQuota=core.quota("iam_roles_per_account"))


def install() -> None:
    moto.iam.models.IAMBackend.create_role = create_role
    moto.iam.models.AccountSummary.summary_map = property(summary_map)
