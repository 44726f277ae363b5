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
- only the role (and session-tag settings) can be updated; namespace and service account cannot.

The pods that run as the service account get the role's credentials from the
``eks-pod-identity-agent`` add-on, with the session tags ``eks-cluster-arn``, ``eks-cluster-name``,
``kubernetes-namespace``, ``kubernetes-service-account``, ``kubernetes-pod-name`` and ``kubernetes-pod-uid``.
"""

from __future__ import annotations

import string

import moto.eks.models
import moto.eks.responses
import moto.eks.urls
from moto.core.responses import ActionResult
from moto.core.utils import utcnow
from moto.moto_api._internal import mock_random as random

from sandbox import iam_propagation
from sandbox.core import graft, page_answer, state
from sandbox.services.eks_addons import in_use, invalid_parameter, not_found, request_params

URL_PATHS = {
    "{0}/clusters/(?P<name>[^/]+)/pod-identity-associations$": "dispatch",
    "{0}/clusters/(?P<name>[^/]+)/pod-identity-associations/(?P<associationId>[^/]+)$": "dispatch",
}
SUMMARY_KEYS = ("clusterName", "namespace", "serviceAccount", "associationArn", "associationId", "ownerArn")


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


def install() -> None:
    graft(moto.eks.models.EKSBackend, PodIdentityBackend)
    graft(moto.eks.responses.EKSResponse, PodIdentityResponse)
    for path in URL_PATHS:
        moto.eks.urls.url_paths[path] = moto.eks.urls.response.dispatch
