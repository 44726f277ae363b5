"""Cost Explorer cost-allocation tags (moto 5.2.5 lacks them), request validation for
GetCostAndUsage, and the demo's Cost Explorer data.

ListCostAllocationTags / UpdateCostAllocationTagsStatus
    A tag key exists in Cost Explorer only once AWS has *seen* it on a billed
    resource (AWS takes up to a day). The sandbox's rule: a key is seen as soon as
    any resource the sandbox knows carries it, found by scanning moto's backends
    on each call (every backend that takes part in the Resource Groups Tagging API,
    plus EC2, IAM roles and EKS clusters), in every region the sandbox has used.
    AWS-generated keys of EKS split cost allocation (``aws:eks:cluster-name``,
    ``aws:eks:namespace``, ``aws:eks:deployment``, ``aws:eks:node``) are seen
    once an EKS cluster exists. A seen key stays listed after its resources are
    gone, as in AWS. New keys start ``Inactive``; ``Type`` is ``AWSGenerated`` for
    ``aws:`` keys, ``UserDefined`` otherwise. Updating a key that is not seen yet
    is no request error: the key comes back in ``Errors`` with
    ``Code: TagKeysNotFoundException`` and
    ``Message: Failed to update Cost Allocation Tag: <key>`` (the API reference's
    example), and the other keys of the batch are updated. Setting a key to the
    status it has changes nothing (not even ``LastUpdatedDate``).

GetCostAndUsage
    moto answers from a queue of results seeded through
    ``POST /moto-api/static/ce/cost-and-usage-results`` and does not validate the
    request; here the request is validated against botocore's model first (and
    ``Start`` must be before ``End``, at most two ``GroupBy``), as AWS does.

``seed_cost_and_usage(client, settings, month=None)`` queues the results the
chargeback report (``hyperpod.tenancy.chargeback_report``) reads for one month, so
``python -m sandbox seed`` can give the demo real numbers. moto hands a queued result
to the first request with a body it has not answered yet and keeps answering that body
with it; the seed asks the report's first request first, so seeding twice queues nothing
the second time.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import urllib.request

import moto.ce.models
import moto.ce.responses
from moto.core.base_backend import BackendDict

from sandbox.core import AwsError, graft, state, validate_request, validation_error

EKS_GENERATED_KEYS = ("aws:eks:cluster-name", "aws:eks:namespace", "aws:eks:deployment", "aws:eks:node")
NOT_FOUND_CODE = "TagKeysNotFoundException"
DEFAULT_PAGE = 100


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _account_backends(backend_dict, account_id: str):
    if account_id not in backend_dict:
        return []
    regional = backend_dict[account_id]
    # Only backends already created: iterating must not create one per region.
    return [regional[name] for name in list(dict.keys(regional))]


def _tag_keys_in_sandbox(account_id: str) -> set[str]:
    """Every tag key on a resource of ``account_id``, in any region the sandbox used."""
    from moto.core.resource_tagging import TaggableResourcesMixin
    from moto.ec2.models import ec2_backends
    from moto.eks.models import eks_backends
    from moto.iam.models import iam_backends

    keys: set[str] = set()
    for backend_dict in list(BackendDict._instances):  # type: ignore[attr-defined]
        backend_class = backend_dict.backend
        if not isinstance(backend_class, type) or not issubclass(backend_class, TaggableResourcesMixin):
            continue
        for backend in _account_backends(backend_dict, account_id):
            for resource in backend.iter_tagged_resources():
                keys.update(resource.tags or {})
    for backend in _account_backends(ec2_backends, account_id):
        for tags in backend.tags.values():
            keys.update(tags)
    for backend in _account_backends(iam_backends, account_id):
        for role in backend.roles.values():
            keys.update(tag["Key"] for tag in role.tags or [])
    for backend in _account_backends(eks_backends, account_id):
        for cluster in backend.clusters.values():
            keys.update(cluster.tags or {})
        if backend.clusters:
            keys.update(EKS_GENERATED_KEYS)
    return keys


class CostAllocationTagsBackend:
    def _cost_allocation_tags(self) -> dict:
        tags = state(self, "cost_allocation_tags")
        now = _now()
        for key in _tag_keys_in_sandbox(self.account_id):
            entry = tags.get(key)
            if entry is None:
                tags[key] = {
                    "TagKey": key,
                    "Type": "AWSGenerated" if key.startswith("aws:") else "UserDefined",
                    "Status": "Inactive",
                    "LastUsedDate": now,
                }
            else:
                entry["LastUsedDate"] = now
        return tags

    def list_cost_allocation_tags(self, status, tag_keys, tag_type, next_token, max_results) -> tuple[list[dict], str | None]:
        tags = self._cost_allocation_tags()
        found = [
            dict(entry)
            for key, entry in sorted(tags.items())
            if (status is None or entry["Status"] == status)
            and (tag_type is None or entry["Type"] == tag_type)
            and (tag_keys is None or key in tag_keys)
        ]
        start = 0
        if next_token:
            try:
                start = int(next_token)
            except ValueError:
                raise AwsError("InvalidNextTokenException", "The pagination token is invalid.") from None
            if not 0 <= start <= len(found):
                raise AwsError("InvalidNextTokenException", "The pagination token is invalid.")
        page = max_results or DEFAULT_PAGE
        end = start + page
        return found[start:end], (str(end) if end < len(found) else None)

    def update_cost_allocation_tags_status(self, entries: list[dict]) -> list[dict]:
        tags = self._cost_allocation_tags()
        errors = []
        for entry in entries:
            key, status = entry["TagKey"], entry["Status"]
            current = tags.get(key)
            if current is None:
                errors.append({"TagKey": key, "Code": NOT_FOUND_CODE, "Message": f"Failed to update Cost Allocation Tag: {key}"})
                continue
            if current["Status"] != status:
                current["Status"] = status
                current["LastUpdatedDate"] = _now()
        return errors


_moto_get_cost_and_usage = moto.ce.responses.CostExplorerResponse.get_cost_and_usage


class CostAllocationTagsResponse:
    def list_cost_allocation_tags(self) -> str:
        params = json.loads(self.body or "{}")
        validate_request("ce", "ListCostAllocationTags", params)
        tags, token = self.ce_backend.list_cost_allocation_tags(
            params.get("Status"), params.get("TagKeys"), params.get("Type"), params.get("NextToken"), params.get("MaxResults")
        )
        body = {"CostAllocationTags": tags}
        if token:
            body["NextToken"] = token
        return json.dumps(body)

    def update_cost_allocation_tags_status(self) -> str:
        params = json.loads(self.body or "{}")
        validate_request("ce", "UpdateCostAllocationTagsStatus", params)
        keys = [entry["TagKey"] for entry in params["CostAllocationTagsStatus"]]
        if len(set(keys)) != len(keys):
            raise validation_error("Duplicate tag keys in the request: each TagKey can appear only once.")
        errors = self.ce_backend.update_cost_allocation_tags_status(params["CostAllocationTagsStatus"])
        return json.dumps({"Errors": errors})

    def get_cost_and_usage(self) -> str:
        params = json.loads(self.body or "{}")
        validate_request("ce", "GetCostAndUsage", params)
        period = params["TimePeriod"]
        if period["Start"][:10] >= period["End"][:10]:
            raise validation_error("Start date (%s) must be before end date (%s)." % (period["Start"], period["End"]))
        if len(params.get("GroupBy") or []) > 2:
            raise validation_error("You can group by at most two dimensions, tags or cost categories.")
        for group in params.get("GroupBy") or []:
            if not group.get("Type") or not group.get("Key"):
                raise validation_error("Each GroupBy needs a Type and a Key.")
        return _moto_get_cost_and_usage(self)


def install() -> None:
    graft(moto.ce.models.CostExplorerBackend, CostAllocationTagsBackend)
    graft(moto.ce.responses.CostExplorerResponse, CostAllocationTagsResponse)


# --- demo data -------------------------------------------------------------

# On-demand USD per instance-hour of HyperPod cluster instances (us-east-1, rounded);
# a type not listed costs DEFAULT_HOURLY in the demo.
HOURLY_PRICE = {
    "ml.p5.48xlarge": 113.07,
    "ml.p4d.24xlarge": 37.69,
    "ml.g5.12xlarge": 7.09,
    "ml.g5.48xlarge": 20.36,
    "ml.trn1.32xlarge": 24.78,
    "ml.m5.xlarge": 0.23,
}
DEFAULT_HOURLY = 10.0
USAGE_TYPE_PREFIX = "USE1-Cluster:"


def last_full_month(today: datetime.date | None = None) -> str:
    today = today or datetime.datetime.now(datetime.UTC).date()
    first = today.replace(day=1)
    return (first - datetime.timedelta(days=1)).strftime("%Y-%m")


def _period(month: str) -> dict:
    year, number = (int(part) for part in month.split("-"))
    start = datetime.date(year, number, 1)
    end = datetime.date(year + (number == 12), number % 12 + 1, 1)
    return {"Start": start.isoformat(), "End": end.isoformat()}


def _money(amount: float) -> dict:
    return {"UnblendedCost": {"Amount": "%.2f" % amount, "Unit": "USD"}}


def _own_cost(team: str) -> float:
    # Stable, team-specific demo numbers (not random: the demo shows the same report every time).
    digest = int(hashlib.sha256(team.encode()).hexdigest()[:6], 16)
    return round(400 + digest % 2600 + (digest % 100) / 100, 2)


def cost_and_usage_results(settings: dict, month: str | None = None) -> dict:
    """The two GetCostAndUsage results the chargeback report asks for ``month``, in its order.

    1. the month's cost grouped by the team tag (``team$<name>``; ``team$`` holds
       untagged cost: the shared cluster and other untagged spend);
    2. the month's Amazon SageMaker cost grouped by usage type and team tag
       (``USE1-Cluster:ml.<type>``, ``team$``: the cluster is untagged).
    """
    month = month or last_full_month()
    period = _period(month)
    days = (datetime.date.fromisoformat(period["End"]) - datetime.date.fromisoformat(period["Start"])).days
    tag_key = (settings.get("hyperpod_team_tag_keys") or {}).get("team", "team")
    capacity: dict[str, int] = {}
    for group in (settings.get("hyperpod_cluster") or {}).get("instance_groups", []):
        capacity[group["instance_type"]] = capacity.get(group["instance_type"], 0) + int(group["count"])
    cluster = {itype: round(count * 24 * days * HOURLY_PRICE.get(itype, DEFAULT_HOURLY), 2) for itype, count in sorted(capacity.items())}
    teams = [t["name"] for t in settings.get("hyperpod_teams", []) if t.get("state", "present") == "present"]
    untagged = round(sum(cluster.values()) + 742.18, 2)
    by_team = [{"Keys": ["%s$%s" % (tag_key, team)], "Metrics": _money(_own_cost(team))} for team in teams]
    by_team.append({"Keys": ["%s$" % tag_key], "Metrics": _money(untagged)})
    by_usage = [{"Keys": [USAGE_TYPE_PREFIX + itype, "%s$" % tag_key], "Metrics": _money(amount)} for itype, amount in cluster.items()]
    if teams:
        # SageMaker spend that is not the cluster (a team's Studio apps): part of that team's own cost.
        by_usage.append({"Keys": ["USE1-Studio_DW:ml.m5.xlarge", "%s$%s" % (tag_key, teams[0])], "Metrics": _money(112.40)})
    return {
        "results": [
            {"ResultsByTime": [{"TimePeriod": period, "Total": {}, "Groups": by_team, "Estimated": False}], "DimensionValueAttributes": []},
            {"ResultsByTime": [{"TimePeriod": period, "Total": {}, "Groups": by_usage, "Estimated": False}], "DimensionValueAttributes": []},
        ]
    }


def queue_cost_and_usage(endpoint: str, results: dict) -> None:
    """POST results to moto's queue; each GetCostAndUsage with a new request body takes the next one."""
    request = urllib.request.Request(
        endpoint.rstrip("/") + "/moto-api/static/ce/cost-and-usage-results", data=json.dumps(results).encode(), method="POST"
    )
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=10) as response:
        if response.status != 201:
            raise RuntimeError("moto refused the Cost Explorer results: HTTP %s" % response.status)


def _chargeback():
    """plugins/module_utils/chargeback.py (standard library only), loaded by path: the report's own request builders."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "plugins" / "module_utils" / "chargeback.py"
    spec = importlib.util.spec_from_file_location("hyperpod_chargeback", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def report_requests(settings: dict, month: str) -> tuple[dict, dict]:
    """The two GetCostAndUsage requests chargeback_report makes for ``month``, in its order."""
    chargeback = _chargeback()
    period = chargeback.month_period(month)
    tag_key = (settings.get("hyperpod_team_tag_keys") or {}).get("team", "team")
    return chargeback.team_cost_request(period, tag_key), chargeback.cluster_cost_request(period, tag_key=tag_key)


def seed_cost_and_usage(client, settings: dict, month: str | None = None) -> dict:
    """Queue the demo's Cost Explorer results for ``month`` (default: the last full month).

    ``client`` is a ``sandbox.client.SandboxClient``; ``settings`` are the merged
    cluster and team files (``sandbox.seed.load_sample``). Idempotent: when the report's first
    request already has an answer, nothing is queued. Returns
    ``{"month": ..., "queued": bool}``.
    """
    month = month or last_full_month()
    first, _second = report_requests(settings, month)
    if client.boto3_client("ce").get_cost_and_usage(**first)["ResultsByTime"]:
        return {"month": month, "queued": False}
    queue_cost_and_usage(client.endpoint, cost_and_usage_results(settings, month))
    return {"month": month, "queued": True}
