# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""AWS STS calls, one wrapper per call (``calls.py``): STS has no handler of its own (``errors.HyperPodErrorHandler``).

Who the credentials are: STS answers GetCallerIdentity whatever the caller's policies say ("GetCallerIdentity",
AWS STS API Reference), so an error is never "missing".
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import read
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodErrorHandler, IdentityCenterErrorHandler

# The run's own credentials: {"Account", "Arn", "UserId"}.
get_caller_identity = read(HyperPodErrorHandler, "ask STS who the caller is", "get_caller_identity", missing_ok=False)

# The same call with the Identity Center connection's credentials (identity_center.SETTING): its error is an Identity
# Center error naming the setting that chose them.
identity_center_caller = read(
    IdentityCenterErrorHandler, "read the Identity Center connection's account (hyperpod_identity_center)", "get_caller_identity", missing_ok=False
)
# The Identity Center connection's role (identity_center.SETTING's assume_role_arn): its temporary credentials.
identity_center_assume_role = read(
    IdentityCenterErrorHandler, "assume the Identity Center role (hyperpod_identity_center.assume_role_arn)", "assume_role", "Credentials", missing_ok=False
)
