"""The Identity Center connection (module_utils/identity_center.py): where sso-admin and identitystore calls go.

Without ``identity_center`` every client is the module's own (same account and Region); with it, only the
Identity Center clients change, and a role is assumed once per run, never for any other service.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import identity_center
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import LayerContext
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_model import check_team_file_with_places

from tests.unit.plugins.module_utils.test_team_model import CLUSTER, TEAMS

ROLE = "arn:aws:iam::222233334444:role/HyperPodIdentityCenterAdmin"
CREDENTIALS = {"AccessKeyId": "ASIAEXAMPLE", "SecretAccessKey": "secret-example", "SessionToken": "token-example"}


class Module:
    """AnsibleAWSModule's ``client(service, **extra)`` as it is called: records what each client got."""

    region = "us-east-1"
    check_mode = False

    def __init__(self, identity_center=None):
        self.params = {"identity_center": identity_center}
        self.made = []
        self.assumed = []

    def client(self, service, **extra):
        self.made.append((service, extra))
        return self

    def assume_role(self, **request):
        self.assumed.append(request)
        return {"Credentials": CREDENTIALS}


def extras(module):
    return dict(module.made)


def test_without_the_option_every_client_is_the_modules_own():
    for settings in (None, {}, {"region": None, "profile": None, "assume_role_arn": None}):
        module = Module(settings)
        context = LayerContext(module)
        for service in ("sso-admin", "identitystore", "sagemaker", "sts"):
            context.client(service)
        assert extras(module) == {"sso-admin": {}, "identitystore": {}, "sagemaker": {}, "sts": {}}
        assert module.assumed == []


def test_region_endpoint_and_profile_change_only_the_identity_center_clients():
    module = Module({"region": "eu-west-1", "endpoint_url": "http://127.0.0.1:9", "profile": "management"})
    context = LayerContext(module)
    for service in ("sso-admin", "identitystore", "sagemaker", "eks"):
        context.client(service)
    made = extras(module)
    expected = dict(region="eu-west-1", endpoint="http://127.0.0.1:9", profile_name="management",
                    aws_access_key_id=None, aws_secret_access_key=None, aws_session_token=None)
    assert made["sso-admin"] == expected and made["identitystore"] == expected
    assert made["sagemaker"] == {} and made["eks"] == {}


def test_the_role_is_assumed_once_per_run_with_the_modules_own_connection():
    module = Module({"region": "eu-west-1", "assume_role_arn": ROLE, "external_id": "ext-12345", "session_name": "ci-run"})
    context = LayerContext(module)
    for service in ("sso-admin", "identitystore", "sagemaker"):
        context.client(service)
    assert module.assumed == [{"RoleArn": ROLE, "RoleSessionName": "ci-run", "ExternalId": "ext-12345"}]
    # STS is asked with the module's own credentials; the temporary ones go to Identity Center's clients only.
    assert module.made[0] == ("sts", {})
    made = extras(module)
    assert made["sso-admin"] == made["identitystore"] == dict(
        region="eu-west-1", profile_name=None, aws_access_key_id="ASIAEXAMPLE", aws_secret_access_key="secret-example", aws_session_token="token-example"
    )
    assert made["sagemaker"] == {}


def test_layers_reading_in_threads_assume_the_role_once_and_share_each_client():
    class SlowModule(Module):
        def assume_role(self, **request):
            time.sleep(0.05)  # an STS answer: long enough for every thread to ask before it comes
            return super().assume_role(**request)

    module = SlowModule({"assume_role_arn": ROLE})
    context = LayerContext(module)
    start = threading.Barrier(8)

    def ask(service):
        start.wait()
        return context.client(service)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(ask, ["sso-admin", "identitystore"] * 4))
    assert len(module.assumed) == 1
    assert module.made[0][0] == "sts" and sorted(service for service, unused_extra in module.made[1:]) == ["identitystore", "sso-admin"]


def test_the_session_name_defaults_and_the_profile_is_the_source_of_the_role():
    module = Module({"assume_role_arn": ROLE, "profile": "source"})
    LayerContext(module).client("sso-admin")
    assert module.assumed == [{"RoleArn": ROLE, "RoleSessionName": "hyperpod-tenancy"}]
    assert module.made[0] == ("sts", dict(profile_name="source", aws_access_key_id=None, aws_secret_access_key=None, aws_session_token=None))


@pytest.mark.parametrize(
    "settings, field, words",
    [
        ({"region": "Europe"}, "hyperpod_identity_center.region", "is not an AWS Region name"),
        ({"assume_role_arn": "HyperPodAdmin"}, "hyperpod_identity_center.assume_role_arn", "is not an IAM role ARN"),
        ({"session_name": "ci"}, "hyperpod_identity_center.session_name", "needs hyperpod_identity_center.assume_role_arn"),
        ({"assume_role_arn": ROLE, "session_name": "a b"}, "hyperpod_identity_center.session_name", "is not a role session name"),
        ({"regoin": "eu-west-1"}, "hyperpod_identity_center.regoin", "unknown key"),
        ({"region": 3}, "hyperpod_identity_center.region", "must be text"),
        ("eu-west-1", "hyperpod_identity_center", "must be a mapping"),
    ],
)
def test_the_validator_names_the_setting(settings, field, words):
    problems, unused_teams, unused_capacity, places = check_team_file_with_places(TEAMS, CLUSTER, identity_center_connection=settings)
    assert [p for p in problems if p.startswith("settings: %s: " % field) and words in p], problems
    assert ("settings", None, field) in places
    # The module refuses the same option before any call.
    if isinstance(settings, dict) and not isinstance(settings.get("region"), int):
        module = Module(settings)
        with pytest.raises(InputError) as refused:
            LayerContext(module).client("sso-admin")
        assert field in refused.value.message and module.made == [] and module.assumed == []


def test_a_valid_connection_and_none_are_no_problem():
    for settings in (None, {}, {"region": "eu-west-1", "assume_role_arn": ROLE, "external_id": "ext-12345", "session_name": "ci-run"}):
        assert check_team_file_with_places(TEAMS, CLUSTER, identity_center_connection=settings)[0] == []


def test_the_external_id_is_never_in_a_message():
    problems = identity_center.connection_problems({"assume_role_arn": ROLE, "external_id": "x y secret"})
    assert problems == [("hyperpod_identity_center.external_id", "the value is not an external id (2 to 1224 of letters, digits and +=,.@:/-)")]
