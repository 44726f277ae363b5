"""Calls on the sandbox's AMP (and KMS) API that the module must not make itself: test setup only.

amp.py <endpoint> <region> duplicate <alias>   create a second workspace with this alias, print its id
amp.py <endpoint> <region> disabled-key        create a KMS key, disable it, print its ARN
amp.py <endpoint> <region> delete <id>          delete a workspace once it is ACTIVE
"""

import sys
import time

import boto3

endpoint, region, action = sys.argv[1:4]
# Credentials from the environment the integration run gives (the sandbox admin key, sandbox.client.SANDBOX_CREDENTIALS).
session = dict(endpoint_url=endpoint, region_name=region)
if action == "duplicate":
    print(boto3.client("amp", **session).create_workspace(alias=sys.argv[4])["workspaceId"])
elif action == "disabled-key":
    kms = boto3.client("kms", **session)
    key = kms.create_key(Description="disabled key for prometheus_workspace")["KeyMetadata"]
    kms.disable_key(KeyId=key["KeyId"])
    print(key["Arn"])
elif action == "delete":
    amp = boto3.client("amp", **session)
    deadline = time.monotonic() + 60
    while amp.describe_workspace(workspaceId=sys.argv[4])["workspace"]["status"]["statusCode"] != "ACTIVE":
        if time.monotonic() > deadline:
            sys.exit("workspace did not become ACTIVE")
        time.sleep(0.2)
    amp.delete_workspace(workspaceId=sys.argv[4])
else:
    sys.exit("unknown action " + action)
