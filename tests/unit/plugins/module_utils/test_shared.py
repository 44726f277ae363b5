"""plugins/module_utils/shared.py: the teams' domain ids and the cluster's capacity, read once per run."""

from __future__ import annotations

import threading

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import shared
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import LayerContext
from botocore.exceptions import ClientError

CLUSTER_ARN = "arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdef123456"


class Clients:
    """One fake client for every service; records each call and how many domains were asked per page."""

    def __init__(self, domains=(), cluster=None):
        self.domains = list(domains)
        self.cluster = cluster
        self.calls = []
        self.made = []

    def client(self, service, **kwargs):
        self.made.append(service)
        return self

    region = "us-east-1"
    check_mode = False

    def get_paginator(self, name):
        fake = self

        class Pages:
            def paginate(self, PaginationConfig=None, **kwargs):  # noqa: N803 - botocore's name
                fake.calls.append((name, PaginationConfig))
                return self

            def build_full_result(self):
                if name == "list_instances":
                    return {"Instances": [{"InstanceArn": "arn:aws:sso:::instance/ssoins-1", "IdentityStoreId": "d-1"}]}
                return {"Domains": list(fake.domains)}

        return Pages()

    def describe_cluster(self, **kwargs):
        self.calls.append(("describe_cluster", kwargs))
        if "name" in kwargs:  # EKS
            return {"cluster": {"arn": "arn:aws:eks:us-east-1:123456789012:cluster/ml-shared-eks"}}
        if self.cluster is None:
            raise ClientError({"Error": {"Code": "ResourceNotFound", "Message": "no cluster"}}, "DescribeCluster")
        return self.cluster

    def get_caller_identity(self):
        return {"Account": "123456789012"}

    def get_account_summary(self):
        return {"SummaryMap": {"Roles": 10, "RolesQuota": 1000}}


def summary(name, domain_id, status="InService"):
    return {"DomainName": name, "DomainId": domain_id, "Status": status, "DomainArn": "arn:aws:sagemaker:::domain/" + domain_id}


def test_domain_ids_come_from_one_list_of_the_largest_page():
    clients = Clients(
        domains=[
            summary("hyperpod-vision", "d-vision"),
            summary("hyperpod-nlp", "d-nlp-old", "Deleting"),
            summary("hyperpod-research", "d-r1"),
            summary("hyperpod-research", "d-r2"),
            summary("someone-else", "d-other"),
        ]
    )
    found = shared.domain_ids(clients, ["hyperpod-vision", "hyperpod-nlp", "hyperpod-research", "hyperpod-robotics"])
    # Being deleted, or two of one name: left for sagemaker_domain to look up (and wait for, or report).
    assert found == {"hyperpod-vision": "d-vision"}
    assert clients.calls == [("list_domains", {"PageSize": 100})]


@pytest.mark.parametrize("names, lists", [([], 0), (["hyperpod-vision"], 1)])
def test_domains_are_listed_only_when_a_team_has_a_workspace(names, lists):
    clients = Clients(domains=[summary("hyperpod-vision", "d-vision")])
    lookups = shared.read_team_lookups(LayerContext(clients), {}, team_groups={}, permission_set_names=[], subnet_ids=[], domain_names=names)
    assert len([c for c in clients.calls if c[0] == "list_domains"]) == lists
    assert lookups.get("domain_ids") == ({"hyperpod-vision": "d-vision"} if names else None)


def test_the_cluster_is_described_once_for_its_arn_and_its_capacity():
    cluster = {
        "ClusterArn": CLUSTER_ARN,
        "ClusterName": "ml-shared",
        "InstanceGroups": [
            {"InstanceType": "ml.p5.48xlarge", "TargetCount": 8, "CurrentCount": 7},
            {"InstanceType": "ml.p5.48xlarge", "TargetCount": 2, "CurrentCount": 2},
            {"InstanceType": "ml.g5.12xlarge", "TargetCount": 4, "CurrentCount": 0},
        ],
    }
    clients = Clients(cluster=cluster)
    facts = shared.read_shared(LayerContext(clients), "ml-shared", "ml-shared-eks")
    assert facts["cluster_arn"] == CLUSTER_ARN
    assert facts["cluster_capacity"] == {"ml.p5.48xlarge": 10, "ml.g5.12xlarge": 4}
    assert [c for c in clients.calls if c[0] == "describe_cluster" and "ClusterName" in c[1]] == [("describe_cluster", {"ClusterName": "ml-shared"})]


def test_a_cluster_still_to_be_created_has_no_arn_and_no_capacity():
    facts = shared.read_shared(LayerContext(Clients(cluster=None)), "ml-shared", "ml-shared-eks")
    assert facts["cluster_arn"] is None and facts["cluster_capacity"] is None


def test_a_run_makes_one_client_per_service():
    clients = Clients(domains=[summary("hyperpod-vision", "d-vision")], cluster={"ClusterArn": CLUSTER_ARN, "ClusterName": "ml-shared", "InstanceGroups": []})
    context = LayerContext(clients)
    facts = shared.read_shared(context, "ml-shared", "ml-shared-eks")
    shared.read_team_lookups(context, facts, team_groups={}, permission_set_names=[], subnet_ids=[], domain_names=["hyperpod-vision"])
    # sagemaker serves the cluster, the domains and their profiles; sso-admin and sts are asked once each.
    assert sorted(clients.made) == ["eks", "sagemaker", "sso-admin", "sts"]


MARK = {"managed-by": "hyperpod.tenancy"}
PS_ARN = "arn:aws:sso:::permissionSet/ssoins-1/ps-%s"


def lookups(ps_tags=None, domain_tags=None):
    """What read_team_lookups returns for the teams vision and nlp: their permission sets and domains with these tags."""
    found = {"permission_sets": {}, "domain_ids": {}, "domain_tags": {}}
    for team, tags in (ps_tags or {}).items():
        found["permission_sets"]["hyperpod-" + team] = {"permission_set_arn": PS_ARN % team, "name": "hyperpod-" + team, "tags": tags}
    for team, tags in (domain_tags or {}).items():
        found["domain_ids"]["hyperpod-" + team] = "d-" + team
        found["domain_tags"]["d-" + team] = tags
    return found


def team(name, adopt=(), state="present"):
    return {"name": name, "state": state, "adopt": list(adopt)}


def test_every_teams_foreign_or_unmarked_resource_is_one_problem_naming_team_resource_and_owner():
    found = lookups(
        ps_tags={"vision": {"owner": "platform-admins"}, "nlp": dict(MARK, team="nlp")},
        domain_tags={"vision": dict(MARK, team="vision"), "nlp": dict(MARK, team="research")},
    )
    problems = shared.owner_problems([team("vision"), team("nlp")], found, "hyperpod")
    assert len(problems) == 2, problems
    nlp, vision = problems
    assert nlp.startswith("team 'nlp': SageMaker domain hyperpod-nlp (d-nlp) belongs to team research (tag team=research), not to team nlp")
    arn = PS_ARN % "vision"
    assert vision.startswith("team 'vision': permission set hyperpod-vision (%s) exists and was not made by hyperpod.tenancy for team vision" % arn)
    assert "its tags: owner=platform-admins" in vision and "adds permission_set to hyperpod_adopt." in vision


def test_the_adopt_list_takes_over_an_unmarked_resource_but_never_another_teams():
    found = lookups(ps_tags={"vision": {}}, domain_tags={"vision": dict(MARK, team="nlp")})
    problems = shared.owner_problems([team("vision", adopt=["permission_set", "domain"])], found, "hyperpod")
    assert len(problems) == 1 and "SageMaker domain hyperpod-vision (d-vision) belongs to team nlp" in problems[0]
    assert shared.owner_problems([team("vision", adopt=["permission_set"])], lookups(ps_tags={"vision": {}}), "hyperpod") == []
    # Adopting another layer is no adoption of this one.
    assert len(shared.owner_problems([team("vision", adopt=["domain"])], lookups(ps_tags={"vision": {}}), "hyperpod")) == 1


def test_marked_resources_absent_teams_and_untagged_lookups_are_left_alone():
    found = lookups(ps_tags={"vision": dict(MARK, team="vision", extra="x")}, domain_tags={"vision": dict(MARK, team="vision")})
    assert shared.owner_problems([team("vision")], found, "hyperpod") == []
    # An offboarded team's permission set is its offboarding's to check; one read without its tags is its layer's.
    assert shared.owner_problems([team("vision", state="absent")], lookups(ps_tags={"vision": {}}), "hyperpod") == []
    untagged = lookups()
    untagged["permission_sets"]["hyperpod-vision"] = {"permission_set_arn": PS_ARN % "vision", "name": "hyperpod-vision"}
    assert shared.owner_problems([team("vision")], untagged, "hyperpod") == []


def test_the_team_tag_key_and_the_name_prefix_are_the_layers():
    found = {"permission_sets": {"ml-vision": {"permission_set_arn": PS_ARN % "vision", "name": "ml-vision", "tags": dict(MARK, Team="vision")}}}
    assert shared.owner_problems([team("vision")], found, "ml", {"team": "Team"}) == []
    assert "lacks the tags managed-by=hyperpod.tenancy, team=vision" in shared.owner_problems([team("vision")], found, "ml")[0]
    assert shared.owner_problems([team("vision")], found, "hyperpod") == []


class Tagged(Clients):
    """The fake clients with permission sets and tags: each tag read recorded."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.sets = {PS_ARN % team: "hyperpod-" + team for team in ("vision", "nlp")}

    def get_paginator(self, name):
        pages = super().get_paginator(name)
        fake = self

        class Paged:
            def paginate(self, **kwargs):
                fake.calls.append((name, kwargs.get("ResourceArn")))
                return self

            def build_full_result(self):
                if name == "list_permission_sets":
                    return {"PermissionSets": sorted(fake.sets)}
                if name in ("list_tags_for_resource", "list_tags"):
                    return {"Tags": [{"Key": "managed-by", "Value": "hyperpod.tenancy"}]}
                return pages.paginate().build_full_result()

        return Paged()

    def describe_permission_set(self, InstanceArn, PermissionSetArn):  # noqa: N803 - botocore's names
        return {"PermissionSet": {"PermissionSetArn": PermissionSetArn, "Name": self.sets[PermissionSetArn], "SessionDuration": "PT8H"}}


def test_the_tags_are_read_once_for_the_present_teams_and_handed_to_their_layers():
    clients = Tagged(domains=[summary("hyperpod-vision", "d-vision")])
    found = shared.read_team_lookups(
        LayerContext(clients), {"identity_center_instance_arn": "arn:aws:sso:::instance/ssoins-1", "account_id": "123456789012"},
        team_groups={}, permission_set_names=["hyperpod-vision", "hyperpod-nlp"], subnet_ids=[], domain_names=["hyperpod-vision"],
        tagged_permission_sets=["hyperpod-vision"],
    )
    assert found["permission_sets"]["hyperpod-vision"]["tags"] == {"managed-by": "hyperpod.tenancy"}
    # nlp is offboarded: its permission set is found, its tags are its offboarding's to read.
    assert "tags" not in found["permission_sets"]["hyperpod-nlp"]
    assert found["domain_tags"] == {"d-vision": {"managed-by": "hyperpod.tenancy"}}
    tag_reads = [c for c in clients.calls if c[0] in ("list_tags_for_resource", "list_tags")]
    assert sorted(tag_reads) == [("list_tags", "arn:aws:sagemaker:::domain/d-vision"), ("list_tags_for_resource", PS_ARN % "vision")]


def test_a_budget_is_checked_under_the_name_and_tag_keys_its_layer_gives_it():
    listed = {"budget": {"BudgetName": "cost-vision-monthly"}, "notifications": [], "tags": {"owner": "finops"}}
    found = {"budgets": {"cost-vision-monthly": listed, "hyperpod-nlp-monthly": dict(listed, tags=dict(MARK, Team="nlp"))}}
    teams = [team("vision"), team("nlp")]
    # Under the teams' prefix neither is vision's; the budget layer's prefix finds vision's, unmarked.
    problems = shared.owner_problems(teams, found, "hyperpod", None, "123456789012", budget_prefix="cost", budget_tag_keys={"team": "Team"})
    assert problems == [
        "team 'vision': budget cost-vision-monthly (account 123456789012) exists and was not made by hyperpod.tenancy for team vision "
        "(it lacks the tags Team=vision, managed-by=hyperpod.tenancy; its tags: owner=finops): refusing to change or delete it. "
        "To take it over, the platform adds budget to hyperpod_adopt.vision in the cluster file"
    ]
    assert shared.owner_problems([team("vision", adopt=["budget"])], found, "hyperpod", None, "1", budget_prefix="cost") == []
    # nlp's budget, marked under the budget layer's tag keys, is nlp's; under the teams' keys it would not be.
    assert shared.owner_problems([team("nlp")], found, "hyperpod", None, "1", budget_tag_keys={"team": "Team"}) == []
    assert len(shared.owner_problems([team("nlp")], found, "hyperpod", None, "1")) == 1
    # A budget that does not exist yet has nothing to check.
    assert shared.owner_problems([team("vision")], {"budgets": {"hyperpod-vision-monthly": {"budget": None, "notifications": []}}}, "hyperpod") == []


ACCOUNT = "123456789012"
ENTRY_ARN = "arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_hyperpod-%s_0123456789abcdef"
STUDIO_ARN = "arn:aws:iam::123456789012:role/hyperpod-%s-studio-execution"
POD_ROLE_ARN = "arn:aws:iam::123456789012:role/hyperpod-%s-pods"


def team_resources(role=None, entry=None, studio_entry=None, marker=None, quota=None, team_name="vision", pod_role=None, association=None):
    """What read_team_resources returns for one team: each of its resources (tags, or a marker's state) when given."""
    studio = shared.execution_role.role_arn(ACCOUNT, shared.execution_role.role_name(team_name, "hyperpod"))
    found = {"eks_cluster_name": "ml-shared-eks", "sso_role_arns": {"hyperpod-" + team_name: ENTRY_ARN % team_name}}
    if role is not None:
        found["execution_roles"] = {studio.rsplit("/", 1)[1]: {"role": {"Arn": studio, "Tags": [{"Key": k, "Value": v} for k, v in role.items()]}}}
    entries = {}
    for principal, tags in ((ENTRY_ARN % team_name, entry), (studio, studio_entry)):
        entries[principal] = {"principal_arn": principal, "access_entry": {"principalArn": principal, "tags": tags} if tags is not None else None}
    found["access_entries"] = entries
    if marker is not None:
        found["s3_markers"] = {team_name: dict({"bucket": "hyperpod-team-data", "tags": None, "objects": None}, **marker)}
    if quota is not None:
        found["compute_quotas"] = {team_name: {"name": "hyperpod-%s-quota" % team_name, "compute_quota_id": "q-" + team_name, "tags": quota}}
    if pod_role is not None or association is not None:
        role = {"Arn": POD_ROLE_ARN % team_name, "Tags": [{"Key": k, "Value": v} for k, v in pod_role.items()]} if pod_role is not None else None
        described = {"associationId": "a-1", "roleArn": POD_ROLE_ARN % "other", "tags": association} if association is not None else None
        found["pod_identities"] = {team_name: {"role": role, "association": described}}
    return found


def test_the_studio_execution_role_made_by_hand_is_the_teams_problem_unless_adopted():
    found = team_resources(role={"owner": "ml-platform"})
    problems = shared.owner_problems([team("vision")], found, "hyperpod", None, ACCOUNT)
    assert problems == [
        "team 'vision': IAM role %s exists and was not made by hyperpod.tenancy for team vision (it lacks the tags managed-by=hyperpod.tenancy, "
        "team=vision; its tags: owner=ml-platform): refusing to change or delete it. To take it over, the platform adds execution_role to "
        "hyperpod_adopt.vision in the cluster file"
        % (STUDIO_ARN % "vision")
    ]
    assert shared.owner_problems([team("vision", adopt=["execution_role"])], found, "hyperpod", None, ACCOUNT) == []
    assert shared.owner_problems([team("vision")], team_resources(role=dict(MARK, team="vision")), "hyperpod", None, ACCOUNT) == []
    # Another team's role is never taken over.
    other = team_resources(role=dict(MARK, team="nlp"))
    assert "belongs to team nlp" in shared.owner_problems([team("vision", adopt=["execution_role"])], other, "hyperpod", None, ACCOUNT)[0]


def test_both_access_entries_of_a_team_are_checked_and_only_its_own_is_adopted():
    found = team_resources(entry={}, studio_entry=dict(MARK, team="research"))
    problems = shared.owner_problems([team("vision")], found, "hyperpod", None, ACCOUNT)
    assert len(problems) == 2, problems
    assert problems[0].startswith(
        "team 'vision': access entry of %s on cluster ml-shared-eks exists and was not made by hyperpod.tenancy for team vision" % (ENTRY_ARN % "vision"))
    assert problems[1].startswith(
        "team 'vision': access entry of %s on cluster ml-shared-eks belongs to team research (tag team=research)" % (STUDIO_ARN % "vision"))
    # Adopting access_entry takes over the team's unmarked entry; the Studio entry, marked for research, stays refused.
    assert shared.owner_problems([team("vision", adopt=["access_entry"])], found, "hyperpod", None, ACCOUNT) == problems[1:]
    # Entries that do not exist (None) have nothing to check.
    assert shared.owner_problems([team("vision")], team_resources(), "hyperpod", None, ACCOUNT) == []


def test_the_s3_prefix_marker_and_unmarked_objects_are_checked_as_the_prefix_layer_checks_them():
    foreign = team_resources(marker={"tags": dict(MARK, team="nlp")})
    assert shared.owner_problems([team("vision", adopt=["s3_prefix"])], foreign, "hyperpod") == [
        "team 'vision': S3 prefix s3://hyperpod-team-data/vision/ (its ownership mark s3://hyperpod-team-data/_hyperpod/owners/vision) belongs to "
        "team nlp (tag team=nlp), not to team vision: refusing to change or delete it"
    ]
    # The old mark, until the prefix layer moves it, is checked the same way, and named.
    old = team_resources(marker={"tags": {"owner": "someone"}, "legacy": True})
    assert shared.owner_problems([team("vision")], old, "hyperpod")[0].startswith(
        "team 'vision': S3 prefix s3://hyperpod-team-data/vision/ (its old ownership mark, to be moved to "
        "s3://hyperpod-team-data/_hyperpod/owners/vision, s3://hyperpod-team-data/vision/) exists and was not made by hyperpod.tenancy")
    # Objects without a marker are someone's data: refused, unless adopted; an empty prefix is the team's to mark.
    unmarked = team_resources(marker={"objects": True})
    problems = shared.owner_problems([team("vision")], unmarked, "hyperpod")
    assert len(problems) == 1 and problems[0].startswith(
        "team 'vision': S3 prefix s3://hyperpod-team-data/vision/ holds objects but no ownership mark s3://hyperpod-team-data/_hyperpod/owners/vision")
    assert shared.owner_problems([team("vision", adopt=["s3_prefix"])], unmarked, "hyperpod") == []
    assert shared.owner_problems([team("vision")], team_resources(marker={"objects": False}), "hyperpod") == []
    assert shared.owner_problems([team("vision")], team_resources(marker={"tags": dict(MARK, team="vision")}), "hyperpod") == []


def test_a_broken_mark_or_a_retired_name_refuses_its_own_team_and_no_other():
    """Threat model (issue 36, cases 4 and 5): shared_info's check answers per team, so that one team's broken mark, or its
    retired name, refuses that team while the others converge; a team the platform lets inherit takes the entry."""
    found = team_resources(marker={"tags": {}})
    found["retired_names"] = {"research": {"team": "research", "gid": 20300, "offboarded_at": "2025-06-01T09:00:00Z", "kept": ["/fsx/research"]}}
    teams = [team("vision"), team("research"), dict(team("nlp"), storage={"gid": 20300}), team("speech")]
    problems, takes = shared.team_problems(teams, found, "hyperpod", inherit={"nlp": "research"}, data_bucket="hyperpod-team-data")
    assert sorted(problems) == ["research", "vision"] and takes == {"nlp": ["research"]}
    assert problems["vision"][0].startswith(
        "S3 prefix s3://hyperpod-team-data/vision/ (its ownership mark s3://hyperpod-team-data/_hyperpod/owners/vision) exists and was not made "
        "by hyperpod.tenancy for team vision (it lacks the tags managed-by=hyperpod.tenancy, team=vision; its tags: no tags)")
    assert problems["research"] == [
        "its name research is that of retired team research (gid 20300, offboarded 2025-06-01T09:00:00Z, its data kept: /fsx/research), recorded in "
        "s3://hyperpod-team-data/_hyperpod/retired/research: a new team must not read that data. Give the team another name and gid; or, for it "
        "to inherit that data, the platform sets hyperpod_inherit: {research: research} in the cluster file"]


def test_the_compute_quota_is_checked_by_its_tags_and_adopted_only_unmarked():
    found = team_resources(quota={"owner": "ops"})
    problems = shared.owner_problems([team("vision")], found, "hyperpod")
    assert len(problems) == 1 and problems[0].startswith(
        "team 'vision': compute quota hyperpod-vision-quota (q-vision) exists and was not made by hyperpod.tenancy for team vision")
    assert "adds quota to hyperpod_adopt." in problems[0]
    assert shared.owner_problems([team("vision", adopt=["quota"])], found, "hyperpod") == []
    research = team_resources(quota=dict(MARK, team="research"))
    assert "belongs to team research" in shared.owner_problems([team("vision", adopt=["quota"])], research, "hyperpod")[0]
    # An offboarded team's resources are its offboarding's to check.
    assert shared.owner_problems([team("vision", state="absent")], found, "hyperpod") == []


def test_the_pod_role_and_its_association_are_checked_as_the_namespace_layer_checks_them():
    found = team_resources(pod_role={"owner": "ml-platform"}, association=dict(MARK, team="research"))
    problems = shared.owner_problems([team("vision")], found, "hyperpod")
    assert len(problems) == 2, problems
    assert problems[0].startswith(
        "team 'vision': IAM role %s exists and was not made by hyperpod.tenancy for team vision" % (POD_ROLE_ARN % "vision"))
    assert "adds pod_role to hyperpod_adopt." in problems[0]
    assert problems[1].startswith("team 'vision': Pod Identity association a-1 of service account hyperpod-ns-vision/hyperpod-vision on cluster ml-shared-eks")
    assert "belongs to team research" in problems[1]
    # Adopting pod_role takes over the unmarked role; the association marked for research stays refused.
    assert shared.owner_problems([team("vision", adopt=["pod_role"])], found, "hyperpod") == problems[1:]
    marked = team_resources(pod_role=dict(MARK, team="vision"), association=dict(MARK, team="vision"))
    assert shared.owner_problems([team("vision")], marked, "hyperpod") == []


class Owned(Clients):
    """The fake clients of read_team_resources: every call recorded by operation, with these answers."""

    def __init__(self, roles=(), entries=(), markers=(), quotas=(), associations=()):
        super().__init__()
        self.roles, self.entries, self.markers, self.quotas = set(roles), set(entries), dict(markers), list(quotas)
        self.associations = set(associations)

    def _missing(self, code, operation):
        return ClientError({"Error": {"Code": code, "Message": "missing"}}, operation)

    def list_pod_identity_associations(self, clusterName, namespace, serviceAccount):  # noqa: N803 - botocore's names
        self.calls.append(("ListPodIdentityAssociations", namespace))
        return {"associations": [{"associationId": "a-" + namespace}] if namespace in self.associations else []}

    def describe_pod_identity_association(self, clusterName, associationId):  # noqa: N803 - botocore's names
        self.calls.append(("DescribePodIdentityAssociation", associationId))
        return {"association": {"associationId": associationId, "roleArn": "arn:role", "tags": {"team": "vision"}}}

    def get_role(self, RoleName):  # noqa: N803 - botocore's names
        self.calls.append(("GetRole", RoleName))
        if RoleName not in self.roles:
            raise self._missing("NoSuchEntity", "GetRole")
        return {"Role": {"RoleName": RoleName, "Arn": "arn:aws:iam::123456789012:role/" + RoleName, "Tags": [], "CreateDate": "2026"}}

    def describe_access_entry(self, clusterName, principalArn):  # noqa: N803 - botocore's names
        self.calls.append(("DescribeAccessEntry", principalArn))
        if principalArn not in self.entries:
            raise self._missing("ResourceNotFoundException", "DescribeAccessEntry")
        return {"accessEntry": {"principalArn": principalArn, "tags": {}, "createdAt": "2026"}}

    def get_object_tagging(self, Bucket, Key):  # noqa: N803 - botocore's names
        self.calls.append(("GetObjectTagging", Key))
        if Key not in self.markers:
            raise self._missing("NoSuchKey", "GetObjectTagging")
        return {"TagSet": [{"Key": k, "Value": v} for k, v in self.markers[Key].items()]}

    def list_objects_v2(self, Bucket, Prefix, MaxKeys):  # noqa: N803 - botocore's names
        self.calls.append(("ListObjectsV2", Prefix))
        return {"Contents": [{"Key": Prefix + "data.csv"}]}

    def get_paginator(self, name):
        fake = self

        class Paged:
            def paginate(self, **kwargs):
                fake.calls.append((name, kwargs.get("ClusterArn") or kwargs.get("ResourceArn") or kwargs.get("Prefix")))
                self.prefix = kwargs.get("Prefix") or ""
                return self

            def build_full_result(self):
                if name == "list_compute_quotas":
                    return {"ComputeQuotaSummaries": fake.quotas}
                if name == "list_objects_v2":
                    return {"Contents": [{"Key": key} for key in sorted(fake.markers) if key.startswith(self.prefix)]}
                return {"Tags": [{"Key": "team", "Value": "vision"}]}

        return Paged()


def test_the_resources_are_read_once_each_for_the_present_teams_and_handed_on_as_their_layers_take_them():
    studio = "arn:aws:iam::123456789012:role/hyperpod-vision-studio-execution"
    quotas = [
        {"Name": name, "ComputeQuotaId": quota_id, "ComputeQuotaArn": "arn:" + quota_id, "Status": status, "ComputeQuotaTarget": {"TeamName": owner},
         "ComputeQuotaConfig": {"ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Count": count}]}}
        for name, quota_id, status, owner, count in (
            ("hyperpod-vision-quota", "q-1", "Created", "vision", 2), ("old", "q-0", "Deleting", "nlp", 5), ("hyperpod-nlp-quota", "q-2", "Created", "nlp", 3),
        )
    ]
    markers = {"_hyperpod/owners/vision": {"team": "vision"}, "_hyperpod/owners/gone": {"team": "gone", "hyperpod.tenancy/gid": "20500"}}
    clients = Owned(roles=["hyperpod-vision-studio-execution"], entries=[ENTRY_ARN % "vision"], markers=markers, quotas=quotas)
    facts = {"account_id": ACCOUNT, "eks_cluster_arn": "arn:eks", "eks_cluster_name": "ml-shared-eks", "cluster_arn": CLUSTER_ARN,
             "sso_role_arns": {"hyperpod-vision": ENTRY_ARN % "vision"}}
    teams = [dict(team("vision"), quota={"resources": []}), dict(team("nlp"), workspace={"enabled": False}), team("research", state="absent")]
    found = shared.read_team_resources(LayerContext(clients), facts, teams, "hyperpod", "hyperpod-team-data")
    # What each layer would change, once: vision's role and entries, one listing of the marks and each mark read (gone's
    # too: a team no longer in the file, whose name and gid its mark claims), nlp's prefix listed as it has none (and as it
    # holds objects, its mark read again), one quota list, one listing of the ledger of retired names.
    # (Several are in flight at once: their order is not the teams'.)
    assert sorted(clients.calls) == sorted([
        ("GetRole", "hyperpod-vision-studio-execution"),
        ("DescribeAccessEntry", ENTRY_ARN % "vision"), ("DescribeAccessEntry", studio),
        ("list_objects_v2", "_hyperpod/owners/"), ("GetObjectTagging", "_hyperpod/owners/vision"), ("GetObjectTagging", "_hyperpod/owners/gone"),
        ("ListObjectsV2", "nlp/"), ("GetObjectTagging", "_hyperpod/owners/nlp"), ("list_objects_v2", "_hyperpod/retired/"),
        ("list_compute_quotas", CLUSTER_ARN), ("list_tags", "arn:q-1"),
    ])
    # As the layers' ``known`` takes them: the role's CreateDate (its access entry must not be older) but no other date.
    assert found["execution_roles"] == {"hyperpod-vision-studio-execution": {"role": {
        "RoleName": "hyperpod-vision-studio-execution", "Arn": "arn:aws:iam::123456789012:role/hyperpod-vision-studio-execution", "Tags": [],
        "CreateDate": "2026"}}}
    assert found["access_entries"] == {
        ENTRY_ARN % "vision": {"principal_arn": ENTRY_ARN % "vision", "access_entry": {"principalArn": ENTRY_ARN % "vision", "tags": {}, "createdAt": "2026"}},
        studio: {"principal_arn": studio, "access_entry": None},
    }
    assert found["s3_markers"] == {
        "vision": {"bucket": "hyperpod-team-data", "tags": {"team": "vision"}, "legacy": False, "objects": None},
        "nlp": {"bucket": "hyperpod-team-data", "tags": None, "legacy": False, "objects": True},
    }
    assert found["s3_owner_marks"] == {"gone": {"team": "gone", "hyperpod.tenancy/gid": "20500"}}
    assert found["retired_names"] == {}
    # nlp has no quota in its team file: its quota is no layer's to change.
    assert found["compute_quotas"] == {
        "vision": {"name": "hyperpod-vision-quota", "compute_quota_id": "q-1", "tags": {"team": "vision"}, "guaranteed": {"ml.p5.48xlarge": 2}}}
    # What every quota guarantees, nlp's too (its team file has none, its quota still takes instances); not one being deleted.
    assert found["compute_quota_guaranteed"] == {"ml.p5.48xlarge": 5}


def test_when_two_resource_reads_fail_the_error_is_the_first_in_their_order_whichever_fails_first():
    s3_failed = threading.Event()

    class Refused(Owned):
        def get_role(self, RoleName):  # noqa: N803 - botocore's names
            # The S3 marker read (a later phase) fails first; the execution role's error (the first phase) is the one raised.
            s3_failed.wait(10)
            raise self._missing("AccessDenied", "GetRole")

        def get_object_tagging(self, Bucket, Key):  # noqa: N803 - botocore's names
            try:
                raise self._missing("AccessDenied", "GetObjectTagging")
            finally:
                s3_failed.set()

    facts = {"account_id": ACCOUNT, "eks_cluster_arn": "arn:eks", "eks_cluster_name": "ml-shared-eks", "cluster_arn": CLUSTER_ARN}
    with pytest.raises(HyperPodError, match="Failed to get role"):
        shared.read_team_resources(LayerContext(Refused()), facts, [team("vision")], "hyperpod", "hyperpod-team-data")
    assert s3_failed.is_set()


def test_with_pod_roles_each_team_with_a_quota_has_its_pod_role_and_association_read_once():
    quotas = [{"Name": "hyperpod-vision-quota", "ComputeQuotaId": "q-1", "ComputeQuotaArn": "arn:q-1", "Status": "Created",
               "ComputeQuotaTarget": {"TeamName": "vision"}}]
    clients = Owned(roles=["hyperpod-vision-pods"], quotas=quotas, associations=["hyperpod-ns-vision"])
    facts = {"account_id": ACCOUNT, "eks_cluster_arn": "arn:eks", "eks_cluster_name": "ml-shared-eks", "cluster_arn": CLUSTER_ARN}
    teams = [dict(team("vision"), quota={"resources": []}, workspace={"enabled": False}), dict(team("nlp"), workspace={"enabled": False})]
    found = shared.read_team_resources(LayerContext(clients), facts, teams, "hyperpod", pod_roles=True)
    pod_reads = [call for call in clients.calls if call[0] in ("ListPodIdentityAssociations", "DescribePodIdentityAssociation")
                 or call == ("GetRole", "hyperpod-vision-pods")]
    # nlp has no quota, so no namespace and no pod role: only vision's are read.
    assert sorted(pod_reads) == sorted([
        ("GetRole", "hyperpod-vision-pods"), ("ListPodIdentityAssociations", "hyperpod-ns-vision"),
        ("DescribePodIdentityAssociation", "a-hyperpod-ns-vision")])
    assert found["pod_identities"] == {"vision": {
        "role": {"RoleName": "hyperpod-vision-pods", "Arn": "arn:aws:iam::123456789012:role/hyperpod-vision-pods", "Tags": [], "CreateDate": "2026"},
        "association": {"associationId": "a-hyperpod-ns-vision", "roleArn": "arn:role", "tags": {"team": "vision"}}}}
    # Without pod_roles (no kubeconfig in the run), none of them.
    clients.calls.clear()
    assert "pod_identities" not in shared.read_team_resources(LayerContext(clients), facts, teams, "hyperpod")
    assert ("GetRole", "hyperpod-vision-pods") not in clients.calls


class Described(Owned):
    """Owned, telling when an access entry has been described."""

    def __init__(self, **answers):
        super().__init__(**answers)
        self.described = threading.Event()

    def describe_access_entry(self, clusterName, principalArn):  # noqa: N803 - botocore's names
        answer = super().describe_access_entry(clusterName, principalArn)
        self.described.set()
        return answer


def test_the_access_entries_are_read_once_iam_has_listed_the_sso_roles_while_identity_center_is_still_read():
    clients = Described(entries=[ENTRY_ARN % "vision"])
    facts = {"account_id": ACCOUNT, "eks_cluster_arn": "arn:eks", "eks_cluster_name": "ml-shared-eks"}
    found, listed = {}, []

    def permission_sets():
        # Identity Center's phase of the lookups ends only once EKS has answered: the two are in flight together.
        return {"permission_sets": {"overlapped": clients.described.wait(5)}}

    def sso_roles():
        listed.append(list(clients.calls))
        return {"sso_role_arns": {"hyperpod-vision": ENTRY_ARN % "vision"}}

    lookups = [("sso-admin", permission_sets), (("iam", shared.SSO_ROLES), sso_roles)]
    vision = dict(team("vision"), workspace={"enabled": False})
    shared.read_phases(lookups + shared.team_resource_phases(LayerContext(clients), facts, found, [vision], "hyperpod"), found)
    assert found["permission_sets"] == {"overlapped": True}
    # The entry of the role IAM listed, described after the listing and not before.
    assert listed == [[]] and clients.calls == [("DescribeAccessEntry", ENTRY_ARN % "vision")]
    assert found["access_entries"][ENTRY_ARN % "vision"]["access_entry"]["principalArn"] == ENTRY_ARN % "vision"


def quota_lookups(roles=10):
    """vision has its permission set, provisioned, and its three roles; nlp has none of them yet."""
    studio = dict((team, shared.execution_role.role_name(team, "hyperpod")) for team in ("vision", "nlp"))
    return {
        "identity_center_instance_arn": "arn:aws:sso:::instance/ssoins-1",
        "permission_sets": {"hyperpod-vision": {"name": "hyperpod-vision", "permission_set_arn": PS_ARN % "vision"}},
        "permission_set_count": 3,
        "provisioned_permission_sets": {ACCOUNT: [PS_ARN % "vision", PS_ARN % "platform"]},
        "sso_role_arns": {"hyperpod-vision": ENTRY_ARN % "vision"},
        "execution_roles": {studio["vision"]: {"role": {"Arn": "arn:aws:iam::%s:role/%s" % (ACCOUNT, studio["vision"])}}, studio["nlp"]: {"role": None}},
        "pod_identities": {"vision": {"role": {"Arn": "arn:aws:iam::%s:role/hyperpod-vision-pods" % ACCOUNT}}, "nlp": {"role": None}},
        "iam_account_summary": {"Roles": roles, "RolesQuota": 1000},
    }


def test_the_teams_new_permission_sets_and_roles_are_counted_against_each_quota_up_to_it():
    teams = [team("vision"), team("nlp"), team("robotics", state="absent")]
    # nlp adds a permission set (3 + 1), its provisioning (2 + 1) and three roles (997 + 3): each at its quota, none beyond.
    at_quota = {"permission_sets": 4, "provisioned_permission_sets_per_account": 3}
    assert shared.quota_problems(teams, quota_lookups(roles=997), "hyperpod", at_quota, ACCOUNT) == []
    beyond = {"permission_sets": 3, "provisioned_permission_sets_per_account": 2}
    assert shared.quota_problems(teams, quota_lookups(roles=998), "hyperpod", beyond, ACCOUNT) == [
        "Identity Center instance arn:aws:sso:::instance/ssoins-1 holds 3 permission sets: the 1 present teams without theirs (nlp) would make 4, "
        "beyond its quota of 3 (hyperpod_identity_center_quotas.permission_sets): ask AWS for an increase, then set it",
        "account %s holds 2 provisioned permission sets: the 1 present teams without theirs (nlp) would make 3, "
        "beyond its quota of 2 (hyperpod_identity_center_quotas.provisioned_permission_sets_per_account): ask AWS for an increase, then set it" % ACCOUNT,
        "account %s holds 998 IAM roles: the 3 new roles of 1 present teams (nlp: their Identity Center, Studio execution and Pod Identity roles) "
        "would make 1001, beyond its quota of 1000 roles per account (IAM's GetAccountSummary): ask AWS for an increase first" % ACCOUNT,
    ]


def test_a_permission_set_that_exists_but_is_not_provisioned_counts_against_the_account_only():
    found = quota_lookups()
    found["provisioned_permission_sets"] = {ACCOUNT: [PS_ARN % "platform"]}
    problems = shared.quota_problems([team("vision")], found, "hyperpod", {"permission_sets": 3, "provisioned_permission_sets_per_account": 1}, ACCOUNT)
    assert len(problems) == 1
    assert problems[0].startswith("account %s holds 1 provisioned permission sets: the 1 present teams without theirs (vision)" % ACCOUNT)


def test_hundreds_of_teams_beyond_a_quota_make_one_sentence():
    many = [team("team%03d" % index) for index in range(300)]
    found = {"permission_set_count": 0, "identity_center_instance_arn": "arn:aws:sso:::instance/ssoins-1"}
    problems = shared.quota_problems(many, found, "hyperpod", {"permission_sets": 250, "provisioned_permission_sets_per_account": 500}, ACCOUNT)
    assert problems == [
        "Identity Center instance arn:aws:sso:::instance/ssoins-1 holds 0 permission sets: the 300 present teams without theirs "
        "(team000, team001, team002, team003, team004 and 295 more) would make 300, beyond its quota of 250 "
        "(hyperpod_identity_center_quotas.permission_sets): ask AWS for an increase, then set it"
    ]
