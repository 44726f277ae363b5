#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: shared_info
short_description: Read once what every team of the cluster shares
version_added: 0.1.0
description:
  - Reads the account ID, the IAM Identity Center instance and its identity store, the EKS cluster's
    ARN and the HyperPod cluster's ARN in one module run, so that per-team roles do not read them
    once per team.
  - Returns C(hyperpod_shared) in the shape the team roles take (see C(docs/team-file.md)).
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  cluster_name:
    description: The HyperPod cluster. Its ARN is C(null) in the result while it does not exist.
    type: str
    required: true
  eks_cluster_name:
    description: The EKS cluster that orchestrates it.
    type: str
    required: true
  identity_center_instance_arn:
    description:
      - The Identity Center instance. When omitted, the account must have exactly one.
    type: str
  extra:
    description: Values added to the result as they are (bucket, FSx, subnets, name prefix, ...).
    type: dict
    default: {}
extends_documentation_fragment:
  - hyperpod.tenancy.attributes.info_module
  - amazon.aws.common.modules
  - amazon.aws.region.modules
  - amazon.aws.boto3
"""

EXAMPLES = r"""
- name: Read what the teams share
  hyperpod.tenancy.shared_info:
    cluster_name: ml-shared
    eks_cluster_name: ml-shared-eks
    extra:
      data_bucket: hyperpod-team-data
  register: shared
"""

RETURN = r"""
hyperpod_shared:
  description: What every team role needs to know about the account and the cluster.
  returned: always
  type: dict
  contains:
    account_id:
      description: The account ID.
      type: str
      sample: "123456789012"
    region:
      description: The region.
      type: str
      sample: us-east-1
    cluster_name:
      description: The HyperPod cluster's name.
      type: str
    cluster_arn:
      description: The HyperPod cluster's ARN, or null while it does not exist.
      type: str
    eks_cluster_name:
      description: The EKS cluster's name.
      type: str
    eks_cluster_arn:
      description: The EKS cluster's ARN.
      type: str
    identity_center_instance_arn:
      description: The Identity Center instance.
      type: str
    identity_store_id:
      description: Its identity store.
      type: str
"""

from ansible_collections.amazon.aws.plugins.module_utils.modules import AnsibleAWSModule

from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.shared import read_shared


def main():
    module = AnsibleAWSModule(
        argument_spec=dict(
            cluster_name=dict(type="str", required=True),
            eks_cluster_name=dict(type="str", required=True),
            identity_center_instance_arn=dict(type="str"),
            extra=dict(type="dict", default={}),
        ),
        supports_check_mode=True,
    )
    try:
        shared = read_shared(module, module.params["cluster_name"], module.params["eks_cluster_name"], module.params["identity_center_instance_arn"])
    except HyperPodError as e:
        module.fail_json_aws_error(e)
    shared.update(module.params["extra"])
    module.exit_json(changed=False, hyperpod_shared=shared)


if __name__ == "__main__":
    main()
