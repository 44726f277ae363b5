# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The retry policy of every API helper in this collection.

amazon.aws's ``AWSRetry`` retries ``Throttling`` and ``RequestLimitExceeded``
(EC2's codes) but not ``ThrottlingException``, which SageMaker, EKS, Identity
Center and Cost Explorer send; without this, only botocore's own few retries
would stand between a throttled module and a failed run.

S3 answers a throttled or failed HEAD request with a status line and no body,
so botocore can only name the error by its HTTP status: ``"503"``, not
``SlowDown``. Those status-code names are retried too.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.amazon.aws.plugins.module_utils.retries import AWSRetry

THROTTLING_CODES = ["ThrottlingException", "TooManyRequestsException", "ServiceUnavailableException", "InternalServerException", "SlowDown"]
BODYLESS_SERVER_ERROR_CODES = ["500", "502", "503", "504"]


def aws_retry(retries=10, delay=1, max_delay=30, extra_codes=()):
    """``AWSRetry.jittered_backoff`` that also retries the throttling codes above (and ``extra_codes``)."""
    codes = THROTTLING_CODES + BODYLESS_SERVER_ERROR_CODES + list(extra_codes)
    return AWSRetry.jittered_backoff(retries=retries, delay=delay, max_delay=max_delay, catch_extra_error_codes=codes)
