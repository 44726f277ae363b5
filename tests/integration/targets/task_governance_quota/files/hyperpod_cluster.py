#!/usr/bin/env python
"""Create (and wait for) or delete the HyperPod cluster an integration target needs, with boto3.

The targets do not depend on the hyperpod_cluster module: this is their own setup step.

    hyperpod_cluster.py create '<json spec>'   -> prints {"cluster_arn": ..., "cluster_name": ...}
    hyperpod_cluster.py delete <name>
    hyperpod_cluster.py quota-teams <cluster arn>   -> prints the teams with a quota on the cluster (Deleted ones left out)

The spec: name, eks_cluster_arn, execution_role_arn, subnet_ids, security_group_ids,
lifecycle_uri, instance_groups [{name, instance_type, count}]. Endpoint, region and
credentials come from AWS_URL / AWS_REGION / AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
"""

import json
import os
import sys
import time

import boto3


def client():
    return boto3.client("sagemaker", endpoint_url=os.environ.get("AWS_URL"), region_name=os.environ.get("AWS_REGION", "us-east-1"))


def describe(sagemaker, name):
    try:
        return sagemaker.describe_cluster(ClusterName=name)
    except sagemaker.exceptions.ResourceNotFound:
        return None


def create(spec):
    sagemaker = client()
    cluster = describe(sagemaker, spec["name"])
    if cluster is None:
        sagemaker.create_cluster(
            ClusterName=spec["name"],
            Orchestrator={"Eks": {"ClusterArn": spec["eks_cluster_arn"]}},
            InstanceGroups=[
                {
                    "InstanceGroupName": group["name"],
                    "InstanceType": group["instance_type"],
                    "InstanceCount": group["count"],
                    "ExecutionRole": spec["execution_role_arn"],
                    "ThreadsPerCore": 1,
                    "LifeCycleConfig": {"SourceS3Uri": spec["lifecycle_uri"], "OnCreate": "on_create.sh"},
                }
                for group in spec["instance_groups"]
            ],
            VpcConfig={"SecurityGroupIds": spec["security_group_ids"], "Subnets": spec["subnet_ids"]},
            NodeRecovery="Automatic",
        )
    deadline = time.monotonic() + 120
    while True:
        cluster = describe(sagemaker, spec["name"])
        if cluster["ClusterStatus"] == "InService" or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    if cluster["ClusterStatus"] != "InService":
        sys.exit("cluster %s is %s" % (spec["name"], cluster["ClusterStatus"]))
    print(json.dumps({"cluster_arn": cluster["ClusterArn"], "cluster_name": cluster["ClusterName"]}))


def delete(name):
    sagemaker = client()
    if describe(sagemaker, name) is not None:
        sagemaker.delete_cluster(ClusterName=name)
    print(json.dumps({"deleted": name}))


def quota_teams(cluster_arn):
    pages = client().get_paginator("list_compute_quotas").paginate(ClusterArn=cluster_arn)
    quotas = [q for page in pages for q in page["ComputeQuotaSummaries"] if q["Status"] != "Deleted"]
    print(json.dumps(sorted(q["ComputeQuotaTarget"]["TeamName"] for q in quotas)))


if __name__ == "__main__":
    command, argument = sys.argv[1], sys.argv[2]
    if command == "create":
        create(json.loads(argument))
    elif command == "delete":
        delete(argument)
    else:
        quota_teams(argument)
