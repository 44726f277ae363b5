"""The one runner of every module (module_utils/layer.py): its result shape and its failures."""

from __future__ import annotations

import errno
import json

import boto3
import pytest
from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.testing import patch_module_args
from ansible_collections.amazon.aws.plugins.module_utils.modules import AnsibleAWSModule
from ansible_collections.hyperpod.tenancy.plugins.module_utils import engine
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import EksError, IamError, InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import AWSModule, ModuleFailure, converge_by_state, result, run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import NAME_PREFIX, STATE, options, wait
from botocore.exceptions import ClientError

pytestmark = pytest.mark.usefixtures("module_warnings")

OPTIONS = options(dict(name=dict(type="str", required=True), known=dict(type="dict")), STATE, NAME_PREFIX, wait(60))


def run(converge, args, capsys, module_class=AnsibleModule):
    with patch_module_args(args), pytest.raises(SystemExit):
        run_module(OPTIONS, converge, module_class=module_class)
    return json.loads(capsys.readouterr().out)


def warnings(out):
    return [warning["event"]["msg"] if isinstance(warning, dict) else warning for warning in out.get("warnings", [])]


class Thing(engine.Resource):
    """A resource recording what it was made from and which state the engine prepared it for; it exists when deleted."""

    def __init__(self, context, params):
        super(Thing, self).__init__(None, params, context.check_mode)
        self.made = (context.check_mode, params["name"], params["name_prefix"], params["wait_timeout"])
        self.prepared = None

    def prepare(self, state):
        self.prepared = state

    def read(self, fresh=False):
        return {"name": "x"} if self.prepared == "absent" else None

    def view(self, raw):
        return dict(raw)

    def desired(self, raw):
        return {"name": self.params["name"]}

    def predict(self, raw, desired):
        return dict(desired, made=list(self.made), prepared=self.prepared)

    def result(self, raw):
        return raw


@pytest.mark.parametrize("state, before, after", [("present", {}, {"name": "x"}), ("absent", {"name": "x"}, {})])
def test_converge_by_state_runs_the_engine_by_state_and_returns_one_result_shape(state, before, after, capsys):
    out = run(converge_by_state("thing", Thing), {"name": "x", "state": state, "_ansible_check_mode": True}, capsys)
    assert out["changed"] is True
    assert out["diff"] == {"before": before, "after": after}
    assert out["thing"] == ({"name": "x", "made": [True, "x", "hyperpod", 60], "prepared": "present"} if state == "present" else {})


def test_result_puts_the_keys_beside_changed_and_the_diff():
    assert result(True, {"a": 1}, {"a": 2}, thing={"a": 2}) == {"changed": True, "thing": {"a": 2}, "diff": {"before": {"a": 1}, "after": {"a": 2}}}


def test_a_refusal_fails_with_its_message(capsys):
    def converge(context, params):
        raise InputError(message="name: refused")

    out = run(converge, {"name": "x"}, capsys)
    assert out["failed"] and out["msg"] == "name: refused"


def test_a_module_failure_returns_what_it_carries(capsys):
    def converge(context, params):
        raise ModuleFailure("two problems", problems=["a", "b"], changed=True)

    out = run(converge, {"name": "x"}, capsys)
    assert out["failed"] and out["msg"] == "two problems"
    assert out["problems"] == ["a", "b"] and out["changed"] is True


def test_a_file_system_error_names_its_file_and_errno(capsys):
    def converge(context, params):
        raise OSError(errno.EACCES, "Permission denied", "/fsx/vision")

    out = run(converge, {"name": "x"}, capsys)
    assert out["failed"] and out["msg"] == "/fsx/vision: Permission denied" and out["errno"] == errno.EACCES


def refused(error, code):
    return error(message="Failed to create the thing", exception=ClientError({"Error": {"Code": code, "Message": "in use"}}, "CreateThing"))


class OtherRun:
    """A converge that loses the race to create ``losses`` times (another run made the thing), then converges."""

    def __init__(self, losses, error=EksError, code="ResourceInUseException"):
        self.losses, self.error, self.code, self.given = losses, error, code, []

    def __call__(self, context, params):
        self.given.append(params)
        if len(self.given) <= self.losses:
            raise refused(self.error, self.code)
        return result(False, {"name": "x"}, {"name": "x"}, thing={"read_from": "copy" if params.get("known") else "AWS"})


def test_a_create_refused_because_another_run_made_the_thing_converges_again_from_a_fresh_read(capsys):
    converge = OtherRun(losses=1)
    out = run(converge, {"name": "x", "known": {"thing": None}}, capsys, AWSModule)
    assert not out.get("failed") and out["thing"] == {"read_from": "AWS"}
    assert [params["known"] for params in converge.given] == [{"thing": None}, None]
    assert converge.given[1]["name"] == "x"
    assert warnings(out) == [
        "another run wrote what this run was writing (Failed to create the thing: ResourceInUseException); converging from what it made"
    ]
    # ansible-core returns the warnings itself; amazon.aws passing them too is deprecated.
    assert "deprecations" not in out, out["deprecations"]


@pytest.mark.parametrize("error, code", [(IamError, "AccessDenied"), (IamError, "LimitExceeded"), (EksError, "InvalidParameterException")])
def test_any_other_refusal_fails_at_once(error, code, capsys):
    converge = OtherRun(losses=1, error=error, code=code)
    out = run(converge, {"name": "x"}, capsys, AnsibleAWSModule)
    assert out["failed"] and out["msg"].startswith("Failed to create the thing: ") and out["error"]["code"] == code
    assert len(converge.given) == 1 and warnings(out) == []


def test_races_lost_round_after_round_fail_after_three(capsys):
    converge = OtherRun(losses=3, error=IamError, code="EntityAlreadyExists")
    out = run(converge, {"name": "x"}, capsys, AnsibleAWSModule)
    assert out["failed"] and out["error"]["code"] == "EntityAlreadyExists" and len(converge.given) == 3
    assert warnings(out) == ["another run wrote what this run was writing (Failed to create the thing: EntityAlreadyExists); converging from what it made"]
    assert run(OtherRun(losses=2, error=IamError, code="EntityAlreadyExists"), {"name": "x"}, capsys)["thing"] == {"read_from": "AWS"}


CONNECTION = {"region": "eu-west-1", "endpoint_url": "http://127.0.0.1:9", "access_key": "AKIAEXAMPLE", "secret_key": "secret-example"}


def aws_module(**args):
    with patch_module_args(dict(CONNECTION, **args)):
        return AWSModule(argument_spec={}, supports_check_mode=True)


def configuration(client):
    credentials = client._request_signer._credentials
    config = client.meta.config
    return (
        client.meta.service_model.service_name,
        client.meta.region_name,
        client.meta.endpoint_url,
        config.user_agent,
        config.retries,
        config.connect_timeout,
        client._endpoint.http_session._verify,
        (credentials.access_key, credentials.secret_key, credentials.token),
    )


@pytest.mark.parametrize("extra", [{}, {"region": "us-west-2", "endpoint": "http://127.0.0.1:10", "aws_session_token": "token-example"}])
def test_a_client_is_configured_as_amazon_aws_configures_it(extra):
    module = aws_module(aws_config={"retries": {"max_attempts": 3, "mode": "standard"}, "connect_timeout": 7}, validate_certs=False)
    for service in ("sagemaker", "sso-admin"):
        assert configuration(module.client(service, **extra)) == configuration(AnsibleAWSModule.client(module, service, **extra))
    assert module.client("sts", **extra).meta.config.connect_timeout == 7


def test_the_clients_of_a_run_share_one_boto3_session_per_profile(monkeypatch, tmp_path):
    made = []

    class CountedSession(boto3.session.Session):
        def __init__(self, *args, **kwargs):
            made.append(kwargs.get("profile_name"))
            super().__init__(*args, **kwargs)

    (tmp_path / "config").write_text("[profile management]\nregion = eu-west-1\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setattr(boto3.session, "Session", CountedSession)
    module = aws_module()
    clients = [module.client(service) for service in ("sagemaker", "eks", "iam", "s3", "sts")]
    management = dict(profile_name="management", aws_access_key_id=None, aws_secret_access_key=None)
    clients += [module.client(service, **management) for service in ("sso-admin", "identitystore")]
    assert made == [None, "management"] and len({id(client) for client in clients}) == 7


def test_a_client_that_cannot_be_made_fails_as_amazon_aws_fails(capsys):
    with patch_module_args(CONNECTION), pytest.raises(SystemExit):
        AWSModule(argument_spec={}).client("sso-admin", profile_name="missing-profile", aws_access_key_id=None, aws_secret_access_key=None)
    failure = json.loads(capsys.readouterr().out)
    assert failure["failed"] and "Couldn't connect to AWS" in failure["msg"] and "missing-profile" in failure["msg"]
