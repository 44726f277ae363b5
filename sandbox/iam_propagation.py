"""IAM is eventually consistent: a role just created is refused by the services that use it, for a moment.

AWS: "Because IAM is eventually consistent, [...] changes that you make are not always immediately
visible" and "we recommend that you do not include IAM changes in the critical, high-availability code
paths of your application" (IAM User Guide, *Troubleshoot IAM*, "Changes that I make are not always
immediately visible"). A role passed to another service right after CreateRole is refused by that
service, each with its own error, until the role has propagated:

- EKS CreateAccessEntry: ``InvalidParameterException`` "The specified principalArn is invalid: invalid
  principal." (the answer for a role EKS cannot see; terraform-aws-modules/terraform-aws-eks#2969,
  awslabs/minimum-viable-dataspace-on-aws#5);
- EKS CreatePodIdentityAssociation: ``InvalidParameterException`` "Role provided in the request does not
  exist" (hashicorp/terraform-provider-aws#34717, which retries exactly that on create and update);
- SageMaker CreateDomain and CreateCluster: ``ValidationException``. AWS's documentation quotes no message
  for a role that has not propagated (an assumption, then); the sandbox answers what SageMaker is seen to
  answer for a role it cannot assume, ``ROLE_INVALID`` ('The execution role ARN "<arn>" is invalid. Please
  ensure that the role exists and that its trust relationship policy allows the action "sts:AssumeRole" for
  the service principal "sagemaker.amazonaws.com".', which hashicorp/terraform-provider-aws retries as IAM
  propagation in internal/service/sagemaker/endpoint.go), also for a role that does not exist at all
  (``sagemaker_cluster._check_role``), so the collection's retry is tested against AWS's text, not one of
  the sandbox's own.

``propagation_s`` seconds after its CreateRole (``PUT /_sandbox/faults {"iam_propagation_s": ...}``;
``SANDBOX_IAM_PROPAGATION_DELAY``, default ``DEFAULT_DELAY``) a role is usable. The default is on, so that
every cold run of the suite goes through the modules' retries, and short, so that it costs each cold run
about one jittered retry per new role: 0.2 s is longer than the few milliseconds between a module's
CreateRole and its next call, and shorter than the first backoff of ``module_utils/retry.py`` (up to 1 s).
"""

from __future__ import annotations

import os
import threading

from moto.core.utils import utcnow

from sandbox.core import AwsError

DEFAULT_DELAY = float(os.environ.get("SANDBOX_IAM_PROPAGATION_DELAY", "0.2"))

_lock = threading.Lock()
_delay = [DEFAULT_DELAY]

# SageMaker's answer for an execution role it cannot assume (see above), with {arn}.
ROLE_INVALID = (
    'The execution role ARN "{arn}" is invalid. Please ensure that the role exists and that its trust relationship policy allows '
    'the action "sts:AssumeRole" for the service principal "sagemaker.amazonaws.com".'
)

# What each service answers for a role it cannot see yet: (code, message with {arn}).
REFUSALS = {
    "CreateAccessEntry": ("InvalidParameterException", "The specified principalArn is invalid: invalid principal."),
    "CreatePodIdentityAssociation": ("InvalidParameterException", "Role provided in the request does not exist"),
    "CreateDomain": ("ValidationException", ROLE_INVALID),
    "CreateCluster": ("ValidationException", ROLE_INVALID),
}


def set_delay(seconds: float) -> None:
    with _lock:
        _delay[0] = max(0.0, float(seconds))


def delay() -> float:
    with _lock:
        return _delay[0]


def role(account_id: str, role_arn: str):
    """The IAM role of ``account_id`` whose ARN is ``role_arn``, or None."""
    from moto.iam.models import iam_backends

    iam = iam_backends[account_id]["global"]
    return next((found for found in iam.roles.values() if found.arn == role_arn), None)


def propagating(account_id: str, role_arn: str) -> bool:
    """Whether ``role_arn`` exists and was created less than ``delay()`` seconds ago."""
    found = role(account_id, role_arn)
    if found is None:
        return False
    return (utcnow() - found.create_date).total_seconds() < delay()


def refuse_new_role(operation: str, account_id: str, role_arn: str) -> None:
    """Raise what ``operation`` answers for ``role_arn`` while IAM has not propagated it to the service."""
    if propagating(account_id, role_arn):
        code, message = REFUSALS[operation]
        raise AwsError(code, message.format(arn=role_arn))
