"""SageMaker HyperPod Task Governance compute quotas, which moto 5.2.5 lacks.

CreateComputeQuota, DescribeComputeQuota, UpdateComputeQuota, DeleteComputeQuota and
ListComputeQuotas, plus AddTags/ListTags/DeleteTags on compute-quota ARNs.

What AWS does and this addition copies (botocore's model and the API reference):

- Every request is validated against botocore's model (ValidationException).
- ``ComputeQuotaVersion`` starts at 1 and grows by one on each update; an update names
  the version it was computed from (``TargetVersion``) and a stale one is a
  ``ConflictException``. DescribeComputeQuota can read an older version.
- The name is unique within the cluster ("You can use the same name in other
  clusters"); a team has one compute allocation per cluster. Both are ConflictException.
- A cluster that does not exist is ResourceNotFound; so is an unknown quota id.
- Status moves Creating -> Created, Updating -> Updated, Deleting -> Deleted through
  ``sandbox.core.Lifecycle``. A deleted quota stays visible to Describe and List with status
  ``Deleted``, as scheduler configs do (Deleted is one of the statuses DescribeComputeQuota and
  the ListComputeQuotas Status filter document; AWS does not say how long it is kept), takes no
  writes (ResourceNotFound) and no longer holds its name or team. Writes while a quota is
  transitioning are refused (ConflictException).
- Documented defaults are filled in: ActivationState Enabled, Strategy LendAndBorrow,
  BorrowLimit 50 (LendAndBorrow), PreemptTeamTasks LowerPriority, FairShareWeight 0.
  An update replaces each top-level member it names: a ComputeQuotaConfig without
  ResourceSharingConfig goes back to the defaults, as a full replacement does.

Not enforced, because no AWS documentation says so: the sum of the teams' quotas
against the cluster's instance counts (hyperpod.tenancy checks that itself).

Test hook (a moto-api route, like moto's own ``/moto-api/static/...`` seeding):
``POST /moto-api/static/sagemaker/compute-quota-interleave`` with
``{"ComputeQuotaId": id, "Update": {...UpdateComputeQuota members...}}`` makes
the next UpdateComputeQuota of that quota find another writer's update applied
just before it, so a client's read-then-write sees a real version conflict.
"""

from __future__ import annotations

import copy
import json
import random
import string
from datetime import UTC, datetime

import moto.moto_api._internal.urls as moto_api_urls
import moto.sagemaker.models as sm_models
import moto.sagemaker.responses as sm_responses
from moto.core.responses import ActionResult

from sandbox.core import AwsError, Lifecycle, graft, state, validate_request
from sandbox.kube import task_governance
from sandbox.services.sts_identity import SANDBOX_USER_ID, user_arn

SERVICE = "sagemaker"
TRANSITIONAL = ("Creating", "Updating", "Deleting")
DEFAULT_SHARING = {"Strategy": "LendAndBorrow", "BorrowLimit": 50}
DEFAULT_PREEMPT = "LowerPriority"
INTERLEAVE_PATH = "{0}/moto-api/static/sagemaker/compute-quota-interleave"


def _new_id() -> str:
    return "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(12))


def _with_defaults_config(config: dict | None) -> dict:
    config = copy.deepcopy(config or {})
    sharing = config.get("ResourceSharingConfig")
    if sharing is None:
        sharing = dict(DEFAULT_SHARING)
    elif sharing.get("Strategy") == "LendAndBorrow" and sharing.get("BorrowLimit") is None:
        sharing["BorrowLimit"] = DEFAULT_SHARING["BorrowLimit"]
    config["ResourceSharingConfig"] = sharing
    config.setdefault("PreemptTeamTasks", DEFAULT_PREEMPT)
    config.setdefault("ComputeQuotaResources", [])
    return config


def _with_defaults_target(target: dict) -> dict:
    target = copy.deepcopy(target)
    target.setdefault("FairShareWeight", 0)
    return target


class ComputeQuota:
    """One compute allocation; ``versions[n - 1]`` is version ``n``'s settings."""

    def __init__(self, account_id: str, region: str, params: dict):
        self.id = _new_id()
        self.arn = f"arn:aws:sagemaker:{region}:{account_id}:compute-quota/{self.id}"
        self.name = params["Name"]
        self.cluster_arn = params["ClusterArn"]
        self.tags = copy.deepcopy(params.get("Tags") or [])
        self.creation_time = datetime.now(UTC)
        self.last_modified_time = self.creation_time
        # The caller as GetCallerIdentity names it (sts_identity).
        self.created_by = {"IamIdentity": {"Arn": user_arn(account_id), "PrincipalId": SANDBOX_USER_ID}}
        self.lifecycle = Lifecycle("Creating", "Created", on_settle=self._in_cluster)
        self.versions = [
            {
                "Description": params.get("Description"),
                "ComputeQuotaConfig": _with_defaults_config(params["ComputeQuotaConfig"]),
                "ComputeQuotaTarget": _with_defaults_target(params["ComputeQuotaTarget"]),
                "ActivationState": params.get("ActivationState") or "Enabled",
            }
        ]

    def _in_cluster(self, status: str) -> None:
        # Task Governance makes the team's namespace and queues once the quota is Created, and removes them once Deleted.
        if status in ("Created", "Updated"):
            task_governance.apply_quota(self.current)
        elif status == "Deleted":
            task_governance.remove_quota(self.team)

    @property
    def version(self) -> int:
        return len(self.versions)

    @property
    def current(self) -> dict:
        return self.versions[-1]

    @property
    def status(self) -> str:
        return self.lifecycle.status

    @property
    def team(self) -> str:
        return self.current["ComputeQuotaTarget"]["TeamName"]

    def apply_update(self, params: dict) -> None:
        settings = copy.deepcopy(self.current)
        if "ComputeQuotaConfig" in params:
            settings["ComputeQuotaConfig"] = _with_defaults_config(params["ComputeQuotaConfig"])
        if "ComputeQuotaTarget" in params:
            settings["ComputeQuotaTarget"] = _with_defaults_target(params["ComputeQuotaTarget"])
        for key in ("ActivationState", "Description"):
            if key in params:
                settings[key] = params[key]
        self.versions.append(settings)
        self.last_modified_time = datetime.now(UTC)
        self.lifecycle.move("Updating", "Updated")

    def describe(self, version: int | None = None) -> dict:
        settings = self.versions[(version or self.version) - 1]
        result = {
            "ComputeQuotaArn": self.arn,
            "ComputeQuotaId": self.id,
            "Name": self.name,
            "ComputeQuotaVersion": version or self.version,
            "Status": self.status,
            "ClusterArn": self.cluster_arn,
            "ComputeQuotaConfig": copy.deepcopy(settings["ComputeQuotaConfig"]),
            "ComputeQuotaTarget": copy.deepcopy(settings["ComputeQuotaTarget"]),
            "ActivationState": settings["ActivationState"],
            "CreationTime": self.creation_time,
            "CreatedBy": self.created_by,
            "LastModifiedTime": self.last_modified_time,
            "LastModifiedBy": self.created_by,
        }
        if settings.get("Description") is not None:
            result["Description"] = settings["Description"]
        return result

    def summary(self) -> dict:
        full = self.describe()
        keys = (
            "ComputeQuotaArn", "ComputeQuotaId", "Name", "ComputeQuotaVersion", "Status", "ClusterArn",
            "ComputeQuotaConfig", "ComputeQuotaTarget", "ActivationState", "CreationTime", "LastModifiedTime",
        )
        return {k: full[k] for k in keys if k in full}


class QuotaBackend:
    """Grafted onto moto's SageMakerModelBackend."""

    def _compute_quotas(self) -> dict:
        return state(self, "compute_quotas")

    def _compute_quota(self, quota_id: str, writing: bool = False) -> ComputeQuota:
        quota = self._compute_quotas().get(quota_id)
        if quota is None or (writing and quota.status == "Deleted"):
            raise AwsError("ResourceNotFound", f"Compute quota {quota_id} not found.")
        return quota

    def _cluster_by_arn(self, cluster_arn: str):
        for cluster in self.clusters.values():
            if cluster.arn == cluster_arn:
                return cluster
        raise AwsError("ResourceNotFound", f"Cluster {cluster_arn} not found.")

    def _check_unique(self, cluster_arn: str, name: str | None, team: str | None, exclude: str | None = None) -> None:
        for other in self._compute_quotas().values():
            if other.id == exclude or other.cluster_arn != cluster_arn or other.status == "Deleted":
                continue
            if name is not None and other.name == name:
                raise AwsError("ConflictException", f"A compute quota named {name} already exists for cluster {cluster_arn}.")
            if team is not None and other.team == team:
                raise AwsError(
                    "ConflictException",
                    f"Team {team} already has compute quota {other.name} ({other.id}) on cluster {cluster_arn}.",
                )

    def create_compute_quota(self, params: dict) -> ComputeQuota:
        self._cluster_by_arn(params["ClusterArn"])
        self._check_unique(params["ClusterArn"], params["Name"], params["ComputeQuotaTarget"]["TeamName"])
        quota = ComputeQuota(self.account_id, self.region_name, params)
        self._compute_quotas()[quota.id] = quota
        return quota

    def describe_compute_quota(self, quota_id: str, version: int | None) -> dict:
        quota = self._compute_quota(quota_id)
        if version is not None and not 1 <= version <= quota.version:
            raise AwsError("ResourceNotFound", f"Compute quota {quota_id} has no version {version}.")
        return quota.describe(version)

    def _refuse_while_transitioning(self, quota: ComputeQuota) -> None:
        if quota.status in TRANSITIONAL:
            raise AwsError("ConflictException", f"Compute quota {quota.id} is {quota.status}; wait until it settles before changing it.")

    def update_compute_quota(self, params: dict) -> ComputeQuota:
        quota = self._compute_quota(params["ComputeQuotaId"], writing=True)
        interleaved = state(self, "compute_quota_interleaves").pop(quota.id, None)
        if interleaved is not None:
            # Another writer got in first (see the module docstring).
            quota.apply_update(interleaved)
            quota.lifecycle.settle_as("Updated")
        self._refuse_while_transitioning(quota)
        if params["TargetVersion"] != quota.version:
            raise AwsError(
                "ConflictException",
                f"TargetVersion {params['TargetVersion']} does not match the current version {quota.version} of compute quota {quota.id}.",
            )
        if "ComputeQuotaTarget" in params:
            self._check_unique(quota.cluster_arn, None, params["ComputeQuotaTarget"]["TeamName"], exclude=quota.id)
        quota.apply_update(params)
        return quota

    def delete_compute_quota(self, quota_id: str) -> None:
        quota = self._compute_quota(quota_id, writing=True)
        self._refuse_while_transitioning(quota)
        quota.lifecycle.move("Deleting", "Deleted")

    def list_compute_quotas(self, params: dict) -> tuple[list[dict], str | None]:
        quotas = list(self._compute_quotas().values())
        if params.get("ClusterArn"):
            quotas = [q for q in quotas if q.cluster_arn == params["ClusterArn"]]
        if params.get("NameContains"):
            quotas = [q for q in quotas if params["NameContains"] in q.name]
        if params.get("Status"):
            quotas = [q for q in quotas if q.status == params["Status"]]
        if params.get("CreatedAfter"):
            quotas = [q for q in quotas if q.creation_time > _aware(params["CreatedAfter"])]
        if params.get("CreatedBefore"):
            quotas = [q for q in quotas if q.creation_time < _aware(params["CreatedBefore"])]
        sort_key = {
            "Name": lambda q: q.name,
            "Status": lambda q: q.status,
            "ClusterArn": lambda q: q.cluster_arn,
            "CreationTime": lambda q: q.creation_time,
        }[params.get("SortBy") or "CreationTime"]
        quotas.sort(key=lambda q: (sort_key(q), q.id), reverse=(params.get("SortOrder") or "Descending") == "Descending")
        start = 0
        if params.get("NextToken"):
            try:
                start = int(params["NextToken"])
            except ValueError:
                raise AwsError("ValidationException", "Invalid pagination token.") from None
        size = params.get("MaxResults") or 10
        page = quotas[start : start + size]
        next_token = str(start + size) if start + size < len(quotas) else None
        return [q.summary() for q in page], next_token

    def set_compute_quota_interleave(self, quota_id: str, update: dict) -> None:
        self._compute_quota(quota_id)
        state(self, "compute_quota_interleaves")[quota_id] = update


def _aware(value):
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return datetime.fromtimestamp(float(value), tz=UTC)


# botocore patterns with Java's \\p{...} classes, which Python's ``re`` (used by
# sandbox.core.validate_request) cannot compile. Until core handles them, these members
# are checked here with the same shapes and the ``regex`` module, the rest by core.


class QuotaResponse:
    """Grafted onto moto's SageMakerResponse (automated parameter parsing: ``self.params``)."""

    def _validated(self, operation: str) -> dict:
        params = dict(self.params or {})
        validate_request(SERVICE, operation, params)
        return params

    def create_compute_quota(self):
        params = self._validated("CreateComputeQuota")
        quota = self.sagemaker_backend.create_compute_quota(params)
        return ActionResult({"ComputeQuotaArn": quota.arn, "ComputeQuotaId": quota.id})

    def describe_compute_quota(self):
        params = self._validated("DescribeComputeQuota")
        return ActionResult(self.sagemaker_backend.describe_compute_quota(params["ComputeQuotaId"], params.get("ComputeQuotaVersion")))

    def update_compute_quota(self):
        params = self._validated("UpdateComputeQuota")
        quota = self.sagemaker_backend.update_compute_quota(params)
        return ActionResult({"ComputeQuotaArn": quota.arn, "ComputeQuotaVersion": quota.version})

    def delete_compute_quota(self):
        params = self._validated("DeleteComputeQuota")
        self.sagemaker_backend.delete_compute_quota(params["ComputeQuotaId"])
        return ActionResult({})

    def list_compute_quotas(self):
        params = self._validated("ListComputeQuotas")
        summaries, next_token = self.sagemaker_backend.list_compute_quotas(params)
        result = {"ComputeQuotaSummaries": summaries}
        if next_token:
            result["NextToken"] = next_token
        return ActionResult(result)


def _interleave_handler(request, full_url, headers):
    body = json.loads(request.get_data() or b"{}")
    quota_id = body.get("ComputeQuotaId", "")
    for regions in sm_models.sagemaker_backends.values():
        for backend in regions.values():
            if quota_id in state(backend, "compute_quotas"):
                backend.set_compute_quota_interleave(quota_id, body.get("Update") or {})
                return 201, {}, json.dumps({"ComputeQuotaId": quota_id})
    return 404, {}, json.dumps({"message": f"no compute quota {quota_id}"})


def install() -> None:
    graft(sm_models.SageMakerModelBackend, QuotaBackend)
    graft(sm_responses.SageMakerResponse, QuotaResponse)

    # Tags on compute-quota ARNs: wrap whatever resolver is installed (moto's or another addition's).
    previous = sm_models.SageMakerModelBackend._get_resource_from_arn

    def _get_resource_from_arn(self, arn):
        if ":compute-quota/" in arn:
            return self._compute_quota(arn.rsplit("/", 1)[-1])
        return previous(self, arn)

    sm_models.SageMakerModelBackend._get_resource_from_arn = _get_resource_from_arn
    moto_api_urls.url_paths[INTERLEAVE_PATH] = _interleave_handler
