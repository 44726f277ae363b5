"""Start a private space with a JupyterLab app and a user-profile app for a user, as the user would in Studio.

No Ansible module creates spaces or apps (users do, from Studio), so the target
makes them through boto3 to prove that removing the profile deletes them first.
Usage: studio_apps.py <domain id> <user profile name>; prints what it created as JSON.
"""

import json
import os
import sys
import time

import boto3

domain_id, user = sys.argv[1], sys.argv[2]
sm = boto3.client("sagemaker", endpoint_url=os.environ["AWS_URL"], region_name=os.environ["AWS_REGION"])


def wait(describe):
    for _ in range(200):
        if describe()["Status"] == "InService":
            return
        time.sleep(0.1)
    raise SystemExit("did not become InService")


space = f"{user}-space"
sm.create_space(DomainId=domain_id, SpaceName=space, OwnershipSettings={"OwnerUserProfileName": user},
                SpaceSharingSettings={"SharingType": "Private"}, SpaceSettings={"AppType": "JupyterLab"})
wait(lambda: sm.describe_space(DomainId=domain_id, SpaceName=space))
sm.create_app(DomainId=domain_id, SpaceName=space, AppType="JupyterLab", AppName="default")
wait(lambda: sm.describe_app(DomainId=domain_id, SpaceName=space, AppType="JupyterLab", AppName="default"))
sm.create_app(DomainId=domain_id, UserProfileName=user, AppType="JupyterServer", AppName="default")
wait(lambda: sm.describe_app(DomainId=domain_id, UserProfileName=user, AppType="JupyterServer", AppName="default"))
print(json.dumps({"space": space, "apps": ["JupyterLab/default", "JupyterServer/default"]}))
