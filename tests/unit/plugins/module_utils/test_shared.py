"""plugins/module_utils/shared.py: the teams' domain ids and the cluster's capacity, read once per run."""

from __future__ import annotations

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import shared
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
