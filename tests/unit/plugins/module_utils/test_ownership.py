"""What the collection may change or delete: only what it made for the team (naming.ownership_problem, team_dirs' marks).

The reproduction of issue 19: a team named ``platform`` must not take over an existing ``hyperpod-platform``
permission set, and the storage layer must not chown an existing ``/fsx/datasets`` to a team ``datasets``.
"""

from __future__ import annotations

import os

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import naming, team_dirs
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_model import check_team_file

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="changing ownership needs root")
CLUSTER = {"name": "ml-shared", "instance_groups": [{"name": "p5", "instance_type": "ml.p5.48xlarge", "count": 8}]}
MARKED = {"managed-by": "hyperpod.tenancy", "team": "platform", "cost-center": "CC-1"}


def test_the_marks_are_the_team_tags_the_collection_writes():
    assert naming.owner_marks("platform") == {"managed-by": "hyperpod.tenancy", "team": "platform"}
    assert naming.owner_marks("platform", {"team": "Team"}) == {"managed-by": "hyperpod.tenancy", "Team": "platform"}
    tags = naming.team_tags("platform", "CC-1", None, extra={"team": "nlp", "managed-by": "someone"})
    assert naming.ownership_problem("x", "platform", tags) is None


def test_a_resource_marked_for_the_team_may_be_changed():
    assert naming.ownership_problem("permission set hyperpod-platform", "platform", MARKED) is None


@pytest.mark.parametrize("adopt", [False, True])
def test_another_teams_resource_is_refused_naming_it_and_its_owner_even_adopted(adopt):
    problem = naming.ownership_problem("permission set hyperpod-platform (arn:ps)", "platform", dict(MARKED, team="nlp"), adopt=adopt)
    assert "permission set hyperpod-platform (arn:ps) belongs to team nlp (tag team=nlp), not to team platform" in problem


def test_an_unmarked_resource_is_refused_unless_adopted():
    tags = {"owner": "platform-admins"}
    problem = naming.ownership_problem("permission set hyperpod-platform (arn:ps)", "platform", tags, layer="permission_set")
    assert "permission set hyperpod-platform (arn:ps) exists and was not made by hyperpod.tenancy for team platform" in problem
    assert "its tags: owner=platform-admins" in problem and "the platform adds permission_set to hyperpod_adopt.platform in the cluster file" in problem
    assert naming.ownership_problem("permission set hyperpod-platform", "platform", tags, adopt=True) is None
    assert naming.ownership_problem("permission set hyperpod-platform", "platform", {}, adopt=True) is None


def test_the_team_tag_key_follows_tag_keys():
    tags = {"managed-by": "hyperpod.tenancy", "Team": "platform"}
    assert naming.ownership_problem("x", "platform", tags, {"team": "Team"}) is None
    assert naming.ownership_problem("x", "platform", tags) is not None


def test_adoption_is_the_platforms_and_names_only_known_layers():
    """Threat model 2: a team entry's own adopt list let a team named platform take the platform admins' permission set."""
    team = {"name": "ml-platform", "identity_center_group": "TeamP"}
    problems = check_team_file([dict(team, adopt=["permission_set"])], CLUSTER)[0]
    assert problems == ["team 'ml-platform': adopt: is the platform's decision, not the team's: the platform lists it in the cluster "
                        "file's hyperpod_adopt.ml-platform (docs/isolation.md)"]
    problems = check_team_file([team], CLUSTER, adopt={"ml-platform": ["permission_set", "directories", "grafana"]})[0]
    assert any("hyperpod_adopt.ml-platform[2]" in p and "'grafana' is not one of" in p for p in problems), problems
    problems, normalized, unused = check_team_file([team], CLUSTER, adopt={"ml-platform": ["permission_set"]})
    assert problems == [] and normalized[0]["adopt"] == ["permission_set"]
    assert check_team_file([team], CLUSTER)[1][0]["adopt"] == []
    assert check_team_file([team], CLUSTER, adopt={"nlp": ["quota"]})[0] == [
        "settings: hyperpod_adopt.nlp: names no team of the team file (teams: ml-platform)"]


def present(root, team="datasets", adopt=False, check_mode=False):
    return team_dirs.ensure_present(str(root), team, 0, 2500, "2770", [], check_mode, require_mount=False, adopt=adopt)


@as_root
def test_an_existing_directory_is_not_chowned_to_a_team(tmp_path):
    datasets = tmp_path / "datasets"
    datasets.mkdir(mode=0o755)
    (datasets / "imagenet").mkdir()
    before = os.stat(datasets)
    for check_mode in (True, False):
        with pytest.raises(InputError) as refused:
            present(tmp_path, check_mode=check_mode)
        assert f"{datasets} exists, owned by uid {before.st_uid} gid {before.st_gid} mode 0755" in refused.value.message
        assert "not made by hyperpod.tenancy for team datasets (it has no ownership mark" in refused.value.message
        assert "the platform adds directories to hyperpod_adopt.datasets in the cluster file" in refused.value.message
    after = os.stat(datasets)
    assert (after.st_uid, after.st_gid, after.st_mode) == (before.st_uid, before.st_gid, before.st_mode)
    assert sorted(os.listdir(tmp_path)) == ["datasets"]
    for on_remove in ("archive", "delete"):
        with pytest.raises(InputError, match="not made by hyperpod.tenancy for team datasets"):
            team_dirs.ensure_absent(str(tmp_path), "datasets", on_remove, False, confirm_delete="datasets", require_mount=False)
    assert (datasets / "imagenet").is_dir()


@as_root
def test_a_directory_the_collection_made_is_marked_and_managed_then_offboarded(tmp_path):
    changed, unused, unused_2, details = present(tmp_path)
    assert changed and details["ownership_mark"] == str(tmp_path / ".hyperpod-tenancy" / "datasets")
    mark = tmp_path / ".hyperpod-tenancy" / "datasets"
    assert "%04o" % (os.stat(mark).st_mode & 0o7777) == "0644"
    assert "%04o" % (os.stat(mark.parent).st_mode & 0o7777) == "0755"
    os.chmod(tmp_path / "datasets", 0o777)
    changed, unused, after, unused_2 = present(tmp_path)
    assert changed and after[str(tmp_path / "datasets")]["mode"] == "2770"
    assert present(tmp_path)[0] is False
    changed = team_dirs.ensure_absent(str(tmp_path), "datasets", "delete", False, confirm_delete="datasets", require_mount=False)[0]
    assert changed and not (tmp_path / "datasets").exists() and not mark.exists()


@as_root
def test_a_directory_swapped_in_under_the_teams_name_is_refused(tmp_path):
    present(tmp_path)
    os.rename(tmp_path / "datasets", tmp_path / "moved")
    (tmp_path / "datasets").mkdir()
    with pytest.raises(InputError, match="its ownership mark .* names team datasets, inode"):
        present(tmp_path, adopt=True)


@as_root
def test_another_teams_mark_is_refused(tmp_path):
    present(tmp_path, team="nlp")
    os.rename(tmp_path / ".hyperpod-tenancy" / "nlp", tmp_path / ".hyperpod-tenancy" / "datasets")
    (tmp_path / "datasets").mkdir()
    with pytest.raises(InputError, match="names team nlp"):
        present(tmp_path, adopt=True)


@as_root
def test_adopting_takes_over_an_unmarked_directory_and_marks_it(tmp_path):
    (tmp_path / "datasets").mkdir(mode=0o755)
    with pytest.raises(InputError):
        present(tmp_path)
    changed, before, after, unused = present(tmp_path, adopt=True, check_mode=True)
    assert changed and not (tmp_path / ".hyperpod-tenancy").exists()
    changed, before, after, unused = present(tmp_path, adopt=True)
    assert changed and after[str(tmp_path / "datasets")] == {"uid": 0, "gid": 2500, "mode": "2770"}
    assert present(tmp_path)[0] is False  # marked now: no adopt needed


def platform_sso_role(seeded):
    """(eks, iam, cluster, role): the role Identity Center made for a team named platform, before the collection knew it."""
    sandbox, seed = seeded
    eks, iam = sandbox.boto3_client("eks"), sandbox.boto3_client("iam")
    trust = '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "sso.amazonaws.com"}, "Action": "sts:AssumeRole"}]}'
    role = iam.create_role(RoleName="AWSReservedSSO_hyperpod-platform_0a1b2c3d4e5f6a7b", AssumeRolePolicyDocument=trust)["Role"]
    return eks, iam, seed["eks_cluster_arn"].rsplit("/", 1)[1], role


def test_offboarding_deletes_only_an_access_entry_marked_for_the_team(seeded):
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import access_entry

    eks, iam, cluster, role = platform_sso_role(seeded)
    entry = eks.create_access_entry(clusterName=cluster, principalArn=role["Arn"], tags={"owner": "platform-admins"})["accessEntry"]
    params = access_entry.apply_team({"team": "platform", "name_prefix": "hyperpod", "cluster_name": cluster, "state": "absent"})
    for check_mode in (True, False):
        with pytest.raises(InputError) as refused:
            access_entry.converge_entry(eks, iam, params, check_mode)
        assert f"access entry of {role['Arn']} on cluster {cluster} exists and was not made by hyperpod.tenancy for team platform" in refused.value.message
        assert "its tags: owner=platform-admins" in refused.value.message
    assert eks.describe_access_entry(clusterName=cluster, principalArn=role["Arn"])["accessEntry"]["accessEntryArn"] == entry["accessEntryArn"]
    eks.tag_resource(resourceArn=entry["accessEntryArn"], tags={"managed-by": "hyperpod.tenancy", "team": "platform"})
    changed, before, after = access_entry.converge_entry(eks, iam, params, False)[:3]
    assert changed and after == {}
    assert not [p for p in eks.list_access_entries(clusterName=cluster)["accessEntries"] if p == role["Arn"]]


def test_onboarding_changes_only_an_access_entry_marked_for_the_team_or_adopted(seeded):
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import access_entry

    eks, iam, cluster, role = platform_sso_role(seeded)
    eks.create_access_entry(clusterName=cluster, principalArn=role["Arn"], kubernetesGroups=["platform-admins"], tags={"owner": "platform-admins"})

    def present(adopt=False, check_mode=False):
        params = {"team": "platform", "name_prefix": "hyperpod", "cluster_name": cluster, "state": "present", "principal_arn": role["Arn"],
                  "kubernetes_groups": ["hyperpod-ns-platform-namespace-level-group"], "access_policies": [], "type": "STANDARD",
                  "tags": {"managed-by": "hyperpod.tenancy", "team": "platform"}, "purge_tags": True, "adopt": adopt}
        return access_entry.converge_entry(eks, iam, access_entry.apply_team(params), check_mode)[:3]

    for check_mode in (True, False):
        with pytest.raises(InputError) as refused:
            present(check_mode=check_mode)
        assert f"access entry of {role['Arn']} on cluster {cluster} exists and was not made by hyperpod.tenancy for team platform" in refused.value.message
        assert "adds access_entry to hyperpod_adopt." in refused.value.message
    entry = eks.describe_access_entry(clusterName=cluster, principalArn=role["Arn"])["accessEntry"]
    assert entry["kubernetesGroups"] == ["platform-admins"] and entry["tags"] == {"owner": "platform-admins"}

    changed, _before, after = present(adopt=True)
    assert changed and after["kubernetes_groups"] == ["hyperpod-ns-platform-namespace-level-group"]
    assert present() == (False, after, after), "marked now: no adopt needed, nothing to change"


# ---------------------------------------------------------------- user profiles in the team's domain


def _domain_params(seed, **overrides):
    base = {
        "state": "present", "team": "vision", "name_prefix": "hyperpod", "vpc_id": seed["vpc_id"], "subnet_ids": seed["subnet_ids"],
        "security_group_ids": seed["security_group_ids"], "app_network_access_type": "VpcOnly",
        "execution_role": seed["cluster_execution_role_arn"], "identity_center_group": "TeamVision",
        "identity_store_id": seed["identity_store_id"], "user_profiles": [{"name": "alice"}], "purge_user_profiles": True,
        "cost_center": "CC-1001", "wait_timeout": 60,
    }
    base.update(overrides)
    return base


def _profiles(sm, domain_id):
    return sorted(p["UserProfileName"] for p in sm.list_user_profiles(DomainIdEquals=domain_id)["UserProfiles"] if p["Status"] != "Deleting")


@pytest.fixture
def team_domain(seeded):
    """The team vision's domain, made by the collection with alice's profile, and bob's profile made in it by hand."""
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import domain

    sandbox, seed = seeded
    clients = sandbox.boto3_client
    unused, unused_2, unused_3, made = domain.DomainManager(clients, _domain_params(seed)).ensure_present()
    sm = clients("sagemaker")
    sm.create_user_profile(
        DomainId=made["domain_id"], UserProfileName="bob", SingleSignOnUserIdentifier="UserName", SingleSignOnUserValue="bob",
        Tags=[{"Key": "owner", "Value": "platform-admins"}],
    )
    domain.DomainManager(clients, _domain_params(seed))._settle_profile(made["domain_id"], "bob")
    sandbox.clear_requests()
    return sandbox, seed, made["domain_id"]


BOB_CHANGED = [{"name": "alice"}, {"name": "bob", "execution_role": "arn:aws:iam::123456789012:role/someone-elses"}]


@pytest.mark.parametrize("what, overrides", [
    ("purged", {}),
    ("updated", {"user_profiles": BOB_CHANGED, "purge_user_profiles": False}),
    ("offboarded", {"state": "absent"}),
])
def test_a_profile_made_by_hand_in_the_teams_domain_is_neither_changed_nor_deleted(team_domain, what, overrides):
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import domain

    sandbox, seed, domain_id = team_domain
    for check_mode in (True, False):
        manager = domain.DomainManager(sandbox.boto3_client, _domain_params(seed, **overrides), check_mode=check_mode)
        with pytest.raises(InputError) as refused:
            manager.ensure_absent() if what == "offboarded" else manager.ensure_present()
        message = refused.value.message
        assert f"user profile bob of SageMaker domain hyperpod-vision ({domain_id}) exists and was not made by hyperpod.tenancy for team vision" in message
        assert "its tags: owner=platform-admins" in message and "adds user_profiles to hyperpod_adopt." in message
        assert "user profile alice" not in message
    assert sandbox.writes() == []
    assert _profiles(sandbox.boto3_client("sagemaker"), domain_id) == ["alice", "bob"]


def test_another_teams_profile_is_refused_even_adopted(team_domain):
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import domain

    sandbox, seed, domain_id = team_domain
    sm = sandbox.boto3_client("sagemaker")
    arn = sm.describe_user_profile(DomainId=domain_id, UserProfileName="bob")["UserProfileArn"]
    sm.add_tags(ResourceArn=arn, Tags=[{"Key": "managed-by", "Value": "hyperpod.tenancy"}, {"Key": "team", "Value": "nlp"}])
    sandbox.clear_requests()
    with pytest.raises(InputError, match=r"user profile bob of SageMaker domain hyperpod-vision \(d-\w+\) belongs to team nlp \(tag team=nlp\)"):
        domain.DomainManager(sandbox.boto3_client, _domain_params(seed, adopt_user_profiles=True)).ensure_present()
    assert sandbox.writes() == []


def test_an_adopted_profile_is_marked_then_managed_and_offboarded(team_domain):
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import domain

    sandbox, seed, domain_id = team_domain
    sm = sandbox.boto3_client("sagemaker")
    arn = sm.describe_user_profile(DomainId=domain_id, UserProfileName="bob")["UserProfileArn"]
    wanted = _domain_params(seed, user_profiles=[{"name": "alice"}, {"name": "bob"}], adopt_user_profiles=True)
    check = domain.DomainManager(sandbox.boto3_client, wanted, check_mode=True).ensure_present()
    assert check[0] and check[1]["unmarked_user_profiles"] == ["bob"] and "unmarked_user_profiles" not in check[2]
    assert sandbox.writes() == []
    changed, before, after, unused = domain.DomainManager(sandbox.boto3_client, wanted).ensure_present()
    assert changed and before == check[1] and after == check[2]
    assert [w["operation"] for w in sandbox.writes()] == ["AddTags"]
    tags = {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=arn)["Tags"]}
    assert tags["managed-by"] == "hyperpod.tenancy" and tags["team"] == "vision" and tags["owner"] == "platform-admins"
    # Marked now: managed without adopt, and a rerun reads no profile's tags.
    sandbox.clear_requests()
    assert domain.DomainManager(sandbox.boto3_client, dict(wanted, adopt_user_profiles=False)).ensure_present()[0] is False
    assert sandbox.counts()[("sagemaker", "ListTags", "read")] == 1  # the domain's
    changed, unused, after, unused_2, unused_3 = domain.DomainManager(sandbox.boto3_client, _domain_params(seed, state="absent")).ensure_absent()
    assert changed and after == {}


# ---------------------------------------------------------------- every other layer, through its own converge


class SandboxContext:
    """What a layer takes from its module (layer.LayerContext), with the sandbox's clients."""

    layer = None

    def __init__(self, sandbox, check_mode):
        self.sandbox, self.check_mode = sandbox, check_mode

    def client(self, service):
        return self.sandbox.boto3_client(service)

    def account_id(self):
        return "123456789012"

    def warn(self, message):
        raise AssertionError(f"unexpected warning: {message}")


OWNER_TAGS = {"owner": "ml-infra"}


def _hand_made_execution_role(sandbox, seed):
    iam, name = sandbox.boto3_client("iam"), naming.studio_execution_role_name("platform")
    trust = '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}, "Action": "sts:AssumeRole"}]}'
    arn = iam.create_role(RoleName=name, AssumeRolePolicyDocument=trust, Tags=[{"Key": "owner", "Value": "ml-infra"}])["Role"]["Arn"]

    def state():
        return {t["Key"]: t["Value"] for t in iam.list_role_tags(RoleName=name)["Tags"]}

    return f"IAM role {arn}", {"data_bucket": seed["data_bucket"], "account_id": "123456789012"}, {}, state


def _hand_made_budget(sandbox, seed):
    budgets, name = sandbox.boto3_client("budgets"), naming.budget_name("platform")
    budgets.create_budget(
        AccountId="123456789012",
        Budget={"BudgetName": name, "BudgetLimit": {"Amount": "5000", "Unit": "USD"}, "TimeUnit": "MONTHLY", "BudgetType": "COST"},
        ResourceTags=[{"Key": "owner", "Value": "ml-infra"}],
    )

    def state():
        arn = f"arn:aws:budgets::123456789012:budget/{name}"
        return {t["Key"]: t["Value"] for t in budgets.list_tags_for_resource(ResourceARN=arn)["ResourceTags"]}

    return f"budget {name} (account 123456789012)", {"monthly_usd": 100, "account_id": "123456789012"}, {}, state


def _hand_made_s3_prefix(sandbox, seed):
    s3, bucket = sandbox.boto3_client("s3"), seed["data_bucket"]
    s3.put_object(Bucket=bucket, Key="platform/datasets/imagenet.tar", Body=b"someone else's data")

    def state():
        return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="platform/").get("Contents", []))

    # Keeping the data is never refused: only a deletion touches what is under the prefix.
    return f"S3 prefix s3://{bucket}/platform/", {"bucket": bucket}, {"on_remove": "delete", "confirm_delete": "platform"}, state


def _hand_made_quota(sandbox, seed):
    from tests.unit.sandbox.test_sagemaker_scheduler import create_hyperpod_cluster

    sm, name = sandbox.boto3_client("sagemaker"), naming.quota_name("platform")
    cluster_arn = create_hyperpod_cluster(sandbox, "ml-owned", seed["eks_cluster_arn"])
    quota_id = sm.create_compute_quota(
        Name=name, ClusterArn=cluster_arn,
        ComputeQuotaConfig={"ComputeQuotaResources": [{"InstanceType": "ml.g5.12xlarge", "Count": 1}]},
        ComputeQuotaTarget={"TeamName": "platform", "FairShareWeight": 1}, Tags=[{"Key": "owner", "Value": "ml-infra"}],
    )["ComputeQuotaId"]

    def state():
        described = sm.describe_compute_quota(ComputeQuotaId=quota_id)
        return described["ComputeQuotaConfig"], {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=described["ComputeQuotaArn"])["Tags"]}

    options = {"cluster": "ml-owned", "resources": [{"instance_type": "ml.g5.12xlarge", "count": 1}], "borrow_limit": 50, "wait_timeout": 60}
    return f"compute quota {name}", options, {}, state


HAND_MADE = {
    "execution_role": _hand_made_execution_role, "budget": _hand_made_budget, "s3_prefix": _hand_made_s3_prefix, "quota": _hand_made_quota,
}


@pytest.mark.parametrize("layer", sorted(HAND_MADE))
def test_a_resource_of_the_teams_name_made_by_hand_is_refused_then_taken_over_only_when_adopted(seeded, layer):
    """Issue 19's take-over by name, for the layers not covered above: refused when built (and predicted) and when
    offboarded, naming the resource, with no write; taken over only when adopted, then managed and offboarded."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
    from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_resources import LAYERS

    sandbox, seed = seeded
    what, options, offboarding, state = HAND_MADE[layer](sandbox, seed)
    (module,) = [entry for entry in LAYERS if entry[0] == layer]
    untouched = state()
    sandbox.clear_requests()

    def converge(check_mode, **changes):
        checked = ArgumentSpecValidator(**module[2]).validate({"team": "platform", **options, **changes})
        assert not checked.error_messages, checked.error_messages
        return module[4](SandboxContext(sandbox, check_mode), checked.validated_parameters)

    for changes in ({}, {"state": "absent", **offboarding}):
        for check_mode in (True, False):
            with pytest.raises(InputError) as refused:
                converge(check_mode, **changes)
            message = refused.value.message
            assert message.startswith(what) and "hyperpod.tenancy for team platform" in message, message
            assert f"adds {layer} to hyperpod_adopt." in message, message
    assert sandbox.writes() == [] and state() == untouched

    assert converge(False, adopt=True)["changed"]
    assert converge(False)["changed"] is False, "marked once adopted: the next run needs no adopt and changes nothing"
    assert converge(False, state="absent", **offboarding)["changed"]


def test_the_access_entry_read_earlier_in_the_run_is_checked_and_spares_describing_it(seeded):
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import access_entry

    eks, iam, cluster, role = platform_sso_role(seeded)
    eks.create_access_entry(clusterName=cluster, principalArn=role["Arn"], tags={"managed-by": "hyperpod.tenancy", "team": "nlp"})
    read = access_entry.known_entry(role["Arn"], eks.describe_access_entry(clusterName=cluster, principalArn=role["Arn"])["accessEntry"])
    assert isinstance(read["access_entry"]["createdAt"], str)  # a JSON value: it crosses processes as a module option

    class Counting:
        """The EKS client, counting DescribeAccessEntry."""

        described = 0

        def __getattr__(self, name):
            if name == "describe_access_entry":
                Counting.described += 1
            return getattr(eks, name)

    params = {"team": "platform", "name_prefix": "hyperpod", "cluster_name": cluster, "state": "present", "principal_arn": role["Arn"],
              "kubernetes_groups": None, "access_policies": None, "type": "STANDARD", "tags": None, "purge_tags": True, "adopt": True,
              "known": {"access_entry": read}}
    # The copy is checked as the entry is: marked for nlp, never taken over, and not described again.
    with pytest.raises(InputError, match="belongs to team nlp"):
        access_entry.converge_entry(Counting(), iam, access_entry.apply_team(dict(params)), True)
    assert Counting.described == 0
    # A copy of another principal's entry is not taken.
    with pytest.raises(InputError, match="belongs to team nlp"):
        access_entry.converge_entry(Counting(), iam, access_entry.apply_team(dict(params, known={"access_entry": dict(read, principal_arn="x")})), True)
    assert Counting.described == 1
