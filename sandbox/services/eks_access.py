"""EKS access entries and access policies, which moto 5.2.5 lacks entirely.

CreateAccessEntry, DescribeAccessEntry, UpdateAccessEntry, DeleteAccessEntry,
ListAccessEntries, AssociateAccessPolicy, DisassociateAccessPolicy,
ListAssociatedAccessPolicies and ListAccessPolicies, with the checks EKS makes:

- the cluster exists and its ``accessConfig.authenticationMode`` is ``API`` or
  ``API_AND_CONFIG_MAP`` (moto ignores ``accessConfig`` on CreateCluster; this
  addition records it and returns it from DescribeCluster; a cluster created
  through the API without it is ``CONFIG_MAP``, as EKS documents);
- the principal is an IAM role or user that exists, by its full ARN including
  the path (EKS answers "invalid principal" for an SSO role ARN without its path);
- access policies are the ones EKS publishes; a namespace scope needs namespaces,
  a cluster scope takes none; only ``STANDARD`` entries take access policies,
  groups and user names; user names and groups cannot use reserved prefixes.
"""

from __future__ import annotations

import json
import re
import uuid
from urllib.parse import unquote, urlsplit

import moto.core.responses
import moto.eks.models
import moto.eks.responses
import moto.eks.urls
from moto.core.responses import ActionResult, EmptyResult

from sandbox import iam_propagation
from sandbox.core import AwsError, graft, now_epoch, page_answer, tag_by_arn, validate_request

POLICY_ARN_PREFIX = "arn:aws:eks::aws:cluster-access-policy/"
# The access policies EKS publishes (ListAccessPolicies), HyperPod's among them.
ACCESS_POLICY_NAMES = (
    "AmazonAIOpsAssistantPolicy",
    "AmazonEKSAdminPolicy",
    "AmazonEKSAdminViewPolicy",
    "AmazonEKSAutoNodePolicy",
    "AmazonEKSBlockStorageClusterPolicy",
    "AmazonEKSClusterAdminPolicy",
    "AmazonEKSComputeClusterPolicy",
    "AmazonEKSEditPolicy",
    "AmazonEKSHybridPolicy",
    "AmazonEKSLoadBalancingClusterPolicy",
    "AmazonEKSNetworkingClusterPolicy",
    "AmazonEKSViewPolicy",
    "AmazonEMRJobPolicy",
    "AmazonSagemakerHyperpodClusterPolicy",
    "AmazonSagemakerHyperpodControllerPolicy",
    "AmazonSagemakerHyperpodInferencePolicy",
    "AmazonSagemakerHyperpodSpacePolicy",
    "AmazonSagemakerHyperpodSpaceTemplatePolicy",
    "AmazonSagemakerHyperpodSystemNamespacePolicy",
    "AmazonSagemakerHyperpodTrainingPolicy",
    "AmazonSagemakerHyperpodUserClusterPolicy",
)
ENTRY_TYPES = ("STANDARD", "FARGATE_LINUX", "EC2_LINUX", "EC2_WINDOWS", "EC2", "HYBRID_LINUX", "HYPERPOD_LINUX")
RESERVED_PREFIXES = ("system:", "eks:", "aws:", "amazon:", "iam:")
API_MODES = ("API", "API_AND_CONFIG_MAP")
_PRINCIPAL = re.compile(r"arn:(aws[a-z-]*):iam::(\d{12}):(role|user)(/.*)?/([\w+=,.@-]+)")

URL_PATHS = {
    "{0}/clusters/(?P<name>[^/]+)/access-entries$": "dispatch",
    "{0}/clusters/(?P<name>[^/]+)/access-entries/(?P<principalArn>.+)/access-policies/(?P<policyArn>arn.+)$": "dispatch",
    "{0}/clusters/(?P<name>[^/]+)/access-entries/(?P<principalArn>.+)/access-policies$": "dispatch",
    "{0}/clusters/(?P<name>[^/]+)/access-entries/(?P<principalArn>.+)$": "dispatch",
    "{0}/access-policies$": "dispatch",
}


def _invalid_parameter(message: str) -> AwsError:
    return AwsError("InvalidParameterException", message)


def _invalid_request(message: str) -> AwsError:
    return AwsError("InvalidRequestException", message)


def _not_found(message: str) -> AwsError:
    return AwsError("ResourceNotFoundException", message, 404)


class EksAccessBackend:
    """Access entries per cluster, kept on moto's cluster object (``sandbox_access_entries``)."""

    def _access_cluster(self, cluster_name: str):
        cluster = self.clusters.get(cluster_name)
        if cluster is None:
            raise _not_found(f"No cluster found for name: {cluster_name}.")
        return cluster

    def _access_entries(self, cluster_name: str) -> dict:
        # Kept on the cluster object: a cluster deleted and created again starts without entries, as in EKS.
        return self._access_cluster(cluster_name).__dict__.setdefault("sandbox_access_entries", {})

    def _access_entry(self, cluster_name: str, principal_arn: str) -> dict:
        self._access_cluster(cluster_name)
        entry = self._access_entries(cluster_name).get(principal_arn)
        if entry is None:
            raise _not_found(f"The specified access entry resource could not be found. principalArn: {principal_arn}")
        return entry

    def _require_api_mode(self, cluster_name: str) -> None:
        cluster = self._access_cluster(cluster_name)
        mode = (getattr(cluster, "access_config", None) or {}).get("authenticationMode", "CONFIG_MAP")
        if mode not in API_MODES:
            raise _invalid_request(f"The cluster's authentication mode must be set to one of [{', '.join(API_MODES)}] to perform this operation.")

    def _principal(self, principal_arn: str):
        """The IAM role or user ``principal_arn`` names, or None."""
        from moto.iam.models import iam_backends

        match = _PRINCIPAL.fullmatch(principal_arn)
        if not match or match.group(2) != self.account_id:
            return None
        iam = iam_backends[self.account_id]["global"]
        kind, name = match.group(3), match.group(5)
        found = iam.roles.values() if kind == "role" else iam.users.values()
        return next((p for p in found if p.arn == principal_arn and p.name == name), None)

    def _principal_exists(self, principal_arn: str) -> bool:
        return self._principal(principal_arn) is not None

    def entry_works(self, cluster_name: str, principal_arn: str) -> bool:
        """Whether the entry of ``principal_arn`` still maps the principal to Kubernetes.

        EKS API reference, AccessEntry ``principalArn``: "If you delete the IAM principal, even if it has the same ARN,
        the access entry won't work" (EKS keeps the principal's unique ID, as IAM policies do for a role in a trust
        policy). The entry records the ID it was made for; a role deleted and created again by name has another.
        The sandbox's API server asks it of every EKS token (``eks_kubernetes_webhook``), and the tests may ask here.
        """
        entry = self._access_entry(cluster_name, principal_arn)
        principal = self._principal(principal_arn)
        return principal is not None and entry.get("_principal_id") == principal.id

    def _check_identity(self, entry_type: str, username, groups) -> None:
        if entry_type != "STANDARD" and (username is not None or groups):
            raise _invalid_parameter(f"The kubernetesGroups and username parameters can only be set for access entries of type STANDARD, not {entry_type}.")
        if username is not None and username.startswith(RESERVED_PREFIXES):
            raise _invalid_parameter(f"The username can't start with {', '.join(RESERVED_PREFIXES)}.")
        for group in groups or []:
            if group.startswith(RESERVED_PREFIXES):
                raise _invalid_parameter(f"The kubernetesGroups can't start with {', '.join(RESERVED_PREFIXES)}: {group}.")

    def create_access_entry(self, cluster_name, principal_arn, kubernetes_groups, tags, username, entry_type) -> dict:
        cluster = self._access_cluster(cluster_name)
        self._require_api_mode(cluster_name)
        entry_type = entry_type or "STANDARD"
        if entry_type not in ENTRY_TYPES:
            raise _invalid_parameter(f"The specified type is invalid: {entry_type}. Valid types: {', '.join(ENTRY_TYPES)}.")
        if not self._principal_exists(principal_arn):
            raise _invalid_parameter("The specified principalArn is invalid: invalid principal.")
        iam_propagation.refuse_new_role("CreateAccessEntry", self.account_id, principal_arn)
        entries = self._access_entries(cluster_name)
        if principal_arn in entries:
            raise AwsError("ResourceInUseException", "The specified access entry resource is already in use on this cluster.", 409)
        self._check_identity(entry_type, username, kubernetes_groups)
        match = _PRINCIPAL.fullmatch(principal_arn)
        kind, name = match.group(3), match.group(5)
        if username is None:
            if entry_type == "STANDARD":
                username = (
                    f"arn:{match.group(1)}:sts::{self.account_id}:assumed-role/{name}/{{{{SessionName}}}}" if kind == "role" else principal_arn
                )
            else:
                username = "system:node:{{EC2PrivateDNSName}}"
        created = now_epoch()
        entry = {
            "clusterName": cluster_name,
            "principalArn": principal_arn,
            "kubernetesGroups": list(kubernetes_groups or []),
            "accessEntryArn": (
                f"arn:{match.group(1)}:eks:{self.region_name}:{self.account_id}:access-entry/{cluster_name}/{kind}/{self.account_id}/{name}/{uuid.uuid4()}"
            ),
            "createdAt": created,
            "modifiedAt": created,
            "tags": dict(tags or {}),
            "username": username,
            "type": entry_type,
            "_policies": {},
            "_cluster_arn": cluster.arn,
            # The unique ID of the principal the entry was made for (entry_works).
            "_principal_id": self._principal(principal_arn).id,
        }
        entries[principal_arn] = entry
        return entry

    def update_access_entry(self, cluster_name, principal_arn, kubernetes_groups, username) -> dict:
        entry = self._access_entry(cluster_name, principal_arn)
        self._check_identity(entry["type"], username, kubernetes_groups)
        if kubernetes_groups is not None:
            entry["kubernetesGroups"] = list(kubernetes_groups)
        if username is not None:
            entry["username"] = username
        entry["modifiedAt"] = now_epoch()
        return entry

    def delete_access_entry(self, cluster_name, principal_arn) -> None:
        self._access_entry(cluster_name, principal_arn)
        del self._access_entries(cluster_name)[principal_arn]

    def list_access_entries(self, cluster_name, associated_policy_arn) -> list[str]:
        self._access_cluster(cluster_name)
        if associated_policy_arn is not None:
            self._known_policy(associated_policy_arn)
        return sorted(
            arn for arn, entry in self._access_entries(cluster_name).items() if associated_policy_arn is None or associated_policy_arn in entry["_policies"]
        )

    def _known_policy(self, policy_arn: str) -> None:
        if not policy_arn.startswith(POLICY_ARN_PREFIX) or policy_arn[len(POLICY_ARN_PREFIX):] not in ACCESS_POLICY_NAMES:
            raise _invalid_parameter(f"The specified policyArn is invalid: {policy_arn}.")

    def associate_access_policy(self, cluster_name, principal_arn, policy_arn, access_scope) -> dict:
        entry = self._access_entry(cluster_name, principal_arn)
        self._known_policy(policy_arn)
        if entry["type"] != "STANDARD":
            raise _invalid_request(f"Access policies can only be associated with access entries of type STANDARD, not {entry['type']}.")
        scope_type = access_scope.get("type")
        namespaces = access_scope.get("namespaces") or []
        if scope_type is None:
            raise _invalid_parameter("accessScope.type must be specified.")
        if scope_type == "namespace" and not namespaces:
            raise _invalid_parameter("At least one namespace must be specified when the accessScope type is namespace.")
        if scope_type == "cluster" and namespaces:
            raise _invalid_parameter("Namespaces can't be specified when the accessScope type is cluster.")
        for namespace in namespaces:
            if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\*?|[a-z0-9]*\*", namespace) or len(namespace) > 63:
                raise _invalid_parameter(f"The namespace {namespace!r} is not a valid Kubernetes namespace name.")
        now = now_epoch()
        scope = {"type": scope_type, "namespaces": list(namespaces)}
        existing = entry["_policies"].get(policy_arn)
        if existing is None:
            existing = {"policyArn": policy_arn, "accessScope": scope, "associatedAt": now, "modifiedAt": now}
            entry["_policies"][policy_arn] = existing
        else:
            existing["accessScope"] = scope
            existing["modifiedAt"] = now
        return existing

    def disassociate_access_policy(self, cluster_name, principal_arn, policy_arn) -> None:
        entry = self._access_entry(cluster_name, principal_arn)
        if policy_arn not in entry["_policies"]:
            raise _not_found(f"The specified policyArn {policy_arn} is not associated with principalArn {principal_arn}.")
        del entry["_policies"][policy_arn]

    def list_associated_access_policies(self, cluster_name, principal_arn) -> list[dict]:
        entry = self._access_entry(cluster_name, principal_arn)
        return [entry["_policies"][arn] for arn in sorted(entry["_policies"])]


def _public(entry: dict) -> dict:
    result = {k: v for k, v in entry.items() if not k.startswith("_")}
    if not result.get("tags"):
        result.pop("tags", None)
    return result


def _bad_token(_message: str) -> AwsError:
    return _invalid_parameter("The nextToken is invalid.")


class EksAccessResponse:
    def _access_params(self, operation: str) -> dict:
        body = json.loads(self.body) if self.body else {}
        params = dict(body)
        uri = self.uri_match or {}
        if "name" in uri:
            params["clusterName"] = unquote(uri["name"])
        for key in ("principalArn", "policyArn"):
            if key in uri:
                params[key] = unquote(uri[key])
        for key in ("maxResults", "nextToken", "associatedPolicyArn"):
            value = self.querystring.get(key)
            if value:
                params[key] = int(value[0]) if key == "maxResults" and value[0].isdigit() else value[0]
        validate_request("eks", operation, params)
        return params

    def create_access_entry(self):
        p = self._access_params("CreateAccessEntry")
        entry = self.eks_backend.create_access_entry(
            p["clusterName"], p["principalArn"], p.get("kubernetesGroups"), p.get("tags"), p.get("username"), p.get("type")
        )
        return ActionResult({"accessEntry": _public(entry)})

    def describe_access_entry(self):
        p = self._access_params("DescribeAccessEntry")
        return ActionResult({"accessEntry": _public(self.eks_backend._access_entry(p["clusterName"], p["principalArn"]))})

    def update_access_entry(self):
        p = self._access_params("UpdateAccessEntry")
        entry = self.eks_backend.update_access_entry(p["clusterName"], p["principalArn"], p.get("kubernetesGroups"), p.get("username"))
        return ActionResult({"accessEntry": _public(entry)})

    def delete_access_entry(self):
        p = self._access_params("DeleteAccessEntry")
        self.eks_backend.delete_access_entry(p["clusterName"], p["principalArn"])
        return EmptyResult()

    def list_access_entries(self):
        p = self._access_params("ListAccessEntries")
        arns = self.eks_backend.list_access_entries(p["clusterName"], p.get("associatedPolicyArn"))
        return ActionResult(page_answer("accessEntries", arns, p, _bad_token))

    def associate_access_policy(self):
        p = self._access_params("AssociateAccessPolicy")
        associated = self.eks_backend.associate_access_policy(p["clusterName"], p["principalArn"], p["policyArn"], p["accessScope"])
        return ActionResult({"clusterName": p["clusterName"], "principalArn": p["principalArn"], "associatedAccessPolicy": associated})

    def disassociate_access_policy(self):
        p = self._access_params("DisassociateAccessPolicy")
        self.eks_backend.disassociate_access_policy(p["clusterName"], p["principalArn"], p["policyArn"])
        return EmptyResult()

    def list_associated_access_policies(self):
        p = self._access_params("ListAssociatedAccessPolicies")
        policies = self.eks_backend.list_associated_access_policies(p["clusterName"], p["principalArn"])
        answer = page_answer("associatedAccessPolicies", policies, p, _bad_token)
        return ActionResult(dict({"clusterName": p["clusterName"], "principalArn": p["principalArn"]}, **answer))

    def list_access_policies(self):
        p = self._access_params("ListAccessPolicies")
        policies = [{"name": name, "arn": POLICY_ARN_PREFIX + name} for name in ACCESS_POLICY_NAMES]
        return ActionResult(page_answer("accessPolicies", policies, p, _bad_token))


def _wrap_cluster_calls() -> None:
    """Record ``accessConfig`` on CreateCluster (moto drops it); DescribeCluster then returns it."""
    response_cls = moto.eks.responses.EKSResponse
    original_create = response_cls.create_cluster
    if getattr(original_create, "_records_access_config", False):
        return

    def create_cluster(self):
        result = original_create(self)
        access_config = dict(self._get_param("accessConfig") or {})
        mode = access_config.get("authenticationMode", "CONFIG_MAP")
        cluster = self.eks_backend.clusters[self._get_param("name")]
        cluster.access_config = {
            "authenticationMode": mode,
            "bootstrapClusterCreatorAdminPermissions": access_config.get("bootstrapClusterCreatorAdminPermissions", True),
        }
        return result

    create_cluster._records_access_config = True
    response_cls.create_cluster = create_cluster


class EksRegionFromHost:
    """moto reads the region from anywhere in the URL: ``.../sso.amazonaws.com/...`` in an SSO
    role ARN (a path label of the access-entry operations) became the region. Look at the host only."""

    def get_region_from_url(self, request, full_url: str) -> str:
        return moto.core.responses.BaseResponse.get_region_from_url(self, request, urlsplit(full_url).netloc)


def _entry_by_arn(backend, resource_arn):
    """The access entry of ``resource_arn``, or None: EKS tags access entries by their ARN (moto tags clusters only)."""
    for cluster in backend.clusters.values():
        for entry in cluster.__dict__.get("sandbox_access_entries", {}).values():
            if entry["accessEntryArn"] == resource_arn:
                return entry
    return None


# A request's access entry that does not exist has no UUID yet: the ARN it is authorized on ends with this one (an
# assumption: EKS does not say which ARN it authorizes a missing entry's read on; a policy that names the entry by its
# principal's segments and a wildcard for the UUID, as the team's permission set does, reaches it either way).
MISSING_UUID = "00000000-0000-0000-0000-000000000000"


def access_entry_arn(account_id: str, region: str, cluster_name: str, principal_arn: str) -> str | None:
    """The ARN IAM authorizes an operation on ``principal_arn``'s entry on: the entry's own, or the one it would have.

    "arn:${Partition}:eks:${Region}:${Account}:access-entry/${ClusterName}/${IamIdentityType}/${IamIdentityAccountID}/
    ${IamIdentityName}/${UUID}" (resource type access-entry: DescribeAccessEntry, UpdateAccessEntry, DeleteAccessEntry,
    Associate/DisassociateAccessPolicy and ListAssociatedAccessPolicies, "Actions, resources, and condition keys for
    Amazon Elastic Kubernetes Service", https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonelastickubernetesservice.html).
    None when ``principal_arn`` is no IAM role or user ARN."""
    match = _PRINCIPAL.fullmatch(principal_arn)
    if not match:
        return None
    cluster = moto.eks.models.eks_backends[account_id][region].clusters.get(cluster_name)
    entry = cluster.__dict__.get("sandbox_access_entries", {}).get(principal_arn) if cluster is not None else None
    if entry is not None:
        return entry["accessEntryArn"]
    kind, name = match.group(3), match.group(5)
    return f"arn:{match.group(1)}:eks:{region}:{account_id}:access-entry/{cluster_name}/{kind}/{match.group(2)}/{name}/{MISSING_UUID}"


def install() -> None:
    tag_by_arn(moto.eks.models.EKSBackend, _entry_by_arn, lambda: _invalid_parameter("An access entry can have at most 50 tags."))
    graft(moto.eks.responses.EKSResponse, EksRegionFromHost)
    graft(moto.eks.models.EKSBackend, EksAccessBackend)
    graft(moto.eks.responses.EKSResponse, EksAccessResponse)
    _wrap_cluster_calls()
    dispatch = moto.eks.urls.response.dispatch
    for path in URL_PATHS:
        moto.eks.urls.url_paths.setdefault(path, dispatch)
