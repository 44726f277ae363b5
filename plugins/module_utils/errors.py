# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Typed AWS errors, one handler per service, caught once in each module's main().

A missing resource is a value (``None``), not an exception: read calls go through the handler's
``list_error_handler``, writes through ``common_error_handler`` (``module_utils/calls.py`` builds
both). The calls themselves live in one file per service (``sagemaker.py``, ``eks.py``, ...).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.amazon.aws.plugins.module_utils.botocore import is_boto3_error_code
from ansible_collections.amazon.aws.plugins.module_utils.errors import AWSErrorHandler
from ansible_collections.amazon.aws.plugins.module_utils.exceptions import AnsibleAWSError


class HyperPodError(AnsibleAWSError):
    """Any failure this collection reports; ``module.fail_json_aws_error`` renders it."""


class ConflictError(HyperPodError):
    """The resource's version moved between our read and our write."""


class InputError(HyperPodError):
    """The requested change cannot be made; nothing was called."""


def error_code(error):
    """The code of the AWS answer behind ``error`` (a HyperPodError), None when no AWS answer raised it."""
    return (getattr(error.exception, "response", None) or {}).get("Error", {}).get("Code")


def with_answer(error):
    """``error``'s message with what AWS answered: its error code and its own message (a refusal, such as
    AccessDenied, is AWS's answer, never a missing resource), or the error raised when no answer came."""
    code = error_code(error)
    if code:
        said = (error.exception.response.get("Error") or {}).get("Message")
        return "%s: AWS refused it: %s%s" % (error.message, code, " (%s)" % said if said else "")
    if error.exception is not None:
        return "%s: %s" % (error.message, error.exception)
    return error.message


def _handler(error, missing_codes=None):
    """The AWSErrorHandler that raises ``error``; a resource is missing when the error code is one of ``missing_codes``."""
    attributes = {"_CUSTOM_EXCEPTION": error, "__doc__": "Raises %s; missing: %s." % (error.__name__, ", ".join(missing_codes or ["never"]))}
    if missing_codes:
        attributes["_is_missing"] = classmethod(lambda cls: is_boto3_error_code(missing_codes))
    return type(error.__name__ + "Handler", (AWSErrorHandler,), attributes)


# For calls whose service has no handler of its own (STS, EC2).
HyperPodErrorHandler = _handler(HyperPodError)


class SageMakerError(HyperPodError):
    pass


class EksError(HyperPodError):
    pass


class IdentityCenterError(HyperPodError):
    pass


class FsxError(HyperPodError):
    pass


class CostError(HyperPodError):
    pass


class IamError(HyperPodError):
    pass


class S3Error(HyperPodError):
    pass


class GrafanaError(HyperPodError):
    pass


class AmpError(HyperPodError):
    pass


class AccessAnalyzerError(HyperPodError):
    pass


SageMakerErrorHandler = _handler(SageMakerError, ["ResourceNotFound", "ResourceNotFoundException"])
EksErrorHandler = _handler(EksError, ["ResourceNotFoundException"])
IdentityCenterErrorHandler = _handler(IdentityCenterError, ["ResourceNotFoundException"])
FsxErrorHandler = _handler(FsxError, ["FileSystemNotFound", "DataRepositoryAssociationNotFound"])
CostErrorHandler = _handler(CostError, ["NotFoundException", "ResourceNotFoundException", "UnknownMonitorException"])
IamErrorHandler = _handler(IamError, ["NoSuchEntity"])
# S3 answers a HEAD of a missing key or bucket with a bare 404 (no body to name the code).
S3ErrorHandler = _handler(S3Error, ["NoSuchKey", "404", "NotFound"])
# A bucket setting never set answers an error of its own ("GetPublicAccessBlock", "GetBucketOwnershipControls",
# "GetBucketEncryption", Amazon S3 API Reference): the setting is missing, not the read failed.
S3BucketSettingErrorHandler = _handler(
    S3Error, ["NoSuchPublicAccessBlockConfiguration", "OwnershipControlsNotFoundError", "ServerSideEncryptionConfigurationNotFoundError"]
)
GrafanaErrorHandler = _handler(GrafanaError, ["ResourceNotFoundException"])
AmpErrorHandler = _handler(AmpError, ["ResourceNotFoundException"])
# Access Analyzer's policy checks read no resource of the account, so no answer of theirs means "missing": every error
# raises (CheckAccessNotGranted's errors, botocore's accessanalyzer model: AccessDenied, InternalServer, InvalidParameter,
# Throttling, UnprocessableEntity, Validation).
AccessAnalyzerErrorHandler = _handler(AccessAnalyzerError)
