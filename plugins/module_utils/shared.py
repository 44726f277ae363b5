# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""What every team of the cluster shares, read once per run."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import EksErrorHandler
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodErrorHandler
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import IdentityCenterErrorHandler
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import SageMakerErrorHandler
from ansible_collections.hyperpod.tenancy.plugins.module_utils.retry import aws_retry


@SageMakerErrorHandler.list_error_handler("describe the HyperPod cluster", None)
@aws_retry()
def _hyperpod_cluster_arn(client, name):
    return client.describe_cluster(ClusterName=name)["ClusterArn"]


@EksErrorHandler.list_error_handler("describe the EKS cluster", None)
@aws_retry()
def _eks_cluster_arn(client, name):
    return client.describe_cluster(name=name)["cluster"]["arn"]


@IdentityCenterErrorHandler.common_error_handler("list Identity Center instances")
@aws_retry()
def _identity_center_instances(client):
    return client.list_instances()["Instances"]


@HyperPodErrorHandler.common_error_handler("read the caller identity")
@aws_retry()
def _account_id(client):
    return client.get_caller_identity()["Account"]


def read_shared(module, cluster_name, eks_cluster_name, instance_arn=None):
    sso_admin = module.client("sso-admin")
    instances = _identity_center_instances(sso_admin)
    if instance_arn:
        instances = [i for i in instances if i["InstanceArn"] == instance_arn]
        if not instances:
            raise HyperPodError(message="Identity Center instance %s is not in this account" % instance_arn)
    elif len(instances) != 1:
        found = ", ".join(i["InstanceArn"] for i in instances) or "none"
        raise HyperPodError(message="Found %d Identity Center instances (%s); set identity_center_instance_arn" % (len(instances), found))
    eks_arn = _eks_cluster_arn(module.client("eks"), eks_cluster_name)
    if eks_arn is None:
        raise HyperPodError(message="EKS cluster %s does not exist in %s" % (eks_cluster_name, module.region))
    return {
        "account_id": _account_id(module.client("sts")),
        "region": module.region,
        "cluster_name": cluster_name,
        "cluster_arn": _hyperpod_cluster_arn(module.client("sagemaker"), cluster_name),
        "eks_cluster_name": eks_cluster_name,
        "eks_cluster_arn": eks_arn,
        "identity_center_instance_arn": instances[0]["InstanceArn"],
        "identity_store_id": instances[0]["IdentityStoreId"],
    }
