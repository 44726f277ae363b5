"""IAM GetAccountAuthorizationDetails in the sandbox (sandbox/services/iam_authorization_details.py): in pages of MaxItems,
the four lists counted together, each role with its inline documents, attached policies, boundary and tags."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

DOCUMENT = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]})
TRUST = json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
)


@pytest.fixture
def iam(sandbox):
    client = sandbox.boto3_client("iam")
    boundary = client.create_policy(PolicyName="boundary", PolicyDocument=DOCUMENT)["Policy"]["Arn"]
    for index in range(5):
        name = f"team{index}"
        client.create_role(RoleName=name, AssumeRolePolicyDocument=TRUST, PermissionsBoundary=boundary, Tags=[{"Key": "team", "Value": name}])
        client.put_role_policy(RoleName=name, PolicyName="data", PolicyDocument=DOCUMENT)
        client.attach_role_policy(RoleName=name, PolicyArn=boundary)
    return client


def test_roles_come_in_pages_of_max_items_with_what_iam_evaluates(iam):
    first = iam.get_account_authorization_details(Filter=["Role"], MaxItems=2)
    assert [r["RoleName"] for r in first["RoleDetailList"]] == ["team0", "team1"] and first["IsTruncated"]
    role = first["RoleDetailList"][0]
    assert role["RolePolicyList"] == [{"PolicyName": "data", "PolicyDocument": json.loads(DOCUMENT)}]
    assert [a["PolicyName"] for a in role["AttachedManagedPolicies"]] == ["boundary"]
    assert role["PermissionsBoundary"]["PermissionsBoundaryArn"].endswith(":policy/boundary")
    assert role["Tags"] == [{"Key": "team", "Value": "team0"}]
    names, marker = [], None
    while True:
        answer = iam.get_account_authorization_details(Filter=["Role"], MaxItems=2, **({"Marker": marker} if marker else {}))
        names += [r["RoleName"] for r in answer["RoleDetailList"]]
        if not answer["IsTruncated"]:
            assert "Marker" not in answer
            break
        marker = answer["Marker"]
    assert names == [f"team{index}" for index in range(5)]
    paginated = iam.get_paginator("get_account_authorization_details").paginate(Filter=["Role"], PaginationConfig={"PageSize": 3})
    assert [len(page["RoleDetailList"]) for page in paginated] == [3, 2]


def test_the_lists_count_together_and_a_page_is_one_hundred_unless_asked(iam):
    mixed = iam.get_account_authorization_details(Filter=["Role", "LocalManagedPolicy"], MaxItems=5)
    assert len(mixed["RoleDetailList"]) == 5 and mixed["Policies"] == [] and mixed["IsTruncated"]
    rest = iam.get_account_authorization_details(Filter=["Role", "LocalManagedPolicy"], Marker=mixed["Marker"])
    assert rest["RoleDetailList"] == [] and [p["Arn"].rsplit("/", 1)[-1] for p in rest["Policies"]] == ["boundary"] and not rest["IsTruncated"]
    for index in range(5, 101):
        iam.create_role(RoleName=f"team{index}", AssumeRolePolicyDocument=TRUST)
    default = iam.get_account_authorization_details(Filter=["Role"])
    assert len(default["RoleDetailList"]) == 100 and default["IsTruncated"]


def test_a_page_beyond_the_models_limit_or_a_marker_iam_did_not_give_is_refused(iam):
    with pytest.raises(ClientError) as refused:
        iam.get_account_authorization_details(Filter=["Role"], Marker="not-a-marker")
    assert refused.value.response["Error"]["Code"] == "ValidationError"
    with pytest.raises(ClientError) as refused:
        iam.get_account_authorization_details(Filter=["Role"], MaxItems=1001)
    assert refused.value.response["Error"] == {
        "Type": "Sender",
        "Code": "ValidationError",
        "Message": "1 validation error detected: Value '1001' at 'maxItems' failed to satisfy constraint: Member must have value less than or equal to 1000",
    }
