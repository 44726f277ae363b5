"""Where the instance groups' lifecycle scripts may be: nowhere a team's policy reaches (issue 36, case 3).

HyperPod runs them as root on every node it creates or replaces, nodes every team shares. In the teams' data bucket only
the platform's prefix (naming.PLATFORM_PREFIX) is out of every team's reach: a team's prefix is ``<team>/`` with a DNS
label for ``team``, which never starts with ``_``.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
import yaml
from ansible_collections.hyperpod.tenancy.plugins.module_utils import cluster, execution_role, iam_evaluation, naming
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_model import check_team_file_with_places
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_policy import render_team_policy

from tests.unit.plugins.module_utils.sample_account import ACCOUNT, BUCKET, EKS_ARN, HYPERPOD_ARN, REGION

ROOT = Path(__file__).resolve().parents[4]
FIELD = "instance_groups[0].lifecycle_config.source_s3_uri"
CLUSTER = {
    "name": "ml-shared",
    "instance_groups": [{"name": "p5", "instance_type": "ml.p5.48xlarge", "count": 8}],
}

REFUSED = [
    (f"s3://{BUCKET}/lifecycle/", "under lifecycle/, the prefix a team named 'lifecycle' gets"),
    (f"s3://{BUCKET}/vision/x/", "under vision/, the prefix a team named 'vision' gets"),
    (f"s3://{BUCKET}/lifecycle", "under lifecycle/, the prefix a team named 'lifecycle' gets"),
    (f"s3://{BUCKET}/", "the root of the teams' data bucket"),
    (f"s3://{BUCKET}", "the root of the teams' data bucket"),
    (f"s3://{BUCKET}/Scripts/", "outside the platform's prefix _hyperpod/"),
    (f"s3://{BUCKET}/_hyperpod/../vision/", "a path with an empty, '.' or '..' segment"),
    (f"s3://{BUCKET}//lifecycle/", "a path with an empty, '.' or '..' segment"),
    (f"https://{BUCKET}.s3.{REGION}.amazonaws.com/lifecycle/", "under lifecycle/"),
    (f"https://s3.{REGION}.amazonaws.com/{BUCKET}/vision/", "under vision/"),
]
ACCEPTED = [
    f"s3://{BUCKET}/{naming.LIFECYCLE_PREFIX}",
    f"s3://{BUCKET}/_hyperpod",
    f"s3://{BUCKET}/_hyperpod/lifecycle/v2",
    f"https://s3.{REGION}.amazonaws.com/{BUCKET}/_hyperpod/lifecycle/",
    "s3://sagemaker-hyperpod-lifecycle/scripts/",
    f"s3://{BUCKET}-lifecycle/lifecycle/",
]


def _problems(uri, data_bucket=BUCKET):
    groups = [dict(CLUSTER["instance_groups"][0], lifecycle_config={"source_s3_uri": uri, "on_create": "on_create.sh"})]
    cluster_file = dict(copy.deepcopy(CLUSTER), instance_groups=groups)
    problems, unused_teams, unused_capacity, places = check_team_file_with_places([], cluster_file, data_bucket=data_bucket)
    return dict(zip(problems, places, strict=True))


@pytest.mark.parametrize("uri, reason", REFUSED)
def test_the_validator_refuses_lifecycle_scripts_within_a_teams_reach(uri, reason):
    """Threat model (issue 36, case 3): the cluster file keeps the lifecycle scripts where a team's policy reaches (a team
    named lifecycle is given s3://<data bucket>/lifecycle/): validate_team_file refuses it, naming the field, before any call."""
    found = _problems(uri)
    assert len(found) == 1, found
    (problem, place), = found.items()
    assert problem.startswith(f"cluster: {FIELD}: {uri!r} is ") and reason in problem, problem
    assert f"s3://{BUCKET}/_hyperpod/" in problem
    assert place == ("cluster", None, FIELD)


@pytest.mark.parametrize("uri", ACCEPTED)
def test_the_validator_takes_the_platform_prefix_and_other_buckets(uri):
    assert _problems(uri) == {}


def test_without_lifecycle_config_the_default_is_the_platform_prefix():
    """An instance group without lifecycle_config gets the cluster role's default, under the platform's prefix."""
    assert check_team_file_with_places([], CLUSTER, data_bucket=BUCKET)[0] == []
    defaults = yaml.safe_load((ROOT / "roles/cluster/defaults/main.yml").read_text())
    assert defaults["cluster_lifecycle_source_s3_uri"] == "s3://{{ cluster_data_bucket }}/" + naming.LIFECYCLE_PREFIX
    assert defaults["cluster_data_bucket"] == "{{ hyperpod_data_bucket }}"
    tasks = (ROOT / "roles/cluster/tasks/main.yml").read_text()
    assert re.search(r"hyperpod\.tenancy\.hyperpod_cluster:\n(    .*\n)*    data_bucket: \"\{\{ cluster_data_bucket \}\}\"", tasks)


@pytest.mark.parametrize("uri, reason", REFUSED)
def test_the_cluster_module_refuses_them_too(uri, reason):
    """The cluster role's own default (cluster_lifecycle_source_s3_uri, an inventory may set it) reaches hyperpod_cluster,
    which refuses a place in its data_bucket outside the platform's prefix before any call."""
    groups = [{"name": "p5", "lifecycle_config": {"source_s3_uri": f"s3://{BUCKET}/{naming.LIFECYCLE_PREFIX}"}},
              {"name": "g5", "lifecycle_config": {"source_s3_uri": uri}}]
    problems = cluster.lifecycle_problems({"instance_groups": groups, "data_bucket": BUCKET})
    assert len(problems) == 1 and problems[0].startswith("instance_groups[1].lifecycle_config.source_s3_uri (group g5): ") and reason in problems[0]
    assert cluster.lifecycle_problems({"instance_groups": groups, "data_bucket": None}) == []


def test_no_team_policy_reaches_the_platform_prefix():
    """The premise: whatever its name, a team's policies grant nothing under the platform's prefix, for any team name the
    validator accepts (a DNS label), the shortest and one that starts like the prefix's word."""
    keys = [naming.LIFECYCLE_PREFIX + "on_create.sh", naming.PLATFORM_PREFIX + "owners/vision", naming.PLATFORM_PREFIX]
    for team in ("a", "hyperpod", "lifecycle", "h-yperpod", "0"):
        assert re.fullmatch(naming.DNS_LABEL_PATTERN, team)
        documents = [render_team_policy(team, ACCOUNT, REGION, BUCKET, HYPERPOD_ARN, EKS_ARN), execution_role.team_data_policy(BUCKET, team)]
        who = iam_evaluation.Principal(ACCOUNT, [(str(index), document) for index, document in enumerate(documents)])
        for key in keys:
            for action in ("s3:GetObject", "s3:PutObject", "s3:DeleteObject"):
                assert iam_evaluation.evaluate(who, action, f"arn:aws:s3:::{BUCKET}/{key}")["EvalDecision"] != "allowed", (team, action, key)
            listing = iam_evaluation.evaluate(who, "s3:ListBucket", f"arn:aws:s3:::{BUCKET}", {"s3:prefix": key})
            assert listing["EvalDecision"] != "allowed", (team, key)
