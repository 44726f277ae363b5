#!/usr/bin/env python
"""Create a HyperPod cluster and wait until it is InService (setup of the task_governance_policy target).

    hyperpod_cluster.py '<json spec>'  -> prints {"cluster_arn": ..., "cluster_name": ...}

The spec: name, eks_cluster_arn, execution_role_arn, subnet_ids, security_group_ids, lifecycle_uri.
Endpoint, region and credentials come from AWS_URL / AWS_REGION / AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
The target does not depend on the hyperpod_cluster module: this is its own setup step.
"""

import json
import os
import sys
import time

import boto3


def main(spec):
    sagemaker = boto3.client("sagemaker", endpoint_url=os.environ.get("AWS_URL"), region_name=os.environ.get("AWS_REGION", "us-east-1"))
    try:
        cluster = sagemaker.describe_cluster(ClusterName=spec["name"])
    except sagemaker.exceptions.ResourceNotFound:
        sagemaker.create_cluster(
            ClusterName=spec["name"],
            Orchestrator={"Eks": {"ClusterArn": spec["eks_cluster_arn"]}},
            InstanceGroups=[{
                "InstanceGroupName": "workers",
                "InstanceType": "ml.g5.12xlarge",
                "InstanceCount": 2,
                "ExecutionRole": spec["execution_role_arn"],
                "ThreadsPerCore": 1,
                "LifeCycleConfig": {"SourceS3Uri": spec["lifecycle_uri"], "OnCreate": "on_create.sh"},
            }],
            VpcConfig={"SecurityGroupIds": spec["security_group_ids"], "Subnets": spec["subnet_ids"]},
        )
        cluster = sagemaker.describe_cluster(ClusterName=spec["name"])
    deadline = time.monotonic() + 120
    while cluster["ClusterStatus"] != "InService":
        if time.monotonic() > deadline:
            sys.exit("cluster %s is %s" % (spec["name"], cluster["ClusterStatus"]))
        time.sleep(0.2)
        cluster = sagemaker.describe_cluster(ClusterName=spec["name"])
    print(json.dumps({"cluster_arn": cluster["ClusterArn"], "cluster_name": cluster["ClusterName"]}))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
