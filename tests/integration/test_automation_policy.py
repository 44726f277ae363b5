"""The automation's own permissions: the playbooks' life run under the policy automation_policy renders, and nothing else.

The role ``HyperPodAutomation`` carries only ``automation_policy.render``'s policy (its name is outside the collection's
``hyperpod-*`` roles, which the policy lets the automation change); the runs sign with its session's keys, so the sandbox
authorizes every call with iam_evaluation (sandbox/authorization.py), iam:PassRole included. A missing action fails the
run. Then, from what the run asked IAM (the request log's ``asked``: action, resource ARN, condition keys), each statement
is shown necessary: the policy without it denies at least one request the run made. What this proves, and no more:

- sufficient for this life (preflight.yml, cold site.yml, rerun, drift, add_team making a deleted role again, remove_team) on the sample;
- no statement can be dropped, nor any action of ``STATEMENTS`` (each is the only grant of a request the run made);
  ``NOT_EXERCISED`` is exactly the rest, granted for changes this life does not make and not proved here;
- not that a statement's resource or condition is the narrowest possible.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from ansible_collections.hyperpod.tenancy.plugins.module_utils import automation_policy, iam_evaluation

from sandbox.authorization import ALWAYS_ALLOWED
from tests.integration.automation_lifecycle import asked, lifecycle
from tests.integration.playbook_runner import SAMPLE

ROLE = "HyperPodAutomation"
REGION = "us-east-1"


def _policy(seed: dict) -> dict:
    account = seed["account_id"]
    return automation_policy.render(account, REGION, SAMPLE["hyperpod_data_bucket"], SAMPLE["hyperpod_cluster"]["eks_cluster_name"],
                                    [seed["cluster_execution_role_arn"]])


def _principal(account: str, policy: dict) -> iam_evaluation.Principal:
    return iam_evaluation.Principal(account, [(ROLE, policy)], role_arn=f"arn:aws:iam::{account}:role/{ROLE}",
                                    session_arn=f"arn:aws:sts::{account}:assumed-role/{ROLE}/awx")


def _denied(account: str, policy: dict, requests: list) -> list:
    principal = _principal(account, policy)
    transport = {"aws:SecureTransport": True, "aws:RequestedRegion": REGION}  # as sandbox/authorization.authorize adds them
    return [(action, resource) for action, resource, context in requests
            if iam_evaluation.evaluate(principal, action, resource, dict(transport, **context))["EvalDecision"] != iam_evaluation.ALLOWED]


def test_the_sample_life_runs_under_the_automation_policy_and_needs_every_statement(sample):
    client, seed = sample.client, json.loads(sample.seed_file.read_text())
    account = seed["account_id"]
    policy = _policy(seed)
    assert automation_policy.size(policy) <= automation_policy.MANAGED_POLICY_LIMIT
    iam = client.boto3_client("iam")
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{account}:root"}, "Action": "sts:AssumeRole"}]}
    iam.create_role(RoleName=ROLE, AssumeRolePolicyDocument=json.dumps(trust))
    iam.put_role_policy(RoleName=ROLE, PolicyName="automation", PolicyDocument=json.dumps(policy))
    credentials = client.boto3_client("sts").assume_role(RoleArn=f"arn:aws:iam::{account}:role/{ROLE}", RoleSessionName="awx")["Credentials"]
    session = f"arn:aws:sts::{account}:assumed-role/{ROLE}/awx"
    # As AWX's "Amazon Web Services" credential injects them (playbooks/vars/awx.yml).
    sample.env.update(AWS_ACCESS_KEY_ID=credentials["AccessKeyId"], AWS_SECRET_ACCESS_KEY=credentials["SecretAccessKey"],
                      AWS_SESSION_TOKEN=credentials["SessionToken"])
    client.clear_requests()

    lifecycle(sample)

    requests = client.requests()
    signed = [r for r in requests if r["principal"] not in ("", "admin")]
    assert signed and {r["principal"] for r in signed} == {session}
    assert [r for r in signed if r["status"] == 403] == []
    made = [(a, r, c) for a, r, c in asked(signed) if a not in ALWAYS_ALLOWED]
    # Sufficient: the policy allows every request of the run (the run passing says so too, request by request here).
    assert _denied(account, policy, made) == []
    # Necessary: without any one statement, some request of the run is denied.
    for index, statement in enumerate(policy["Statement"]):
        less = dict(policy, Statement=policy["Statement"][:index] + policy["Statement"][index + 1 :])
        assert _denied(account, less, made), f"statement {statement['Sid']} allows nothing the run needs"
    # Necessary action by action: without any one exercised action of a statement, some request of the run is denied.
    exercised = automation_policy.render(account, REGION, SAMPLE["hyperpod_data_bucket"], SAMPLE["hyperpod_cluster"]["eks_cluster_name"],
                                         [seed["cluster_execution_role_arn"]], exercised_only=True)
    for index, statement in enumerate(exercised["Statement"]):
        for action in statement["Action"]:
            narrower = dict(statement, Action=[a for a in statement["Action"] if a != action])
            less = dict(exercised, Statement=exercised["Statement"][:index] + ([narrower] if narrower["Action"] else []) + exercised["Statement"][index + 1 :])
            assert _denied(account, less, made), f"{action} in {statement['Sid']} allows nothing the run needs"
    # Every action of STATEMENTS was asked; NOT_EXERCISED holds exactly what was not.
    used = {action for action, _resource, _context in made}
    listed = {action for _sid, actions, _resource, _condition in automation_policy.STATEMENTS for action in actions}
    assert listed == used, (sorted(listed - used), sorted(used - listed))
    # No action is both proved and unexercised, but the one granted in two scopes: sagemaker:AddTags at create, under the
    # request tag (proved), and on a marked resource for a tag change (not exercised).
    assert listed & {action for actions in automation_policy.NOT_EXERCISED.values() for action in actions} == {"sagemaker:AddTags"}


@pytest.mark.skipif(not os.environ.get("HYPERPOD_RECORD_ASKED"), reason="a tool: HYPERPOD_RECORD_ASKED=<file> records what the life asks IAM")
def test_record_what_the_life_asks_iam_under_the_admin_key(sample):
    lifecycle(sample)
    requests = sample.client.requests()
    Path(os.environ["HYPERPOD_RECORD_ASKED"]).write_text(json.dumps({"requests": requests, "asked": asked(requests)}, indent=1))
