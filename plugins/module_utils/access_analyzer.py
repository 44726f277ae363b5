# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""IAM Access Analyzer calls, one wrapper per call (``calls.py``), with Access Analyzer's error handler.

Its ThrottlingException and InternalServerException are retried (``retry.THROTTLING_CODES``); any other error
(AccessDeniedException, ValidationException, ...) raises ``AccessAnalyzerError`` at once, its code kept
(``errors.error_code``). A check that could not be answered is never a pass: the caller gets no answer to read as one.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import read
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import AccessAnalyzerErrorHandler as Handler

# {"result": "PASS" | "FAIL", "message": ..., "reasons": [...]}; a read of nothing in the account, so never "missing".
check_access_not_granted = read(Handler, "check access not granted", "check_access_not_granted", missing_ok=False)
