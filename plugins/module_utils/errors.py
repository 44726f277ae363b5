# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Typed AWS errors, one handler per service, caught once in each module's main().

A missing resource is a value (``None``), not an exception: decorate read
helpers with ``list_error_handler`` and write helpers with ``common_error_handler``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.amazon.aws.plugins.module_utils.botocore import is_boto3_error_code
from ansible_collections.amazon.aws.plugins.module_utils.errors import AWSErrorHandler
from ansible_collections.amazon.aws.plugins.module_utils.exceptions import AnsibleAWSError


class HyperPodError(AnsibleAWSError):
    """Any failure this collection reports; ``module.fail_json_aws_error`` renders it."""


class HyperPodErrorHandler(AWSErrorHandler):
    """For calls whose service has no handler of its own (STS, IAM reads)."""

    _CUSTOM_EXCEPTION = HyperPodError


class SageMakerError(HyperPodError):
    pass


class SageMakerErrorHandler(AWSErrorHandler):
    _CUSTOM_EXCEPTION = SageMakerError

    @classmethod
    def _is_missing(cls):
        return is_boto3_error_code(["ResourceNotFound", "ResourceNotFoundException"])


class EksError(HyperPodError):
    pass


class EksErrorHandler(AWSErrorHandler):
    _CUSTOM_EXCEPTION = EksError

    @classmethod
    def _is_missing(cls):
        return is_boto3_error_code("ResourceNotFoundException")


class IdentityCenterError(HyperPodError):
    pass


class IdentityCenterErrorHandler(AWSErrorHandler):
    _CUSTOM_EXCEPTION = IdentityCenterError

    @classmethod
    def _is_missing(cls):
        return is_boto3_error_code("ResourceNotFoundException")


class FsxError(HyperPodError):
    pass


class FsxErrorHandler(AWSErrorHandler):
    _CUSTOM_EXCEPTION = FsxError

    @classmethod
    def _is_missing(cls):
        return is_boto3_error_code(["FileSystemNotFound", "DataRepositoryAssociationNotFound"])


class CostError(HyperPodError):
    pass


class CostErrorHandler(AWSErrorHandler):
    _CUSTOM_EXCEPTION = CostError

    @classmethod
    def _is_missing(cls):
        return is_boto3_error_code(["NotFoundException", "ResourceNotFoundException", "UnknownMonitorException"])


class IamError(HyperPodError):
    pass


class IamErrorHandler(AWSErrorHandler):
    """IAM's handler: a missing role or policy is ``NoSuchEntity``."""

    _CUSTOM_EXCEPTION = IamError

    @classmethod
    def _is_missing(cls):
        return is_boto3_error_code("NoSuchEntity")


class ConflictError(HyperPodError):
    """The resource's version moved between our read and our write."""


class InputError(HyperPodError):
    """The requested change cannot be made; nothing was called."""
