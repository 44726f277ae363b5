"""EKS Pod Identity associations, which moto 5.2.5 lacks.

Create/Describe/Update/Delete/ListPodIdentityAssociation(s), as EKS behaves
(https://docs.aws.amazon.com/eks/latest/APIReference/API_CreatePodIdentityAssociation.html):

- requests are validated against botocore's model; EKS reports what breaks it as
  InvalidParameterException;
- an association binds one service account in one namespace of a cluster to an IAM role: a second
  one for the same cluster, namespace and service account is a ResourceInUseException;
- an unknown cluster or association is a ResourceNotFoundException;
- ids are ``a-`` and 17 lower-case letters and digits; the ARN is
  ``arn:aws:eks:<region>:<account>:podidentityassociation/<cluster>/<id>``;
- only the role (and session-tag settings) can be updated; namespace and service account cannot;
- tags are given at create and changed with TagResource/UntagResource on the association's ARN (at most 50);
- a role IAM does not have is refused ("Role provided in the request does not exist"), and so is one whose trust
  policy does not let ``pods.eks.amazonaws.com`` call both ``sts:AssumeRole`` and ``sts:TagSession`` ("Trust policy
  of the role provided is invalid"), both InvalidParameterException, at create and update (the trust AWS documents for Pod Identity,
  https://docs.aws.amazon.com/eks/latest/userguide/pod-id-role.html; the answer EKS gives a role trusting only a
  web identity: hashicorp/terraform-provider-aws#41483). Conditions are not evaluated here: EKS has no pod to
  evaluate them with until a pod asks (sandbox/services/eks_auth.py).

The pods that run as the service account get the role's credentials from the
``eks-pod-identity-agent`` add-on, with the session tags ``eks-cluster-arn``, ``eks-cluster-name``,
``kubernetes-namespace``, ``kubernetes-service-account``, ``kubernetes-pod-name`` and ``kubernetes-pod-uid``.
"""

from __future__ import annotations

import fnmatch
import json
import string
from urllib.parse import unquote

import moto.eks.models
import moto.eks.responses
import moto.eks.urls
from moto.core.responses import ActionResult
from moto.core.utils import utcnow
from moto.moto_api._internal import mock_random as random

from sandbox import iam_propagation
from sandbox.core import graft, page_answer, state, tag_by_arn
from sandbox.services.eks_addons import in_use, invalid_parameter, not_found, request_params

URL_PATHS = {
    "{0}/clusters/(?P<name>[^/]+)/pod-identity-associations$": "dispatch",
    "{0}/clusters/(?P<name>[^/]+)/pod-identity-associations/(?P<associationId>[^/]+)$": "dispatch",
}
PRINCIPAL = "pods.eks.amazonaws.com"
TRUST_ACTIONS = ("sts:AssumeRole", "sts:TagSession")
SUMMARY_KEYS = ("clusterName", "namespace", "serviceAccount", "associationArn", "associationId", "ownerArn")


def _as_list(value) -> list:
    return value if isinstance(value, list) else [value]


def trusts_pod_identity(trust_document: str) -> bool:
    """Whether one Allow statement of the trust policy gives EKS Pod Identity both actions it calls."""
    try:
        document = json.loads(trust_document)
    except ValueError:
        document = json.loads(unquote(trust_document))
    for statement in _as_list(document.get("Statement", [])):
        principal = statement.get("Principal")
        services = _as_list(principal.get("Service", [])) if isinstance(principal, dict) else []
        actions = [action.lower() for action in _as_list(statement.get("Action", []))]
        if statement.get("Effect") == "Allow" and PRINCIPAL in services and all(
            any(fnmatch.fnmatchcase(wanted.lower(), action) for action in actions) for wanted in TRUST_ACTIONS
        ):
            return True
    return False


def refuse_role(account_id: str, role_arn: str) -> None:
    """EKS's answer for a role it cannot use: one IAM does not have (a role IAM has not propagated yet gets the
    same answer, sandbox/iam_propagation.py), or one that does not trust Pod Identity."""
    role = iam_propagation.role(account_id, role_arn)
    if role is None:
        raise invalid_parameter("Role provided in the request does not exist")
    if not trusts_pod_identity(role.assume_role_policy_document):
        raise invalid_parameter("Trust policy of the role provided is invalid. Follow the official documentation to resolve the issue.")


class PodIdentityBackend:
    """Grafted onto moto's EKSBackend."""

    def _pod_identity_cluster(self, cluster_name: str):
        if cluster_name not in self.clusters:
            raise not_found(f"No cluster found for name: {cluster_name}.", clusterName=cluster_name)
        return self.clusters[cluster_name]

    def _associations(self, cluster_name: str) -> dict:
        self._pod_identity_cluster(cluster_name)
        return state(self, "pod_identity_associations").setdefault(cluster_name, {})

    def _association(self, cluster_name: str, association_id: str) -> dict:
        association = self._associations(cluster_name).get(association_id)
        if association is None:
            raise not_found(f"No Pod Identity association found for id: {association_id}.", clusterName=cluster_name)
        return association

    def create_pod_identity_association(self, params: dict) -> dict:
        associations = self._associations(params["clusterName"])
        iam_propagation.refuse_new_role("CreatePodIdentityAssociation", self.account_id, params["roleArn"])
        refuse_role(self.account_id, params["roleArn"])
        for other in associations.values():
            if (other["namespace"], other["serviceAccount"]) == (params["namespace"], params["serviceAccount"]):
                raise in_use(f"Association already exists: {other['associationId']}", clusterName=params["clusterName"])
        association_id = "a-" + "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(17))
        now = utcnow()
        association = {
            "clusterName": params["clusterName"],
            "namespace": params["namespace"],
            "serviceAccount": params["serviceAccount"],
            "roleArn": params["roleArn"],
            "associationArn": f"arn:{self.partition}:eks:{self.region_name}:{self.account_id}:podidentityassociation/{params['clusterName']}/{association_id}",
            "associationId": association_id,
            "tags": dict(params.get("tags") or {}),
            "createdAt": now,
            "modifiedAt": now,
            "disableSessionTags": bool(params.get("disableSessionTags", False)),
        }
        if params.get("targetRoleArn"):
            association["targetRoleArn"] = params["targetRoleArn"]
        if params.get("policy"):
            association["policy"] = params["policy"]
        associations[association_id] = association
        return association

    def update_pod_identity_association(self, params: dict) -> dict:
        association = self._association(params["clusterName"], params["associationId"])
        if "roleArn" in params:
            refuse_role(self.account_id, params["roleArn"])
        for key in ("roleArn", "disableSessionTags", "targetRoleArn", "policy"):
            if key in params:
                association[key] = params[key]
        association["modifiedAt"] = utcnow()
        return association

    def delete_pod_identity_association(self, cluster_name: str, association_id: str) -> dict:
        association = self._association(cluster_name, association_id)
        del self._associations(cluster_name)[association_id]
        return association

    def list_pod_identity_associations(self, params: dict) -> list[dict]:
        found = list(self._associations(params["clusterName"]).values())
        for key in ("namespace", "serviceAccount"):
            if params.get(key):
                found = [a for a in found if a[key] == params[key]]
        return [{k: a[k] for k in SUMMARY_KEYS if k in a} for a in found]


class PodIdentityResponse:
    """Methods grafted onto moto's EKSResponse."""

    def create_pod_identity_association(self):
        params = request_params(self, "CreatePodIdentityAssociation")
        return ActionResult({"association": self.eks_backend.create_pod_identity_association(params)})

    def describe_pod_identity_association(self):
        params = request_params(self, "DescribePodIdentityAssociation")
        return ActionResult({"association": self.eks_backend._association(params["clusterName"], params["associationId"])})

    def update_pod_identity_association(self):
        params = request_params(self, "UpdatePodIdentityAssociation")
        return ActionResult({"association": self.eks_backend.update_pod_identity_association(params)})

    def delete_pod_identity_association(self):
        params = request_params(self, "DeletePodIdentityAssociation")
        return ActionResult({"association": self.eks_backend.delete_pod_identity_association(params["clusterName"], params["associationId"])})

    def list_pod_identity_associations(self):
        params = request_params(self, "ListPodIdentityAssociations")
        return ActionResult(page_answer("associations", self.eks_backend.list_pod_identity_associations(params), params, invalid_parameter))


def _association_by_arn(backend, resource_arn):
    """The association of ``resource_arn``, or None: EKS tags associations by their ARN (the way to mark an association
    made without tags: UpdatePodIdentityAssociation takes none)."""
    for associations in state(backend, "pod_identity_associations").values():
        for association in associations.values():
            if association["associationArn"] == resource_arn:
                return association
    return None


def install() -> None:
    graft(moto.eks.models.EKSBackend, PodIdentityBackend)
    tag_by_arn(moto.eks.models.EKSBackend, _association_by_arn, lambda: invalid_parameter("A Pod Identity association can have at most 50 tags."))
    graft(moto.eks.responses.EKSResponse, PodIdentityResponse)
    for path in URL_PATHS:
        moto.eks.urls.url_paths[path] = moto.eks.urls.response.dispatch
