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

IAM is eventually consistent ("Changes that I make are not always immediately visible", IAM User
Guide, *Troubleshoot IAM*): a role just created is refused for a moment by the services it is passed
to, with errors whose codes also mean bad input. ``IAM_PROPAGATION`` lists exactly those refusals, by
code and message; only they are retried, with the same bounded backoff (about three minutes at most),
and any other error of the same code fails at once. The same words also answer a role that does not exist
at all, or whose trust policy leaves the service out: the bound is what makes that fail after the backoff
instead of never.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.amazon.aws.plugins.module_utils.retries import AWSRetry

THROTTLING_CODES = ["ThrottlingException", "TooManyRequestsException", "ServiceUnavailableException", "InternalServerException", "SlowDown"]
BODYLESS_SERVER_ERROR_CODES = ["500", "502", "503", "504"]

# (error code, message pattern) of a role the service cannot see yet.
IAM_PROPAGATION = (
    # EKS CreateAccessEntry (terraform-aws-modules/terraform-aws-eks#2969).
    ("InvalidParameterException", r"The specified principalArn is invalid"),
    # EKS CreatePodIdentityAssociation / UpdatePodIdentityAssociation (hashicorp/terraform-provider-aws#34717).
    ("InvalidParameterException", r"Role provided in the request does not exist"),
    # SageMaker CreateDomain / CreateCluster: the role cannot be assumed yet. AWS's API reference quotes no message for it
    # (an assumption: these are the wordings SageMaker is seen to send for a role it cannot assume), so each is listed:
    # - 'The execution role ARN "<arn>" is invalid. Please ensure that the role exists and that its trust relationship policy
    #   allows the action "sts:AssumeRole" for the service principal "sagemaker.amazonaws.com".' (and the same sentence in
    #   SageMaker's newer style, 'The role ARN isn't valid. Make sure the role exists and that its trust relationship policy
    #   allows ...'): hashicorp/terraform-provider-aws internal/service/sagemaker/endpoint.go retries exactly that sentence
    #   as IAM propagation;
    # - "SageMaker is unable to perform: sts:AssumeRole on the role. Check if you have a trust relationship for
    #   'sagemaker.amazonaws.com' to assume the role." (astronomer/docs#1695, a training job's answer);
    # - any other phrasing of "the role cannot be assumed". A ValidationException about anything else is not retried.
    ("ValidationException", r"(?i)(ensure|make sure) (that )?the role exists and that its trust relationship policy allows"),
    ("ValidationException", r"(?i)is unable to perform: sts:AssumeRole"),
    ("ValidationException", r"(?i)(not authorized to assume|cannot be assumed|could not assume|unable to assume|not assumable)"),
)
# The code the retry sees for an IAM propagation refusal (never a code AWS sends).
IAM_PROPAGATION_CODE = "hyperpod.tenancy:IamPropagation"


def iam_propagation(error):
    """Whether a botocore ``ClientError`` is a service refusing a role IAM has not propagated to it yet."""
    details = getattr(error, "response", {}).get("Error", {})
    code, message = details.get("Code"), details.get("Message") or ""
    return any(code == known and re.search(pattern, message) for known, pattern in IAM_PROPAGATION)


class _Retry(AWSRetry):
    @staticmethod
    def status_code_from_exception(error):
        return IAM_PROPAGATION_CODE if iam_propagation(error) else AWSRetry.status_code_from_exception(error)


def conflict_backoff(retries=7, delay=1, max_delay=16):
    """Retries ``ConflictException`` with exponential backoff and full jitter (a sleep drawn from 0 to 1, 2, 4, 8, 16, 16 s).

    Identity Center refuses a write with ConflictException when "the previous write did not have time to propagate";
    "a retry (with appropriate backoff logic) is the recommended response" (botocore's sso-admin model,
    ConflictException). Its limits on requests in flight (``in_flight.py``) answer the same, as far as the sandbox
    assumes. Bounded (at most about 47 s, 23 on average), because the same code also means a lost race (an assignment
    another run made first), which ``layer.converge_past_a_lost_race`` then converges from fresh reads.
    """
    return _Retry.jittered_backoff(retries=retries, delay=delay, max_delay=max_delay, catch_extra_error_codes=["ConflictException"])


def aws_retry(retries=10, delay=1, max_delay=30, extra_codes=()):
    """``AWSRetry.jittered_backoff`` that also retries the throttling codes above, IAM propagation and ``extra_codes``."""
    codes = THROTTLING_CODES + BODYLESS_SERVER_ERROR_CODES + [IAM_PROPAGATION_CODE] + list(extra_codes)
    return _Retry.jittered_backoff(retries=retries, delay=delay, max_delay=max_delay, catch_extra_error_codes=codes)
