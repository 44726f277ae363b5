"""Amazon EKS add-ons, which moto 5.2.5 lacks.

CreateAddon, DescribeAddon, UpdateAddon, DeleteAddon, ListAddons and
DescribeAddonVersions, on moto's EKS clusters. An add-on moves CREATING ->
ACTIVE, UPDATING -> ACTIVE and DELETING -> gone after the sandbox's status
delay, and the Task Governance add-on not before Kueue is installed in (removed
from) the API server; writes to an add-on in a transitional state are refused with
ResourceInUseException, as EKS refuses them, and so is creating one that is still
DELETING ("Addon already exists").

EKS is a REST-JSON service: the paths are added to ``moto.eks.urls.url_paths``
and moto finds the operation from botocore's model. Request members are read
from where the model puts them (URI, query string, body) and validated against
the model; EKS reports constraint violations as InvalidParameterException.

Other additions can ask for an add-on's settled status with ``addon_status``
(the Task Governance scheduler config does, to decide CreateFailed).
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import moto.eks.models
import moto.eks.responses
import moto.eks.urls
import yaml
from moto.core.responses import ActionResult
from moto.core.utils import utcnow

from sandbox.core import AwsError, Lifecycle, graft, page_answer, rest_json_request, state
from sandbox.kube import task_governance

GONE = "__GONE__"
TASK_GOVERNANCE = "amazon-sagemaker-hyperpod-taskgovernance"
TRANSITIONAL = ("CREATING", "UPDATING", "DELETING")
ROLE_ARN = re.compile(r"arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]+")

# What DescribeAddonVersions offers: add-on -> (type, publisher, owner, versions newest first).
CATALOG = {
    "amazon-sagemaker-hyperpod-taskgovernance": (
        "machine-learning", "eks", "aws", ["v1.2.0-eksbuild.1", "v1.1.3-eksbuild.1", "v1.0.0-eksbuild.1"]),
    "amazon-cloudwatch-observability": (
        "observability", "eks", "aws", ["v4.1.0-eksbuild.1", "v3.6.0-eksbuild.2"]),
    "eks-pod-identity-agent": ("security", "eks", "aws", ["v1.3.4-eksbuild.1", "v1.3.2-eksbuild.2"]),
    "vpc-cni": ("networking", "eks", "aws", ["v1.19.2-eksbuild.1", "v1.18.5-eksbuild.1"]),
    "coredns": ("networking", "eks", "aws", ["v1.11.4-eksbuild.2", "v1.11.3-eksbuild.1"]),
    "kube-proxy": ("networking", "eks", "aws", ["v1.31.3-eksbuild.2", "v1.30.6-eksbuild.3"]),
}


def served_kubernetes_version() -> str:
    """``major.minor`` of the kube-apiserver the sandbox runs: the release sandbox/kube/apiserver/go.mod pins."""
    go_mod = Path(__file__).resolve().parents[1] / "kube" / "apiserver" / "go.mod"
    [release] = [line.split()[1] for line in go_mod.read_text().splitlines() if line.split()[:1] == ["k8s.io/kubernetes"]]
    return ".".join(release.lstrip("v").split(".")[:2])


# A new cluster without a version runs, and DescribeCluster reports, the version of the API server every
# sandbox cluster points at (eks_kubernetes), as EKS reports the control plane's "major.minor" ("Amazon EKS
# Kubernetes versions", EKS User Guide); not moto's 1.19, which EKS no longer offers and on which no
# version of the Task Governance add-on runs (it needs 1.29 or later, "Task governance for HyperPod",
# SageMaker AI Developer Guide). Add-ons are offered for 1.29 up to that version.
DEFAULT_KUBERNETES_VERSION = served_kubernetes_version()
KUBERNETES_VERSIONS = tuple(f"1.{minor}" for minor in range(29, int(DEFAULT_KUBERNETES_VERSION.split(".")[1]) + 1))


def not_found(message: str, **members) -> AwsError:
    return AwsError("ResourceNotFoundException", message, 404, **members)


def in_use(message: str, **members) -> AwsError:
    return AwsError("ResourceInUseException", message, 409, **members)


def invalid_parameter(message: str, **members) -> AwsError:
    return AwsError("InvalidParameterException", message, 400, **members)


def invalid_request(message: str, **members) -> AwsError:
    return AwsError("InvalidRequestException", message, 400, **members)


class Addon:
    def __init__(self, backend, cluster, name: str, params: dict):
        self.cluster_name = cluster.name
        self.name = name
        self.version = params.get("addonVersion") or CATALOG[name][3][0]
        self.service_account_role_arn = params.get("serviceAccountRoleArn")
        self.configuration_values = params.get("configurationValues")
        self.pod_identity_associations = params.get("podIdentityAssociations") or []
        self.namespace = (params.get("namespaceConfig") or {}).get("namespace")
        self.tags = dict(params.get("tags") or {})
        self.client_request_token = params.get("clientRequestToken")
        self.arn = (
            f"arn:{backend.partition}:eks:{backend.region_name}:{backend.account_id}:"
            f"addon/{cluster.name}/{name}/{uuid.uuid4()}"
        )
        self.created_at = self.modified_at = utcnow()
        # The Task Governance add-on installs Kueue: its CRDs come with it and go with it. The add-on stays
        # CREATING (DELETING) until they are there (gone), and no read waits for that, as none waits on EKS.
        governs = name == TASK_GOVERNANCE
        self.lifecycle = Lifecycle(
            "CREATING",
            "ACTIVE",
            on_settle=task_governance.addon_settled if governs else None,
            work=task_governance.addon_work if governs else None,
        )

    @property
    def status(self) -> str:
        return self.lifecycle.status

    def describe(self) -> dict:
        _type, publisher, owner, _versions = CATALOG[self.name]
        result = {
            "addonName": self.name,
            "clusterName": self.cluster_name,
            "status": self.status,
            "addonVersion": self.version,
            "health": {"issues": []},
            "addonArn": self.arn,
            "createdAt": self.created_at,
            "modifiedAt": self.modified_at,
            "tags": dict(self.tags),
            "publisher": publisher,
            "owner": owner,
            "podIdentityAssociations": [],
        }
        if self.service_account_role_arn:
            result["serviceAccountRoleArn"] = self.service_account_role_arn
        if self.configuration_values:
            result["configurationValues"] = self.configuration_values
        if self.namespace:
            result["namespaceConfig"] = {"namespace": self.namespace}
        return result


def _addons(backend) -> dict:
    """The backend's add-ons keyed by (cluster, add-on), without those whose deletion finished."""
    addons = state(backend, "eks_addons")
    for key in [k for k, a in addons.items() if a.status == GONE]:
        del addons[key]
    return addons


def addon_status(account_id: str, region: str, cluster_name: str, addon_name: str) -> str | None:
    """The status of an add-on on an EKS cluster, or None when it is not installed."""
    backend = moto.eks.models.eks_backends[account_id][region]
    addon = _addons(backend).get((cluster_name, addon_name))
    return addon.status if addon else None


def _check_settings(params: dict, cluster_name: str, addon_name: str) -> None:
    version = params.get("addonVersion")
    if version is not None and version not in CATALOG[addon_name][3]:
        raise invalid_parameter(f"Addon version specified is not supported, {version}", clusterName=cluster_name, addonName=addon_name)
    role = params.get("serviceAccountRoleArn")
    if role is not None and not ROLE_ARN.fullmatch(role):
        raise invalid_parameter(f"Role provided in the request is not a valid IAM role ARN: {role}", clusterName=cluster_name, addonName=addon_name)
    values = params.get("configurationValues")
    if values:
        try:
            parsed = json.loads(values)
        except ValueError:
            try:
                parsed = yaml.safe_load(values)
            except yaml.YAMLError as error:
                raise invalid_parameter(f"ConfigurationValue provided in request is not supported: {error}", addonName=addon_name) from None
        if not isinstance(parsed, dict):
            raise invalid_parameter(
                "ConfigurationValue provided in request is not supported: Json schema validation failed with error: [$: must be an object]",
                addonName=addon_name,
            )


class EksAddonBackend:
    """Methods grafted onto moto's EKSBackend."""

    def _addon_cluster(self, cluster_name: str):
        cluster = self.clusters.get(cluster_name)
        if cluster is None:
            raise not_found(f"No cluster found for name: {cluster_name}.", clusterName=cluster_name)
        return cluster

    def _addon(self, cluster_name: str, addon_name: str) -> Addon:
        self._addon_cluster(cluster_name)
        addon = _addons(self).get((cluster_name, addon_name))
        if addon is None:
            raise not_found(f"No addon: {addon_name} found in cluster: {cluster_name}", clusterName=cluster_name, addonName=addon_name)
        return addon

    def create_addon(self, params: dict) -> Addon:
        cluster = self._addon_cluster(params["clusterName"])
        name = params["addonName"]
        if name not in CATALOG:
            raise invalid_parameter(f"Addon {name} specified is not supported", clusterName=cluster.name, addonName=name)
        if cluster.status != "ACTIVE":
            raise invalid_request(f"Cluster {cluster.name} is not ACTIVE", clusterName=cluster.name)
        _check_settings(params, cluster.name, name)
        if cluster.version not in KUBERNETES_VERSIONS:
            # DescribeAddonVersions offers no version of the add-on for the cluster's Kubernetes version.
            raise invalid_parameter(f"Addon {name} is not supported on Kubernetes version {cluster.version}", clusterName=cluster.name, addonName=name)
        addons = _addons(self)
        existing = addons.get((cluster.name, name))
        if existing is not None:
            token = params.get("clientRequestToken")
            if token and token == existing.client_request_token:
                return existing
            raise in_use(f"Addon already exists: {name}", clusterName=cluster.name, addonName=name)
        addon = Addon(self, cluster, name, params)
        addons[(cluster.name, name)] = addon
        return addon

    def describe_addon(self, cluster_name: str, addon_name: str) -> Addon:
        return self._addon(cluster_name, addon_name)

    def update_addon(self, params: dict) -> dict:
        addon = self._addon(params["clusterName"], params["addonName"])
        status = addon.status
        if status in TRANSITIONAL:
            raise in_use(f"Addon {addon.name} is in {status} state and cannot be updated", clusterName=addon.cluster_name, addonName=addon.name)
        if status in ("CREATE_FAILED", "DELETE_FAILED"):
            raise invalid_request(f"Addon {addon.name} is in {status} state and cannot be updated", clusterName=addon.cluster_name, addonName=addon.name)
        _check_settings(params, addon.cluster_name, addon.name)
        changes = []
        for member, kind in (
            ("addonVersion", "AddonVersion"),
            ("serviceAccountRoleArn", "ServiceAccountRoleArn"),
            ("resolveConflicts", "ResolveConflicts"),
            ("configurationValues", "ConfigurationValues"),
        ):
            if params.get(member) is not None:
                changes.append({"type": kind, "value": params[member]})
        if params.get("addonVersion") is not None:
            addon.version = params["addonVersion"]
        if params.get("serviceAccountRoleArn") is not None:
            # An empty string is how EKS removes the role; the model allows no empty value, so this only sets.
            addon.service_account_role_arn = params["serviceAccountRoleArn"]
        if params.get("configurationValues") is not None:
            addon.configuration_values = params["configurationValues"] or None
        addon.modified_at = utcnow()
        addon.lifecycle.move("UPDATING", "ACTIVE")
        return {
            "id": str(uuid.uuid4()),
            "status": "InProgress",
            "type": "AddonUpdate",
            "params": changes,
            "createdAt": addon.modified_at,
            "errors": [],
        }

    def delete_addon(self, cluster_name: str, addon_name: str) -> Addon:
        addon = self._addon(cluster_name, addon_name)
        if addon.status != "DELETING":
            addon.modified_at = utcnow()
            addon.lifecycle.move("DELETING", GONE)
        return addon

    def list_addons(self, cluster_name: str) -> list[str]:
        self._addon_cluster(cluster_name)
        return sorted(name for (cluster, name) in _addons(self) if cluster == cluster_name)

    def tag_addon_or_resource(self, resource_arn: str, tags: dict) -> bool:
        addon = next((a for a in _addons(self).values() if a.arn == resource_arn), None)
        if addon is None:
            return False
        addon.tags.update(tags)
        return True

    def untag_addon_or_resource(self, resource_arn: str, keys: list) -> bool:
        addon = next((a for a in _addons(self).values() if a.arn == resource_arn), None)
        if addon is None:
            return False
        for key in keys if isinstance(keys, list) else [keys]:
            addon.tags.pop(key, None)
        return True

    def addon_tags(self, resource_arn: str) -> dict | None:
        addon = next((a for a in _addons(self).values() if a.arn == resource_arn), None)
        return None if addon is None else dict(addon.tags)


def request_params(response, operation: str) -> dict:
    # EKS reports what breaks its model as InvalidParameterException.
    return rest_json_request(response, "eks", operation, invalid_parameter)


class EksAddonResponse:
    """Methods grafted onto moto's EKSResponse."""

    def create_addon(self):
        params = request_params(self, "CreateAddon")
        addon = self.eks_backend.create_addon(params)
        return ActionResult({"addon": addon.describe()})

    def describe_addon(self):
        params = request_params(self, "DescribeAddon")
        addon = self.eks_backend.describe_addon(params["clusterName"], params["addonName"])
        return ActionResult({"addon": addon.describe()})

    def update_addon(self):
        params = request_params(self, "UpdateAddon")
        update = self.eks_backend.update_addon(params)
        return ActionResult({"update": update})

    def delete_addon(self):
        params = request_params(self, "DeleteAddon")
        addon = self.eks_backend.delete_addon(params["clusterName"], params["addonName"])
        return ActionResult({"addon": addon.describe()})

    def list_addons(self):
        params = request_params(self, "ListAddons")
        return ActionResult(page_answer("addons", self.eks_backend.list_addons(params["clusterName"]), params, invalid_parameter))

    def describe_addon_versions(self):
        params = request_params(self, "DescribeAddonVersions")
        wanted_k8s = params.get("kubernetesVersion")
        infos = []
        for name, (kind, publisher, owner, versions) in sorted(CATALOG.items()):
            if params.get("addonName") and params["addonName"] != name:
                continue
            if params.get("types") and kind not in params["types"]:
                continue
            if params.get("publishers") and publisher not in params["publishers"]:
                continue
            if params.get("owners") and owner not in params["owners"]:
                continue
            k8s_versions = [wanted_k8s] if wanted_k8s in KUBERNETES_VERSIONS else ([] if wanted_k8s else list(KUBERNETES_VERSIONS))
            if not k8s_versions:
                continue
            infos.append({
                "addonName": name,
                "type": kind,
                "publisher": publisher,
                "owner": owner,
                "addonVersions": [
                    {
                        "addonVersion": version,
                        "architecture": ["amd64", "arm64"],
                        "computeTypes": ["ec2"],
                        "compatibilities": [
                            {"clusterVersion": k8s, "platformVersions": ["*"], "defaultVersion": index == 0} for k8s in k8s_versions
                        ],
                        "requiresConfiguration": False,
                        "requiresIamPermissions": False,
                    }
                    for index, version in enumerate(versions)
                ],
            })
        return ActionResult(page_answer("addons", infos, params, invalid_parameter))


URL_PATHS = {
    "{0}/clusters/(?P<name>[^/]+)/addons$": "dispatch",
    "{0}/clusters/(?P<name>[^/]+)/addons/(?P<addonName>[^/]+)$": "dispatch",
    "{0}/clusters/(?P<name>[^/]+)/addons/(?P<addonName>[^/]+)/update$": "dispatch",
    "{0}/addons/supported-versions$": "dispatch",
}


def _wrap_tagging() -> None:
    """Let TagResource/UntagResource/ListTagsForResource reach add-on ARNs too.

    moto's versions only know clusters. They are wrapped, not replaced, so
    another addition that extends them for its own resources keeps working.
    """
    backend_cls = moto.eks.models.EKSBackend
    tag, untag, list_tags = backend_cls.tag_resource, backend_cls.untag_resource, backend_cls.list_tags_for_resource

    def tag_resource(self, resource_arn, tags):
        if not self.tag_addon_or_resource(resource_arn, tags):
            tag(self, resource_arn, tags)

    def untag_resource(self, resource_arn, tag_keys):
        if not self.untag_addon_or_resource(resource_arn, tag_keys):
            untag(self, resource_arn, tag_keys)

    def list_tags_for_resource(self, resource_arn):
        tags = self.addon_tags(resource_arn)
        return list_tags(self, resource_arn) if tags is None else tags

    backend_cls.tag_resource = tag_resource
    backend_cls.untag_resource = untag_resource
    backend_cls.list_tags_for_resource = list_tags_for_resource


def install() -> None:
    moto.eks.models.DEFAULT_KUBERNETES_VERSION = DEFAULT_KUBERNETES_VERSION
    graft(moto.eks.models.EKSBackend, EksAddonBackend)
    graft(moto.eks.responses.EKSResponse, EksAddonResponse)
    for path in URL_PATHS:
        moto.eks.urls.url_paths[path] = moto.eks.urls.response.dispatch
    _wrap_tagging()
