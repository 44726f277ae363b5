"""plugins/module_utils/calls.py and the service files: every wrapper retries throttling, maps a missing resource to a value."""

from __future__ import annotations

import re
import threading

import boto3
import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import eks, iam, identity_center, sagemaker
from ansible_collections.hyperpod.tenancy.plugins.module_utils.calls import READS_IN_FLIGHT, each, together
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import EksError, IdentityCenterError, SageMakerError
from botocore.stub import Stubber

QUOTA_ID = "q1q1q1q1q1q1"


def stubbed(service):
    client = boto3.client(service, region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")
    return client, Stubber(client)


@pytest.mark.parametrize("code", ["ThrottlingException", "TooManyRequestsException", "ServiceUnavailableException"])
def test_a_throttled_read_is_retried_until_it_succeeds(sleeps, code):
    client, stub = stubbed("eks")
    stub.add_client_error("describe_cluster", service_error_code=code, http_status_code=429)
    stub.add_client_error("describe_cluster", service_error_code=code, http_status_code=429)
    stub.add_response("describe_cluster", {"cluster": {"name": "ml", "arn": "arn:aws:eks:us-east-1:123456789012:cluster/ml"}}, {"name": "ml"})
    with stub:
        cluster = eks.describe_cluster(client, name="ml")
    stub.assert_no_pending_responses()
    assert cluster["arn"].endswith(":cluster/ml")
    assert len(sleeps) == 2


def test_a_throttled_write_is_retried(sleeps):
    client, stub = stubbed("sagemaker")
    stub.add_client_error("delete_compute_quota", service_error_code="ThrottlingException", http_status_code=400)
    stub.add_response("delete_compute_quota", {}, {"ComputeQuotaId": QUOTA_ID})
    with stub:
        assert sagemaker.delete_compute_quota(client, ComputeQuotaId=QUOTA_ID) is True
    stub.assert_no_pending_responses()
    assert len(sleeps) == 1


def test_a_throttled_paginated_list_is_retried(sleeps):
    client, stub = stubbed("iam")
    stub.add_client_error("list_roles", service_error_code="Throttling", http_status_code=400)
    role = {"Path": iam.SSO_ROLE_PATH, "RoleName": "AWSReservedSSO_x_0123", "RoleId": "AROAEXAMPLEEXAMPLE01", "Arn": "arn:aws:iam::123456789012:role/x",
            "CreateDate": "2026-01-01T00:00:00Z"}
    stub.add_response("list_roles", {"Roles": [role]}, {"PathPrefix": iam.SSO_ROLE_PATH})
    with stub:
        assert [r["RoleName"] for r in iam.sso_roles(client)] == ["AWSReservedSSO_x_0123"]
    stub.assert_no_pending_responses()
    assert len(sleeps) == 1


def test_a_missing_resource_is_a_value_and_is_not_retried(sleeps):
    client, stub = stubbed("sagemaker")
    stub.add_client_error("describe_compute_quota", service_error_code="ResourceNotFound", http_status_code=400)
    stub.add_client_error("list_tags", service_error_code="ResourceNotFound", http_status_code=400)
    with stub:
        assert sagemaker.describe_compute_quota(client, ComputeQuotaId=QUOTA_ID) is None
        assert sagemaker.list_tags(client, "arn:aws:sagemaker:us-east-1:123456789012:compute-quota/" + QUOTA_ID) == {}
    assert sleeps == []


def test_any_other_error_raises_the_services_error_at_once(sleeps):
    client, stub = stubbed("eks")
    stub.add_client_error("describe_addon", service_error_code="InvalidParameterException", http_status_code=400)
    with stub, pytest.raises(EksError, match="Failed to describe EKS add-on"):
        eks.describe_addon(client, clusterName="ml", addonName="a")
    assert sleeps == []


def test_retries_give_up_after_ten_tries(sleeps):
    client, stub = stubbed("sagemaker")
    for _attempt in range(10):
        stub.add_client_error("describe_cluster", service_error_code="ThrottlingException", http_status_code=400)
    with stub, pytest.raises(SageMakerError, match="Failed to describe cluster"):
        sagemaker.describe_cluster(client, ClusterName="ml")
    stub.assert_no_pending_responses()
    assert len(sleeps) == 9


def test_tags_are_a_dict_both_ways():
    client, stub = stubbed("sagemaker")
    arn = "arn:aws:sagemaker:us-east-1:123456789012:compute-quota/" + QUOTA_ID
    stub.add_response("list_tags", {"Tags": [{"Key": "team", "Value": "vision"}]}, {"ResourceArn": arn})
    stub.add_response("add_tags", {}, {"ResourceArn": arn, "Tags": [{"Key": "cost-center", "Value": "cc1"}]})
    with stub:
        assert sagemaker.list_tags(client, arn) == {"team": "vision"}
        sagemaker.add_tags(client, arn, {"cost-center": "cc1"})
    stub.assert_no_pending_responses()


def test_a_response_comes_back_without_its_metadata():
    client, stub = stubbed("sagemaker")
    stub.add_response("describe_cluster", {"ClusterArn": "arn:aws:sagemaker:us-east-1:123456789012:cluster/abc", "ClusterName": "ml",
                                           "ClusterStatus": "InService", "InstanceGroups": []}, {"ClusterName": "ml"})
    with stub:
        assert "ResponseMetadata" not in sagemaker.describe_cluster(client, ClusterName="ml")


def test_group_ids_looks_up_each_name_once_and_spares_known_ones(monkeypatch):
    # The stubber answers in the order it was given: the lookups, run side by side by calls.each, go one after another
    # here (each's own tests prove the side by side).
    monkeypatch.setattr(identity_center, "each", lambda call, items: [call(item) for item in items])
    client, stub = stubbed("identitystore")
    store = "d-1234567890"
    group_arn = "arn:aws:identitystore::123456789012:identitystore/%s/group/g-1" % store
    stub.add_response("get_group_id", {"GroupId": "g-1", "IdentityStoreId": store, "GroupArn": group_arn},
                      {"IdentityStoreId": store, "AlternateIdentifier": {"UniqueAttribute": {"AttributePath": "displayName", "AttributeValue": "a"}}})
    stub.add_client_error("get_group_id", service_error_code="ResourceNotFoundException", http_status_code=400)
    with stub:
        found, missing = identity_center.group_ids(client, store, ["a", "b", "a", "k"], known={"k": "g-k"})
    stub.assert_no_pending_responses()
    assert found == {"a": "g-1", "k": "g-k"}
    assert missing == ["b"]


@pytest.mark.parametrize(
    "service, operation, request_args, code, message",
    [
        ("eks", "create_access_entry", {"clusterName": "ml", "principalArn": "arn:aws:iam::123456789012:role/r"},
         "InvalidParameterException", "The specified principalArn is invalid: invalid principal."),
        ("sagemaker", "create_domain", {"DomainName": "d", "AuthMode": "SSO", "DefaultUserSettings": {"ExecutionRole": "arn:aws:iam::123456789012:role/r"},
                                        "SubnetIds": ["subnet-1"], "VpcId": "vpc-1"}, "ValidationException",
         "Role arn:aws:iam::123456789012:role/r does not exist or SageMaker is not authorized to assume it."),
        ("sagemaker", "create_domain", {"DomainName": "d", "AuthMode": "SSO", "DefaultUserSettings": {"ExecutionRole": "arn:aws:iam::123456789012:role/r"},
                                        "SubnetIds": ["subnet-1"], "VpcId": "vpc-1"}, "ValidationException",
         "Could not assume role arn:aws:iam::123456789012:role/r. Please ensure that the role exists and allows principal 'sagemaker.amazonaws.com'."),
    ],
)
def test_a_role_iam_has_not_propagated_yet_is_waited_out(sleeps, service, operation, request_args, code, message):
    """Retried by code and message (module_utils/retry.py IAM_PROPAGATION): the role becomes usable and the call succeeds."""
    client, stub = stubbed(service)
    stub.add_client_error(operation, service_error_code=code, service_message=message, http_status_code=400)
    stub.add_client_error(operation, service_error_code=code, service_message=message, http_status_code=400)
    stub.add_response(operation, {"accessEntry": {"principalArn": request_args.get("principalArn")}} if service == "eks" else {})
    call = getattr(eks if service == "eks" else sagemaker, operation)
    with stub:
        call(client, **request_args)
    stub.assert_no_pending_responses()
    assert len(sleeps) == 2


def test_a_sagemaker_validation_error_that_is_no_propagation_fails_at_once(sleeps):
    client, stub = stubbed("sagemaker")
    stub.add_client_error("create_domain", service_error_code="ValidationException",
                          service_message="1 validation error detected: Value 'd d' at 'domainName' failed to satisfy constraint", http_status_code=400)
    with stub, pytest.raises(Exception, match="validation error detected"):
        sagemaker.create_domain(client, DomainName="d d", AuthMode="SSO", DefaultUserSettings={"ExecutionRole": "arn:aws:iam::123456789012:role/r"},
                                SubnetIds=["subnet-1"], VpcId="vpc-1")
    assert sleeps == []


def test_an_invalid_parameter_that_is_no_propagation_fails_at_once(sleeps):
    client, stub = stubbed("eks")
    stub.add_client_error("create_access_entry", service_error_code="InvalidParameterException",
                          service_message="The kubernetesGroups can't start with system:, eks:: system:masters.", http_status_code=400)
    with stub, pytest.raises(EksError, match="Failed to create the access entry"):
        eks.create_access_entry(client, clusterName="ml", principalArn="arn:aws:iam::123456789012:role/r", kubernetesGroups=["system:masters"])
    assert sleeps == []


def test_a_read_that_follows_the_resources_describe_raises_when_it_is_missing(sleeps):
    client, stub = stubbed("sso-admin")
    instance, arn = "arn:aws:sso:::instance/ssoins-0123456789abcdef", "arn:aws:sso:::permissionSet/ssoins-0123456789abcdef/ps-0123456789abcdef"
    stub.add_client_error("describe_permission_set", service_error_code="ResourceNotFoundException", http_status_code=400)
    stub.add_client_error("get_inline_policy_for_permission_set", service_error_code="ResourceNotFoundException", http_status_code=400)
    with stub:
        assert identity_center.describe_permission_set(client, InstanceArn=instance, PermissionSetArn=arn) is None
        with pytest.raises(IdentityCenterError, match="read the permission set's inline policy"):
            identity_center.get_inline_policy_for_permission_set(client, InstanceArn=instance, PermissionSetArn=arn)
    assert sleeps == []


def test_a_role_write_racing_another_is_retried(sleeps):
    client, stub = stubbed("iam")
    request = {"RoleName": "hyperpod-vision-execution", "PolicyName": "team-data", "PolicyDocument": "{}"}
    stub.add_client_error("put_role_policy", service_error_code="ConcurrentModification", http_status_code=409)
    stub.add_response("put_role_policy", {}, request)
    with stub:
        iam.put_role_policy(client, **request)
    stub.assert_no_pending_responses()
    assert len(sleeps) == 1


# calls.each: one read per item, a few in flight at once, answers in the items' order, the first error raised.

def test_reads_are_in_flight_together_but_never_more_than_the_bound():
    in_flight, most, lock = [0], [0], threading.Lock()
    # Each call waits until READS_IN_FLIGHT calls are in flight together: one after another, the barrier breaks.
    together = threading.Barrier(READS_IN_FLIGHT, timeout=10)

    def read(item):
        with lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
        together.wait()
        with lock:
            in_flight[0] -= 1
        return item * 10

    items = list(range(READS_IN_FLIGHT * 3))
    assert each(read, items) == [item * 10 for item in items]
    assert most[0] == READS_IN_FLIGHT


def test_the_first_failing_item_s_error_is_raised():
    def read(item):
        if item in (3, 5):
            raise ValueError("item %d" % item)
        return item

    with pytest.raises(ValueError, match="item 3"):
        each(read, range(8))


def test_one_item_or_none_is_read_in_this_thread():
    caller = threading.current_thread()
    assert each(lambda item: threading.current_thread() is caller, [1]) == [True]
    assert each(lambda item: item, []) == []


# calls.together: phases of different services in flight together, those of one service one after another, in order.

def test_phases_of_different_services_are_in_flight_together():
    # Each phase waits until all three are in flight: one after another, the barrier breaks.
    all_in_flight = threading.Barrier(3, timeout=10)

    def phase(answer):
        all_in_flight.wait()
        return answer

    assert together(("iam", lambda: phase(1)), ("eks", lambda: phase(2)), (("s3", "fsx"), lambda: phase(3))) == [1, 2, 3]


def test_a_phase_waits_for_the_earlier_phases_of_its_services():
    # The roles (IAM) and the entries (EKS) are in flight together; the pods (IAM and EKS) start once both have ended.
    both, pods_started, pods_seen_early = threading.Barrier(2, timeout=10), threading.Event(), []

    def ended_with(answer):
        both.wait()
        # A pods phase that did not wait would have started long before this times out.
        pods_seen_early.append(pods_started.wait(0.2))
        return answer

    def pods():
        pods_started.set()
        return "pods"

    assert together(("iam", lambda: ended_with("roles")), ("eks", lambda: ended_with("entries")), (("iam", "eks"), pods)) == ["roles", "entries", "pods"]
    assert pods_seen_early == [False, False]


def test_the_first_failing_phase_s_error_is_raised_whichever_fails_first():
    # The second phase fails first; the first phase's error is the one raised, as one after another would raise it.
    second_failed, ran = threading.Event(), []

    def first():
        second_failed.wait(10)
        raise ValueError("first")

    def second():
        try:
            raise ValueError("second")
        finally:
            second_failed.set()

    def after_the_first():
        ran.append("after the first")

    with pytest.raises(ValueError, match="first"):
        together(("iam", first), ("eks", second), ("iam", after_the_first))
    # The phase of a failed one's service is not run: one after another, it would not have been either.
    assert ran == []


def test_one_phase_or_none_is_run_in_this_thread():
    caller = threading.current_thread()
    assert together(("iam", lambda: threading.current_thread() is caller)) == [True]
    assert together() == []


def test_cost_and_usage_pages_are_followed_and_a_limit_exceeded_page_alone_is_asked_again(sleeps):
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import ce

    client, stub = stubbed("ce")
    request = {"TimePeriod": {"Start": "2026-01-01", "End": "2026-02-01"}, "Granularity": "MONTHLY", "Metrics": ["UnblendedCost"]}
    stub.add_response("get_cost_and_usage", {"ResultsByTime": [{"Estimated": False}], "NextPageToken": "t2"}, request)
    stub.add_client_error("get_cost_and_usage", service_error_code="LimitExceededException", http_status_code=400)
    stub.add_response("get_cost_and_usage", {"ResultsByTime": [{"Estimated": True}]}, dict(request, NextPageToken="t2"))
    with stub:
        assert ce.results_by_time(client, request) == [{"Estimated": False}, {"Estimated": True}]
    stub.assert_no_pending_responses()
    assert len(sleeps) == 1


def test_pod_identity_reads_of_a_missing_cluster_are_values_and_its_writes_raise(sleeps):
    client, stub = stubbed("eks")
    ids = {"clusterName": "ml", "associationId": "a-0123456789abcdef0"}
    stub.add_client_error("list_pod_identity_associations", service_error_code="ResourceNotFoundException", http_status_code=404)
    stub.add_client_error("describe_pod_identity_association", service_error_code="ResourceNotFoundException", http_status_code=404)
    stub.add_client_error("delete_pod_identity_association", service_error_code="ResourceNotFoundException", http_status_code=404)
    with stub:
        assert eks.list_pod_identity_associations(client, clusterName="ml", namespace="team-a", serviceAccount="team") == []
        assert eks.describe_pod_identity_association(client, **ids) is None
        with pytest.raises(EksError):
            eks.delete_pod_identity_association(client, **ids)
    stub.assert_no_pending_responses()
    assert sleeps == []


def test_sts_and_ec2_errors_raise_with_their_code(sleeps):
    from ansible_collections.hyperpod.tenancy.plugins.module_utils import ec2, sts
    from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError, error_code

    client, stub = stubbed("ec2")
    stub.add_client_error("describe_subnets", service_error_code="InvalidSubnetID.NotFound", http_status_code=400)
    with stub, pytest.raises(HyperPodError) as raised:
        ec2.describe_subnets(client, SubnetIds=["subnet-0123456789abcdef0"])
    assert error_code(raised.value) == "InvalidSubnetID.NotFound"
    client, stub = stubbed("sts")
    stub.add_client_error("get_caller_identity", service_error_code="ExpiredToken", http_status_code=403)
    stub.add_client_error("get_caller_identity", service_error_code="ExpiredToken", http_status_code=403)
    with stub:
        with pytest.raises(HyperPodError) as raised:
            sts.get_caller_identity(client)
        assert error_code(raised.value) == "ExpiredToken"
        with pytest.raises(IdentityCenterError) as raised:
            sts.identity_center_caller(client)
        assert "hyperpod_identity_center" in str(raised.value)


SERVICE_FILES = {
    "access_analyzer.py", "amp.py", "budgets.py", "ce.py", "ec2.py", "eks.py", "fsx.py", "iam.py", "identity_center.py", "managed_grafana.py",
    "s3.py", "sagemaker.py", "sts.py",
}


def test_every_aws_call_is_declared_in_its_services_file():
    """No retry, error handler or paginator of an AWS call outside the service files (docs/development.md, "Where things go")."""
    from pathlib import Path

    plugins = Path(__file__).resolve().parents[4] / "plugins"
    elsewhere = re.compile(r"@aws_retry\(|\b(read|write|delete|listing|crud)\([A-Za-z]*Handler\b|_error_handler\(|\.get_paginator\(")
    found = [
        "%s:%d" % (path.relative_to(plugins), number)
        for path in sorted(plugins.rglob("*.py"))
        if not (path.parent.name == "module_utils" and path.name in SERVICE_FILES | {"calls.py", "errors.py", "retry.py"})
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if elsewhere.search(line)
    ]
    assert found == []
