"""A live denial matrix: each sample team's credentials, refused on every other team's data, allowed on its own.

The sandbox authorizes every request signed with keys it issued for a principal (``sandbox/authorization.py``
with the collection's evaluator): here the role Identity Center makes for each team's permission set,
carrying the policy ``team_policy.render_team_policy`` renders, assumed with ``sts:AssumeRole``. Requests
signed with the sandbox's admin key (the playbooks' and the other tests') stay unchecked.

Cells: for every ordered pair of sample teams (team, owner), S3 get/list/put on owner's prefix,
SageMaker DescribeDomain, DescribeUserProfile, UpdateSpace and CreatePresignedDomainUrl (a Studio URL
for the owner's member, in an IAM-mode domain) on owner's resources: allowed when team == owner,
AccessDenied (shaped as each protocol shapes it) otherwise.
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import pytest
import yaml
from ansible_collections.hyperpod.tenancy.plugins.module_utils import isolation, isolation_report, naming
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_policy import render_team_policy
from botocore.exceptions import ClientError

ROOT = Path(__file__).resolve().parents[2]
BUCKET = "hyperpod-team-data"
REGION = "us-east-1"
TEAMS = [t["name"] for t in yaml.safe_load((ROOT / "teams/teams.yml").read_text())["hyperpod_teams"]]


def _wait_in_service(sagemaker, describe, **ids):
    deadline = time.monotonic() + 20
    while describe(**ids)["Status"] != "InService":
        assert time.monotonic() < deadline, ids
        time.sleep(0.1)


@pytest.fixture
def teams(sandbox):
    """Each sample team: its S3 data, an IAM-mode domain with a member and a space, and its member's credentials."""
    s3, iam, sts, sagemaker = (sandbox.boto3_client(s) for s in ("s3", "iam", "sts", "sagemaker"))
    account = sts.get_caller_identity()["Account"]
    s3.create_bucket(Bucket=BUCKET)
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{account}:root"}, "Action": "sts:AssumeRole"}]}
    execution = iam.create_role(RoleName="studio-execution", AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
    found = {}
    for team in TEAMS:
        s3.put_object(Bucket=BUCKET, Key=f"{team}/datasets/train.csv", Body=f"{team} data".encode())
        tags = [{"Key": k, "Value": str(v)} for k, v in naming.team_tags(team, None, None).items()]
        domain = sagemaker.create_domain(
            DomainName=f"hyperpod-{team}", AuthMode="IAM", DefaultUserSettings={"ExecutionRole": execution}, TagPropagation="ENABLED", Tags=tags
        )
        domain_id = domain["DomainArn"].rsplit("/", 1)[-1]
        _wait_in_service(sagemaker, sagemaker.describe_domain, DomainId=domain_id)
        sagemaker.create_user_profile(DomainId=domain_id, UserProfileName=f"{team}-alice", Tags=tags)
        sagemaker.create_space(
            DomainId=domain_id,
            SpaceName=f"{team}-space",
            OwnershipSettings={"OwnerUserProfileName": f"{team}-alice"},
            SpaceSharingSettings={"SharingType": "Private"},
        )
        policy = render_team_policy(
            team, account, REGION, BUCKET, f"arn:aws:sagemaker:{REGION}:{account}:cluster/p0a1b2c3d4e5", f"arn:aws:eks:{REGION}:{account}:cluster/ml-shared-eks"
        )
        role = iam.create_role(
            RoleName=f"AWSReservedSSO_hyperpod-{team}_0123456789abcdef", Path="/aws-reserved/sso.amazonaws.com/", AssumeRolePolicyDocument=json.dumps(trust)
        )["Role"]
        iam.put_role_policy(RoleName=role["RoleName"], PolicyName="AwsSSOInlinePolicy", PolicyDocument=json.dumps(policy))
        credentials = sts.assume_role(RoleArn=role["Arn"], RoleSessionName=f"{team}-alice")["Credentials"]
        found[team] = {"domain": domain_id, "credentials": credentials, "session": f"arn:aws:sts::{account}:assumed-role/{role['RoleName']}/{team}-alice"}
    return found


def _attempts(owner, domain_id):
    """What a member of one team tries on ``owner``'s resources: (cell name, call on (s3, sagemaker))."""
    return [
        ("s3 get", lambda s3, sm: s3.get_object(Bucket=BUCKET, Key=f"{owner}/datasets/train.csv")["Body"].read()),
        ("s3 list", lambda s3, sm: s3.list_objects_v2(Bucket=BUCKET, Prefix=f"{owner}/")),
        ("s3 put", lambda s3, sm: s3.put_object(Bucket=BUCKET, Key=f"{owner}/checkpoints/x.pt", Body=b"w")),
        ("describe domain", lambda s3, sm: sm.describe_domain(DomainId=domain_id)),
        ("describe profile", lambda s3, sm: sm.describe_user_profile(DomainId=domain_id, UserProfileName=f"{owner}-alice")),
        ("update space", lambda s3, sm: sm.update_space(DomainId=domain_id, SpaceName=f"{owner}-space", SpaceDisplayName="x")),
        ("studio url", lambda s3, sm: sm.create_presigned_domain_url(DomainId=domain_id, UserProfileName=f"{owner}-alice")),
    ]


def test_each_team_reaches_its_own_data_and_nothing_of_another_team(sandbox, teams):
    matrix, wrong = {}, []
    for team, owner in itertools.product(TEAMS, TEAMS):
        s3 = sandbox.boto3_client("s3", credentials=teams[team]["credentials"])
        sm = sandbox.boto3_client("sagemaker", credentials=teams[team]["credentials"])
        for cell, call in _attempts(owner, teams[owner]["domain"]):
            try:
                call(s3, sm)
                outcome = "allowed"
            except ClientError as error:
                outcome = error.response["Error"]["Code"]
                assert teams[team]["session"] in error.response["Error"]["Message"], error.response["Error"]
            matrix[(team, owner, cell)] = outcome
            expected = "allowed" if team == owner else ("AccessDenied" if cell.startswith("s3") else "AccessDeniedException")
            if outcome != expected:
                wrong.append((team, owner, cell, outcome))
    assert wrong == []
    assert len(matrix) == len(TEAMS) ** 2 * 7


def test_a_denial_is_shaped_as_aws_shapes_it(sandbox, teams):
    vision = teams["vision"]["credentials"]
    with pytest.raises(ClientError) as s3_error:
        sandbox.boto3_client("s3", credentials=vision).get_object(Bucket=BUCKET, Key="nlp/datasets/train.csv")
    response = s3_error.value.response
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert response["Error"]["Code"] == "AccessDenied"
    assert response["Error"]["Message"] == (
        f"User: {teams['vision']['session']} is not authorized to perform: s3:GetObject on resource: "
        f'"arn:aws:s3:::{BUCKET}/nlp/datasets/train.csv" because no identity-based policy allows the s3:GetObject action'
    )
    with pytest.raises(ClientError) as json_error:
        sandbox.boto3_client("sagemaker", credentials=vision).describe_domain(DomainId=teams["nlp"]["domain"])
    assert json_error.value.response["Error"]["Code"] == "AccessDeniedException"
    assert json_error.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    with pytest.raises(ClientError) as query_error:
        sandbox.boto3_client("iam", credentials=vision).list_roles()
    assert query_error.value.response["Error"]["Code"] == "AccessDenied"
    assert query_error.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403


def test_listing_is_held_to_the_prefix_condition(sandbox, teams):
    s3 = sandbox.boto3_client("s3", credentials=teams["vision"]["credentials"])
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="vision/")["Contents"]] == ["vision/datasets/train.csv"]
    for prefix in (None, "", "vis", "visionary/", "nlp/"):
        with pytest.raises(ClientError) as error:
            s3.list_objects_v2(Bucket=BUCKET, **({} if prefix is None else {"Prefix": prefix}))
        assert error.value.response["Error"]["Code"] == "AccessDenied", prefix


def test_a_bucket_policy_deny_and_a_session_policy_are_enforced(sandbox, teams):
    admin = sandbox.boto3_client("s3")
    deny = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Deny", "Principal": "*", "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{BUCKET}/vision/frozen/*"}],
    }
    admin.put_bucket_policy(Bucket=BUCKET, Policy=json.dumps(deny))
    s3 = sandbox.boto3_client("s3", credentials=teams["vision"]["credentials"])
    s3.put_object(Bucket=BUCKET, Key="vision/open/x", Body=b"x")
    with pytest.raises(ClientError) as error:
        s3.put_object(Bucket=BUCKET, Key="vision/frozen/x", Body=b"x")
    assert "explicit deny in a resource-based policy" in error.value.response["Error"]["Message"]

    sts, iam = sandbox.boto3_client("sts"), sandbox.boto3_client("iam")
    role = iam.get_role(RoleName="AWSReservedSSO_hyperpod-vision_0123456789abcdef")["Role"]
    read_only = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]}
    narrowed = sts.assume_role(RoleArn=role["Arn"], RoleSessionName="reader", Policy=json.dumps(read_only))["Credentials"]
    reader = sandbox.boto3_client("s3", credentials=narrowed)
    assert reader.get_object(Bucket=BUCKET, Key="vision/datasets/train.csv")["Body"].read() == b"vision data"
    with pytest.raises(ClientError):
        reader.put_object(Bucket=BUCKET, Key="vision/open/y", Body=b"y")
    with pytest.raises(ClientError):
        reader.get_object(Bucket=BUCKET, Key="nlp/datasets/train.csv")


def test_credentials_nobody_issued_are_refused_and_admin_keys_are_not_checked(sandbox, teams):
    made_up = {"AccessKeyId": "AKIAMADEUPKEY0000000", "SecretAccessKey": "x"}
    with pytest.raises(ClientError) as error:
        sandbox.boto3_client("s3", credentials=made_up).get_object(Bucket=BUCKET, Key="vision/datasets/train.csv")
    assert error.value.response["Error"]["Code"] == "InvalidAccessKeyId"
    with pytest.raises(ClientError) as error:
        sandbox.boto3_client("sagemaker", credentials=made_up).list_domains()
    assert error.value.response["Error"]["Code"] == "UnrecognizedClientException"
    forged = dict(teams["vision"]["credentials"], SessionToken="forged")
    with pytest.raises(ClientError):
        sandbox.boto3_client("s3", credentials=forged).get_object(Bucket=BUCKET, Key="vision/datasets/train.csv")
    admin = sandbox.boto3_client("s3")
    assert admin.get_object(Bucket=BUCKET, Key="nlp/datasets/train.csv")["Body"].read() == b"nlp data"


def test_simulate_principal_policy_gives_the_matrix_verify_isolation_reads(sandbox, teams):
    """IAM SimulatePrincipalPolicy on the sandbox answers with the evaluation it enforces: the isolation matrix
    of the team roles over botocore's actions has no cross-team allow and denies nothing a team needs."""
    iam = sandbox.boto3_client("iam")
    account = sandbox.boto3_client("sts").get_caller_identity()["Account"]
    principals, resources = [], []
    for team in TEAMS:
        role = iam.get_role(RoleName=f"AWSReservedSSO_hyperpod-{team}_0123456789abcdef")["Role"]
        principals.append({"id": team, "team": team, "kind": "permission_set", "arn": role["Arn"]})
        found = {"bucket": BUCKET, "domain_id": teams[team]["domain"], "user_profiles": [f"{team}-alice"], "spaces": [f"{team}-space"]}
        resources += isolation.team_resources(team, account, REGION, found)
    result = isolation.matrix(principals, resources, isolation.simulate_decider(iam))
    assert result["leaks"] == [] and result["gaps"] == []
    assert result["summary"]["cross_team_cells"] == sum(
        len(isolation.actions_by_kind()[r["kind"]]) for p in principals for r in resources if r["team"] != p["team"]
    )

    # Out of band, a statement is added to vision's role: the simulation reports it.
    iam.put_role_policy(
        RoleName="AWSReservedSSO_hyperpod-vision_0123456789abcdef",
        PolicyName="added-by-hand",
        PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObjectVersion", "Resource": f"arn:aws:s3:::{BUCKET}/*"}]}
        ),
    )
    leaks = isolation.matrix(principals, resources, isolation.simulate_decider(iam))["leaks"]
    assert {(c["team"], c["action"]) for c in leaks} == {("vision", "s3:GetObjectVersion")}
    assert {c["owner"] for c in leaks} == {"nlp", "research"}


def _sample_matrix_inputs(sandbox, teams, iam):
    """The sample teams' permission set roles, and their resources with two profiles and two spaces each."""
    account = sandbox.boto3_client("sts").get_caller_identity()["Account"]
    sagemaker = sandbox.boto3_client("sagemaker")
    principals, resources = [], []
    for team in TEAMS:
        role = iam.get_role(RoleName=f"AWSReservedSSO_hyperpod-{team}_0123456789abcdef")["Role"]
        principals.append({"id": team, "team": team, "kind": "permission_set", "arn": role["Arn"]})
        domain = teams[team]["domain"]
        sagemaker.create_user_profile(DomainId=domain, UserProfileName=f"{team}-bob")
        sagemaker.create_space(
            DomainId=domain, SpaceName=f"{team}-bob-space", OwnershipSettings={"OwnerUserProfileName": f"{team}-bob"},
            SpaceSharingSettings={"SharingType": "Private"},
        )  # fmt: skip
        found = {
            "bucket": BUCKET, "domain_id": domain, "user_profiles": [f"{team}-alice", f"{team}-bob"], "spaces": [f"{team}-space", f"{team}-bob-space"],
        }  # fmt: skip
        resources += isolation.team_resources(team, account, REGION, found)
    return principals, resources


def test_batched_simulation_gives_the_same_matrix_in_fewer_calls(sandbox, teams):
    """One SimulatePrincipalPolicy call per group of resources asked the same actions with the same condition keys
    (all teams' S3 objects; the teams' user profiles; their spaces) gives the matrix cell for cell as one resource per call."""
    iam = sandbox.boto3_client("iam")
    principals, resources = _sample_matrix_inputs(sandbox, teams, iam)
    # A widening, so that the matrix holds cross-team allows the batching must keep on the right resources.
    widened = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sagemaker:UpdateSpace", "Resource": "*"}]}
    iam.put_role_policy(RoleName="AWSReservedSSO_hyperpod-nlp_0123456789abcdef", PolicyName="added-by-hand", PolicyDocument=json.dumps(widened))
    one_by_one, batched = isolation.simulate_decider(iam, batch=False), isolation.simulate_decider(iam)
    before, after = isolation.matrix(principals, resources, one_by_one), isolation.matrix(principals, resources, batched)
    assert after["cells"] == before["cells"]
    # A team's spaces are one resource, the set of every space of its domain, asked of IAM on the first.
    assert {(c["team"], c["owner"], c["resource"].rsplit("/", 1)[-1]) for c in after["leaks"]} == {
        ("nlp", owner, f"{owner}-space") for owner in TEAMS if owner != "nlp"
    }
    print(f"SimulatePrincipalPolicy calls at {len(TEAMS)} teams: {one_by_one.calls} one resource per call, {batched.calls} batched")
    assert batched.calls < one_by_one.calls


def test_the_witness_gives_iams_matrix_from_the_policies_iam_holds_in_fewer_calls(sandbox, teams):
    """IAM is asked about each role's own team, the shared resources and one other team (its witness); the evaluator,
    fed the policies, permissions boundary and tags IAM holds for the role, decides the third team's cells: cell for
    cell the matrix IAM gives when asked everything. Allows added by hand on a third team are found, and a boundary's
    Deny on a principal tag is applied to them."""
    iam = sandbox.boto3_client("iam")
    account = sandbox.boto3_client("sts").get_caller_identity()["Account"]
    principals, resources = _sample_matrix_inputs(sandbox, teams, iam)
    roles = {team: f"AWSReservedSSO_hyperpod-{team}_0123456789abcdef" for team in TEAMS}

    def allow_on_spaces_of(owner, actions):
        space = f"arn:aws:sagemaker:{REGION}:{account}:space/{teams[owner]['domain']}/*"
        return json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": space}]})

    # nlp's witness is research and vision's is nlp (the first after the last): these allows are the evaluator's to find.
    added = {
        "nlp": allow_on_spaces_of("vision", ["sagemaker:UpdateSpace", "sagemaker:DeleteSpace"]),
        "vision": allow_on_spaces_of("research", "sagemaker:UpdateSpace"),
    }
    for team, document in added.items():
        iam.put_role_policy(RoleName=roles[team], PolicyName="added-by-hand", PolicyDocument=document)
    boundary = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": "*", "Resource": "*"},
            {"Effect": "Deny", "Action": "sagemaker:DeleteSpace", "Resource": "*", "Condition": {"StringEquals": {"aws:PrincipalTag/tier": "member"}}},
        ],
    }
    boundary_arn = iam.create_policy(PolicyName="team-boundary", PolicyDocument=json.dumps(boundary))["Policy"]["Arn"]
    iam.put_role_permissions_boundary(RoleName=roles["nlp"], PermissionsBoundary=boundary_arn)
    iam.tag_role(RoleName=roles["nlp"], Tags=[{"Key": "tier", "Value": "member"}])

    # IAM is given the role's tags as aws:PrincipalTag (its simulator fills no context key itself); the roles' trust
    # allows no sts:TagSession, so no session can override them and the evaluator pins them too.
    roles = isolation.AccountRoles(iam)
    inputs = {p["id"]: roles.evaluation_inputs(p["arn"], roles.policy_documents(p["arn"])) for p in principals}
    assert {spec["session_tags"] for spec in inputs.values()} == {False}
    everything = isolation.simulate_decider(iam, inputs=inputs)
    asked_of_iam = isolation.matrix(principals, resources, everything)
    simulate = isolation.simulate_decider(iam, inputs=inputs)
    decide = isolation.witness_decider(simulate, isolation.local_decider(inputs, account), inputs=inputs)
    witnessed = isolation.matrix(principals, resources, decide)

    assert witnessed["cells"] == asked_of_iam["cells"]
    leaks = {(c["team"], c["owner"], c["action"]) for c in witnessed["leaks"]}
    assert leaks == {("nlp", "vision", "sagemaker:UpdateSpace"), ("vision", "research", "sagemaker:UpdateSpace")}
    assert {c["decision"] for c in witnessed["cells"] if c["team"] == "nlp" and c["action"] == "sagemaker:DeleteSpace"} == {"explicitDeny"}
    assert decide.fallbacks == [] and decide.local_cells > 0
    print(f"SimulatePrincipalPolicy calls at {len(TEAMS)} teams: {everything.calls} for every cell, {simulate.calls} with the witness")
    assert simulate.calls < everything.calls


def test_simulation_answers_one_result_per_action_with_each_resources_decision(sandbox, teams):
    """As IAM answers since the simulator aggregates: the most restrictive decision on top, each resource's below."""
    iam = sandbox.boto3_client("iam")
    role = iam.get_role(RoleName="AWSReservedSSO_hyperpod-vision_0123456789abcdef")["Role"]["Arn"]
    arns = [f"arn:aws:s3:::{BUCKET}/vision/x", f"arn:aws:s3:::{BUCKET}/nlp/x"]
    answer = iam.simulate_principal_policy(PolicySourceArn=role, ActionNames=["s3:GetObject", "s3:PutObject"], ResourceArns=arns)
    assert [r["EvalActionName"] for r in answer["EvaluationResults"]] == ["s3:GetObject", "s3:PutObject"]
    for result in answer["EvaluationResults"]:
        assert result["EvalDecision"] == "implicitDeny"
        assert [(r["EvalResourceName"], r["EvalResourceDecision"]) for r in result["ResourceSpecificResults"]] == [
            (arns[0], "allowed"), (arns[1], "implicitDeny"),
        ]  # fmt: skip
    paged = iam.simulate_principal_policy(PolicySourceArn=role, ActionNames=["s3:GetObject", "s3:PutObject"], ResourceArns=arns, MaxItems=1)
    assert paged["IsTruncated"] and len(paged["EvaluationResults"]) == 1
    rest = iam.simulate_principal_policy(PolicySourceArn=role, ActionNames=["s3:GetObject", "s3:PutObject"], ResourceArns=arns, Marker=paged["Marker"])
    assert [r["EvalActionName"] for r in rest["EvaluationResults"]] == ["s3:PutObject"] and not rest["IsTruncated"]


def test_access_analyzer_finds_a_policy_that_may_grant_another_teams_objects_or_roles(sandbox, teams):
    """CheckAccessNotGranted on each team role's policies, against the other teams' S3 objects and roles: every check
    passes on the rendered policies; a widening added by hand is a finding naming the team, the policy and the owner."""
    iam, analyzer = sandbox.boto3_client("iam"), sandbox.boto3_client("accessanalyzer")
    account = sandbox.boto3_client("sts").get_caller_identity()["Account"]
    principals, resources = [], []
    for team in TEAMS:
        role = iam.get_role(RoleName=f"AWSReservedSSO_hyperpod-{team}_0123456789abcdef")["Role"]
        principals.append({"id": team, "team": team, "kind": "permission_set", "arn": role["Arn"]})
        resources += isolation.team_resources(team, account, REGION, {"bucket": BUCKET, "sso_role": role["Arn"]})

    def analyzed():
        roles = isolation.AccountRoles(iam)
        documents = {p["id"]: roles.policy_documents(p["arn"]) for p in principals}
        return isolation.access_not_granted(analyzer, documents, principals, resources)

    clean = analyzed()
    assert clean["findings"] == []
    # One check per principal, policy and kind (per 100 actions) asks about every other team at once; the team's own
    # permission set role apart, asked all but the iam:GetRole hyp set-cluster-context needs (isolation.NEEDED).
    actions, kinds = isolation.actions_by_kind(), {r["kind"] for r in resources} & set(isolation.ANALYZED_KINDS)
    assert kinds == {"s3_objects", "sso_role"}
    per_team = sum(-(-len(actions[kind]) // isolation.ANALYZER_LIMIT) for kind in kinds) + -(-(len(actions["sso_role"]) - 1) // isolation.ANALYZER_LIMIT)
    assert clean["checks"] == len(TEAMS) * per_team

    objects = {"Version": "2012-10-17", "Statement": [{"Sid": "AddedByHand", "Effect": "Allow", "Action": "s3:Get*", "Resource": f"arn:aws:s3:::{BUCKET}/*"}]}
    iam.put_role_policy(RoleName="AWSReservedSSO_hyperpod-vision_0123456789abcdef", PolicyName="added-by-hand", PolicyDocument=json.dumps(objects))
    roles = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "iam:PassRole", "Resource": f"arn:aws:iam::{account}:role/*"}]}
    policy_arn = iam.create_policy(PolicyName="pass-any-role", PolicyDocument=json.dumps(roles))["Policy"]["Arn"]
    iam.attach_role_policy(RoleName="AWSReservedSSO_hyperpod-nlp_0123456789abcdef", PolicyArn=policy_arn)
    findings = analyzed()["findings"]
    assert {(f["team"], f["policy"], f["owner"], f["resource_kind"]) for f in findings} == {
        ("vision", "added-by-hand", "nlp", "s3_objects"), ("vision", "added-by-hand", "research", "s3_objects"),
        ("nlp", policy_arn, "vision", "sso_role"), ("nlp", policy_arn, "research", "sso_role"),
        # nlp's own role too: the platform owns it (isolation.PLATFORM_OWNED), and iam:PassRole is no read it needs.
        ("nlp", policy_arn, "nlp", "sso_role"),
    }  # fmt: skip
    assert {tuple(f["statements"]) for f in findings if f["team"] == "vision"} == {("AddedByHand",)}
    lines = isolation_report.finding_lines({"findings": findings})
    vision_role = f"arn:aws:iam::{account}:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_hyperpod-vision_0123456789abcdef"
    assert f"vision's permission_set ({vision_role}) policy added-by-hand may grant access to nlp's s3_objects" in "\n".join(lines)
