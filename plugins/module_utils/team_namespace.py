# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The team's guard rails inside its namespace ``hyperpod-ns-<team>``, through the cluster's Kubernetes API.

The namespace is Task Governance's (it makes it when the team's quota is Created): this layer adds to
it and does not take it over. Every write is server-side apply under the field manager
``hyperpod-tenancy``, so the namespace's other fields stay their owners'; ``--check`` and ``--diff``
come from the same apply with ``dryRun=All``, the server's own prediction (as kubernetes.core does).

What it adds, each object labelled ``app.kubernetes.io/managed-by: hyperpod.tenancy`` and refused
when an object of that name exists without that mark:

- Pod Security admission labels on the namespace: ``enforce`` at the team's level (``restricted`` by
  default, ``baseline`` where the platform allows it: ``hyperpod_team_limits.pod_security``, checked by
  team_model), ``warn`` and ``audit`` at ``restricted``
  (https://kubernetes.io/docs/concepts/security/pod-security-admission/). ``restricted`` is what keeps the
  members' 0700 homes on the team's volume from a teammate's root pod: root reads every file whatever its mode,
  and the restricted profile requires ``runAsNonRoot: true`` (and no uid 0, no privilege escalation, every
  capability dropped, a RuntimeDefault or Localhost seccomp profile), where ``baseline`` lets a pod run as root
  (https://kubernetes.io/docs/concepts/security/pod-security-standards/);
- a NetworkPolicy that admits ingress only from the namespace itself and from namespaces that are
  not team namespaces (the cluster's own: DNS, Kueue, Task Governance), and one that lets egress go
  anywhere but the instance metadata endpoint (169.254.169.254/32, fd00:ec2::254/128);
- the team's ServiceAccount;
- a ValidatingAdmissionPolicy ``<prefix>-<team>-no-token-secrets`` and its binding, both cluster-scoped and matching
  the team namespace only, that refuse a Secret of type ``kubernetes.io/service-account-token``: the Role lets
  members create Secrets (the HyperPod CLI submits a recipe's Secrets, an inference endpoint reads its Hugging Face
  token from one), and for such a Secret annotated ``kubernetes.io/service-account.name`` the token controller
  writes a token that never expires for that service account, the team's ServiceAccount included, whose pods hold
  the team's pod role (https://kubernetes.io/docs/concepts/configuration/secret/#serviceaccount-token-secrets,
  https://kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy/); once it is in effect, such
  Secrets stored before it (it refuses requests, not stored objects) are deleted, which invalidates their tokens
  (``remove_token_secrets``);
- the Role and RoleBinding of the HyperPod CLI's ``team-role-and-bindings`` chart for the group
  ``hyperpod-ns-<team>-namespace-level-group`` that the team's access entry carries, plus reading
  the team's PersistentVolumeClaims and LocalQueue, less the chart's ``patch`` on Kueue's Workloads and their status
  (a member could write its Workload's admission to another team's ClusterQueue);
- a static PersistentVolume for the team's FSx for Lustre directory (the FSx CSI driver's
  ``volumeHandle``/``dnsname``/``mountname``; the directory as a fileset mount
  ``<MountName>/<team>``, https://docs.aws.amazon.com/fsx/latest/LustreGuide/mounting-from-fileset.html),
  reserved for the team's claim by ``claimRef`` and ``Retain``ed, and that PersistentVolumeClaim;
- with ``pod_identity``, an IAM role ``<prefix>-<team>-pods`` that may use only the team's S3 prefix,
  trusted by ``pods.eks.amazonaws.com`` (``sts:AssumeRole``, ``sts:TagSession``) for that cluster and
  the team namespace only, and the EKS Pod Identity association of the team's ServiceAccount to it
  (https://docs.aws.amazon.com/eks/latest/userguide/pod-id-role.html). Both are found by the team's names and
  changed or deleted only when their tags carry the team's mark (``naming.ownership_problem``, as every layer's
  resources), or carry none and the team adopts ``pod_role`` (``adopt_pod_role``); checked before any write.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import time

try:
    from kubernetes import config as kube_config
    from kubernetes.client.exceptions import ApiException
    from kubernetes.config.config_exception import ConfigException

    HAS_KUBERNETES = True
except ImportError:
    HAS_KUBERNETES = False

from ansible_collections.hyperpod.tenancy.plugins.module_utils import eks as eks_api
from ansible_collections.hyperpod.tenancy.plugins.module_utils import engine, execution_role, fsx, naming
from ansible_collections.hyperpod.tenancy.plugins.module_utils import iam as iam_api
from ansible_collections.hyperpod.tenancy.plugins.module_utils.module_options import NAME_PREFIX, STATE, TEAM_TAGS, known_value, options, team_section
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import HyperPodError, InputError

FIELD_MANAGER = "hyperpod-tenancy"
MANAGED_BY = {"app.kubernetes.io/managed-by": "hyperpod.tenancy"}
TEAM_LABEL = "hyperpod.tenancy/team"
ALLOCATION_LABEL = "sagemaker.amazonaws.com/quota-allocation-id"
MANAGED_QUEUE_LABEL = "sagemaker.amazonaws.com/sagemaker-managed-queue"
# The label the API server sets on every namespace, its name (https://kubernetes.io/docs/reference/labels-annotations-taints/#kubernetes-io-metadata-name).
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
# The namespaces whose pods reach a team's: kube-system (the cluster's add-ons) and the HyperPod observability add-on's
# Prometheus scraper. hyperpod-observability is the namespace public tooling for the add-on reads; AWS's page on the add-on
# does not name it (an assumption: a platform sets ``ingress_namespaces`` where it differs).
INGRESS_NAMESPACES = ("kube-system", "hyperpod-observability")
POD_SECURITY_LEVELS = ("baseline", "restricted")
METADATA_ENDPOINTS = ("169.254.169.254/32", "fd00:ec2::254/128")
SERVER_FIELDS = ("managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "selfLink")

# Where each kind is served: kind -> (API prefix, plural, namespaced).
RESOURCES = {
    "Namespace": ("/api/v1", "namespaces", False),
    "ServiceAccount": ("/api/v1", "serviceaccounts", True),
    "PersistentVolume": ("/api/v1", "persistentvolumes", False),
    "PersistentVolumeClaim": ("/api/v1", "persistentvolumeclaims", True),
    "NetworkPolicy": ("/apis/networking.k8s.io/v1", "networkpolicies", True),
    "Role": ("/apis/rbac.authorization.k8s.io/v1", "roles", True),
    "RoleBinding": ("/apis/rbac.authorization.k8s.io/v1", "rolebindings", True),
    "ClusterRole": ("/apis/rbac.authorization.k8s.io/v1", "clusterroles", False),
    "ClusterRoleBinding": ("/apis/rbac.authorization.k8s.io/v1", "clusterrolebindings", False),
    "ValidatingAdmissionPolicy": ("/apis/admissionregistration.k8s.io/v1", "validatingadmissionpolicies", False),
    "ValidatingAdmissionPolicyBinding": ("/apis/admissionregistration.k8s.io/v1", "validatingadmissionpolicybindings", False),
    # Read only (capacity_report). An assumption: that the add-on's Kueue serves v1beta1 (the sandbox's CRDs,
    # sandbox/kube/kueue-crds.yaml, and the team Role's rules name it); a Kueue that stops serving it needs this changed.
    "ClusterQueue": ("/apis/kueue.x-k8s.io/v1beta1", "clusterqueues", False),
}
# The team's token policy and its binding, in the order they are applied (token_secret_policy).
TOKEN_POLICY_KINDS = ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
# Kueue's labels: the LocalQueue a workload is submitted to, and its WorkloadPriorityClass
# (https://kueue.sigs.k8s.io/docs/concepts/workload/#queue-name, https://kueue.sigs.k8s.io/docs/concepts/workload_priority_class/).
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
# A Job that names a Workload made beforehand runs on that Workload's admission, whoever's it is
# (https://kueue.sigs.k8s.io/docs/reference/labels-and-annotations/#kueuex-k8sioprebuilt-workload-name).
PREBUILT_WORKLOAD_LABEL = "kueue.x-k8s.io/prebuilt-workload-name"
# The scheduling gate Kueue's webhook puts on a pod it queues, and lifts once the pod is admitted
# (https://kueue.sigs.k8s.io/docs/tasks/run/plain_pods/).
ADMISSION_GATE = "kueue.x-k8s.io/admission"
# What the queue policy matches (test_team_namespace_members holds the Role and the HyperPod access policies to it, so that
# a Role or a policy widened later cannot open a way around the team's queue): the kinds a member submits, which Kueue
# queues by their own label, each with its pods' spec where ``_POD_SPECS`` finds it; and the other kinds that make pods,
# refused to members whatever they carry: the pods a CronJob's Jobs or a Deployment's ReplicaSet make do not carry the
# object's own label, and Kueue does not queue a DaemonSet at all.
QUEUED_RESOURCES = (
    # Kueue's Pod, batch/Job and Kubeflow integrations (https://kueue.sigs.k8s.io/docs/tasks/run/).
    ("", "pods"),
    ("batch", "jobs"),
    ("kubeflow.org", "pytorchjobs"),
    # The HyperPod training operator's HyperPodPyTorchJob (the access policy AmazonSagemakerHyperpodTrainingPolicy writes
    # it), an external framework of Kueue queued by the labels on the job's metadata: "When submitting a job, make sure
    # you include your queue name and priority class labels" (Installing the training operator, Task governance,
    # https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-eks-operator-install.html). hyp writes both labels there
    # and on the replicas' pod templates (hyperpod_pytorch_job_template, v1_1/template.py).
    ("sagemaker.amazonaws.com", "hyperpodpytorchjobs"),
    # HyperPod inference (AmazonSagemakerHyperpodInferencePolicy): "add the following labels to the metadata section of
    # your InferenceEndpointConfig or JumpStartModel CRD", the queue name and the priority class (Task governance for
    # model deployment on HyperPod, https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-model-deployment-task-gov.html).
    ("inference.sagemaker.aws.amazon.com", "inferenceendpointconfigs"),
    ("inference.sagemaker.aws.amazon.com", "jumpstartmodels"),
    # Spaces (AmazonSagemakerHyperpodSpacePolicy). AWS's page (Task governance for Interactive Spaces on HyperPod,
    # https://docs.aws.amazon.com/sagemaker/latest/dg/task-governance.html) says Kueue admits a space's pods under the
    # team's quota but names no label; that the labels go on the Workspace's metadata is an assumption from the code: hyp's
    # space template writes both there (hyperpod_space_template, v1_1/model.py), and the workspace operator copies every
    # label of a Workspace to its Deployment and that Deployment's pods (jupyter-infra/jupyter-k8s,
    # internal/controller/deployment_builder.go), which Kueue's pod integration then queues.
    ("workspace.jupyter.org", "workspaces"),
)
REFUSED_RESOURCES = (
    ("batch", "cronjobs", "CronJob"),
    ("apps", "deployments", "Deployment"),
    ("apps", "statefulsets", "StatefulSet"),
    ("apps", "replicasets", "ReplicaSet"),
    ("apps", "daemonsets", "DaemonSet"),
    ("", "replicationcontrollers", "ReplicationController"),
)
# The end of the token policy's name (names: token_policy), by which the apply loop knows it.
TOKEN_POLICY_SUFFIX = "-no-token-secrets"
# The Secret type whose Secrets the token controller fills with a service account's long-lived token.
TOKEN_SECRET_TYPE = "kubernetes.io/service-account-token"

# The HyperPod CLI's team-role-and-bindings chart (helm_chart/HyperPodHelmChart/charts/team-role-and-bindings/
# templates/team-level-namespaced-role.yaml), and reading the team's volume claims, which the chart leaves out.
# Its ``secrets: create`` stays: the CLI creates the Secrets of a recipe's template (src/sagemaker/hyperpod/cli/
# recipe_utils.py, _submit_k8s_resources) and its inference endpoints read a Hugging Face token from a Secret of the
# namespace (tokenSecretRef); the token Secret it would also allow is refused by the team's admission policy
# (``token_secret_policy``).
TEAM_ROLE_RULES = [
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "describe"]},
    {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["create", "get", "watch", "list"]},
    {"apiGroups": [""], "resources": ["nodes", "nodes/status", "pods/status"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get", "list"]},
    # The chart's writes on ``pytorchjobs/status`` go (issue 38): a member marking a running job Succeeded has Kueue
    # release its quota while its pods run; the training operator writes the status, the CLI reads it.
    {"apiGroups": ["kubeflow.org"], "resources": ["pytorchjobs"], "verbs": ["get", "list", "watch", "create", "delete", "update"]},
    {"apiGroups": ["kubeflow.org"], "resources": ["pytorchjobs/status"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["get", "list"]},
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create", "update", "get", "delete"]},
    {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create", "get", "list", "delete"]},
    {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["list", "get"]},
    # Read only (issue 38): the chart's ``patch`` on ``workloads`` and ``workloads/status`` let a member write its own
    # Workload's ``status.admission`` (another team's ClusterQueue) and its ``spec.queueName``; Kueue's own role for batch
    # users, ``kueue-batch-user-role``, manages Jobs and only views queues and Workloads (Kueue's "Setup RBAC" page,
    # https://kueue.sigs.k8s.io/docs/tasks/manage/rbac/).
    # The team's LocalQueue is read too, for its pending and admitted counts.
    {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads", "localqueues"], "verbs": ["get", "list", "watch"]},
    # The team's pending workloads in its queue, in order, from Kueue's visibility API
    # (https://kueue.sigs.k8s.io/docs/tasks/manage/monitor_pending_workloads/pending_workloads_on_demand/).
    {"apiGroups": ["visibility.kueue.x-k8s.io"], "resources": ["localqueues/pendingworkloads"], "verbs": ["get"]},
    {"apiGroups": [""], "resources": ["persistentvolumeclaims"], "verbs": ["get", "list", "watch"]},
]


def names(team, prefix=naming.DEFAULT_PREFIX):
    namespace = naming.namespace(team)
    return {
        "namespace": namespace,
        "service_account": naming.service_account(team, prefix),
        "role": "%s-namespace-role" % namespace,
        "role_binding": "%s-namespace-role-binding" % namespace,
        "group": naming.kubernetes_group(team),
        "volume": naming.team_volume(team, prefix),
        "ingress_policy": "%s-team-ingress" % prefix,
        "egress_policy": "%s-team-egress" % prefix,
        "token_policy": "%s-%s%s" % (prefix, team, TOKEN_POLICY_SUFFIX),
        "queue_policy": "%s-%s-workloads-in-queue" % (prefix, team),
        "queue_reader": "%s-%s-cluster-queue-reader" % (prefix, team),
        "cluster_queue": "%s-clusterqueue" % namespace,
        "local_queue": "%s-localqueue" % namespace,
    }


def _labels(team):
    return dict(MANAGED_BY, **{TEAM_LABEL: team})


def _object(kind, name, namespace, team, **body):
    api_version = RESOURCES[kind][0].split("/", 2)[-1] if RESOURCES[kind][0].startswith("/apis/") else "v1"
    metadata = {"name": name, "labels": _labels(team)}
    if namespace:
        metadata["namespace"] = namespace
    return dict({"apiVersion": api_version, "kind": kind, "metadata": metadata}, **body)


def namespace_labels(pod_security):
    """The Pod Security admission labels: enforce at the team's level, warn and audit at restricted."""
    labels = {"pod-security.kubernetes.io/enforce": pod_security, "pod-security.kubernetes.io/enforce-version": "latest"}
    for mode in ("warn", "audit"):
        labels["pod-security.kubernetes.io/%s" % mode] = "restricted"
        labels["pod-security.kubernetes.io/%s-version" % mode] = "latest"
    return labels


def token_secret_policy(team, prefix):
    """The ValidatingAdmissionPolicy and its binding that refuse, in the team namespace only, a Secret of type
    ``kubernetes.io/service-account-token`` (created, or updated: the type is immutable, the check costs nothing).

    Everyone's request is refused, the platform's too: nothing needs such a Secret in a team namespace since
    Kubernetes 1.24 (pods get short-lived projected tokens). ``admissionregistration.k8s.io/v1``: Kubernetes 1.30+.
    """
    n = names(team, prefix)
    message = (
        "team %s: a Secret of type %s in %s would hold a token of a service account that never expires; "
        "pods get short-lived tokens of the team's service account (serviceAccountName)" % (team, TOKEN_SECRET_TYPE, n["namespace"])
    )
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["secrets"]}]
    validations = [{"expression": "!has(object.type) || object.type != '%s'" % TOKEN_SECRET_TYPE, "message": message}]
    return _admission_policy(team, prefix, n["token_policy"], rules, validations)


def _admission_policy(team, prefix, name, rules, validations, **spec):
    """A ValidatingAdmissionPolicy ``name`` matching ``rules`` in the team namespace only, refusing what fails one of
    ``validations`` (Forbidden), and its binding; both cluster-scoped, both the team's."""
    match = {"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: names(team, prefix)["namespace"]}}}
    spec = dict(spec, failurePolicy="Fail", matchConstraints=dict(match, resourceRules=rules),
                validations=[dict(validation, reason="Forbidden") for validation in validations])
    policy = _object("ValidatingAdmissionPolicy", name, None, team, spec=spec)
    binding = _object(
        "ValidatingAdmissionPolicyBinding", name, None, team,
        spec={"policyName": name, "validationActions": ["Deny"], "matchResources": copy.deepcopy(match)},
    )  # fmt: skip
    return [policy, binding]


def _cel_list(values):
    return "[%s]" % ", ".join("'%s'" % value for value in values)


# The pod specs an object of a QUEUED_RESOURCES kind makes pods from (a Job's template, each replica's of a PyTorchJob or
# a HyperPodPyTorchJob). Inference objects and Workspaces hold no pod template: their operators build the pods.
_POD_SPECS = (
    "object.kind == 'Pod' ? [object.spec] : "
    "object.kind == 'PyTorchJob' ? (has(object.spec.pytorchReplicaSpecs) ? "
    "object.spec.pytorchReplicaSpecs.map(r, object.spec.pytorchReplicaSpecs[r].template.spec) : []) : "
    "object.kind == 'HyperPodPyTorchJob' ? (has(object.spec.replicaSpecs) ? "
    "object.spec.replicaSpecs.filter(r, has(r.template) && has(r.template.spec)).map(r, r.template.spec) : []) : "
    "object.kind == 'Job' && has(object.spec.template) ? [object.spec.template.spec] : []"
)


def queue_policy(team, prefix, priority_classes):
    """The ValidatingAdmissionPolicy and its binding that keep a member's workloads in the team's queue (issue 38).

    A member's request (the team's Kubernetes group, or a service account of the team namespace, which a member's pod
    runs as) to create or update a workload in the team namespace is refused when it is of a kind whose pods Kueue would
    not queue by its label (``REFUSED_RESOURCES``), and for a Pod, Job or PyTorchJob, or one of HyperPod's kinds the
    access policies let a member write (a HyperPodPyTorchJob, an InferenceEndpointConfig or JumpStartModel, a Workspace:
    ``QUEUED_RESOURCES``, issue 40) unless:

    - it carries Kueue's ``kueue.x-k8s.io/queue-name`` label naming the team's LocalQueue (Task Governance's
      ``hyperpod-ns-<team>-localqueue``): without it Kueue does not manage the workload and kube-scheduler places its
      pods beside every team's quota; with another team's, it would be counted against that team's;
    - its ``kueue.x-k8s.io/priority-class``, when given, is one of the platform's Task Governance priority classes
      (``priority_classes``, the cluster file's ``scheduler.priority_classes``, each a WorkloadPriorityClass);
    - no pod it makes names a PriorityClass (``priorityClassName``) outside those names: kube-scheduler preempts pods of
      lower priority of every team for one of ``system-node-critical``, which Pod Security does not restrict;
    - no pod it makes (a HyperPodPyTorchJob's replicas' templates among them) names its node (``nodeName``), which
      passes by the scheduler and Kueue's scheduling gate both, and a PyTorchJob's gang-scheduling priority
      (``runPolicy.schedulingPolicy.priorityClass``) is one of those names;
    - it names no owner (``ownerReferences``): Kueue leaves alone a pod or job whose controller is of a kind it manages,
      trusting that owner's admission (the member's own suspended Job would do), and no Workload made beforehand;
    - a Job or PyTorchJob is suspended, as Kueue's webhook makes it, on creation and after every update of a member:
      Kueue alone starts it, once admitted, and a member who changes a running one (more replicas) suspends it again
      for Kueue to admit anew; a Pod carries Kueue's scheduling gate, which Kueue alone lifts. Where Kueue does not
      manage the kind in the namespace, its webhook adds neither and the workload is refused, never run unqueued.
      HyperPod's kinds are not held to a suspended state: Kueue runs no webhook for an external framework (the training
      operator's HyperPodPyTorchJob) and hyp submits the job unsuspended; that the training operator, the inference
      operator and the workspace operator's pods wait for Kueue's admission of a labelled object is Task Governance's
      (an assumption the sandbox, which runs none of them, cannot show: docs/isolation.md).

    Only the members' requests: the controllers that make pods from a member's workload (the Job controller, Kueue, the
    training operator) act on what this policy admitted. A queue label cannot be set by default on Kubernetes 1.35, where
    MutatingAdmissionPolicy is beta and off (https://kubernetes.io/docs/reference/access-authn-authz/mutating-admission-policy/,
    GA in 1.36): a workload without one is refused, the message naming the label to add.
    """
    n = names(team, prefix)
    allowed = _cel_list(priority_classes)
    labels = "(has(object.metadata.labels) ? object.metadata.labels : {})"
    classes = ", ".join(priority_classes) or "none"
    member = "has(request.userInfo.groups) && request.userInfo.groups.exists(g, g == '%s' || g == 'system:serviceaccounts:%s')" % (
        n["group"], n["namespace"])
    refused = [kind for unused_group, unused_resource, kind in REFUSED_RESOURCES]
    validations = [
        {
            "expression": "!(object.kind in %s)" % _cel_list(refused),
            "message": "team %s: members submit Pods, Jobs, PyTorchJobs and HyperPod's jobs, inference endpoints and spaces, which Kueue "
            "queues by their label; not a %s" % (team, ", ".join(refused)),
        },
        {
            "expression": "'%s' in %s && %s['%s'] == '%s'" % (QUEUE_LABEL, labels, labels, QUEUE_LABEL, n["local_queue"]),
            "message": "team %s: a workload in %s goes to the team's queue: label it %s: %s" % (team, n["namespace"], QUEUE_LABEL, n["local_queue"]),
        },
        {
            "expression": "!('%s' in %s) || %s['%s'] in %s" % (PRIORITY_LABEL, labels, labels, PRIORITY_LABEL, allowed),
            "message": "team %s: label %s names one of the platform's priority classes (%s)" % (team, PRIORITY_LABEL, classes),
        },
        {
            "expression": "variables.podSpecs.all(s, !has(s.priorityClassName) || s.priorityClassName == '' || s.priorityClassName in %s)" % allowed,
            "message": "team %s: a pod's priorityClassName is empty or one of the platform's priority classes (%s); "
            "the queue's priority is label %s" % (team, classes, PRIORITY_LABEL),
        },
        {
            "expression": "object.kind != 'PyTorchJob' || !has(object.spec.runPolicy) || !has(object.spec.runPolicy.schedulingPolicy) || "
            "!has(object.spec.runPolicy.schedulingPolicy.priorityClass) || object.spec.runPolicy.schedulingPolicy.priorityClass in %s" % allowed,
            "message": "team %s: a PyTorchJob's runPolicy.schedulingPolicy.priorityClass is one of the platform's priority classes (%s)"
            % (team, classes),
        },
        {
            "expression": "variables.podSpecs.all(s, !has(s.nodeName) || s.nodeName == '')",
            "message": "team %s: a pod does not name its node (nodeName): the scheduler and the team's queue place it" % team,
        },
        {
            "expression": "(!has(object.metadata.ownerReferences) || size(object.metadata.ownerReferences) == 0) && !('%s' in %s)"
            % (PREBUILT_WORKLOAD_LABEL, labels),
            "message": "team %s: a member's workload names no owner (ownerReferences) and no prebuilt Workload (label %s): "
            "Kueue queues it on its own" % (team, PREBUILT_WORKLOAD_LABEL),
        },
        {
            "expression": "object.kind != 'Job' || (has(object.spec.suspend) && object.spec.suspend)",
            "message": "team %s: a Job stays suspended (spec.suspend), as Kueue makes it: Kueue starts it once the team's "
            "queue admits it" % team,
        },
        {
            "expression": "object.kind != 'PyTorchJob' || (has(object.spec.runPolicy) && has(object.spec.runPolicy.suspend) && "
            "object.spec.runPolicy.suspend)",
            "message": "team %s: a PyTorchJob stays suspended (spec.runPolicy.suspend), as Kueue makes it: Kueue starts it once "
            "the team's queue admits it" % team,
        },
        {
            "expression": "object.kind != 'Pod' || (has(object.spec.schedulingGates) && object.spec.schedulingGates.exists(g, g.name == '%s'))"
            % ADMISSION_GATE,
            "message": "team %s: a Pod carries Kueue's scheduling gate %s, as Kueue's webhook makes it: Kueue lifts it once the "
            "team's queue admits the pod" % (team, ADMISSION_GATE),
        },
    ]
    rules = [
        {"apiGroups": [group], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": [resource]}
        for group, resource in QUEUED_RESOURCES + tuple(kind[:2] for kind in REFUSED_RESOURCES)
    ]
    return _admission_policy(
        team, prefix, n["queue_policy"], rules, validations,
        matchConditions=[{"name": "a-member-of-the-team", "expression": member}],
        variables=[{"name": "podSpecs", "expression": _POD_SPECS}],
    )  # fmt: skip


def desired(team, prefix, pod_security, volume=None, priority_classes=(), ingress_namespaces=()):
    """The team's objects, in the order they are applied (the namespace's labels first)."""
    n = names(team, prefix)
    namespace = n["namespace"]
    objects = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": namespace_labels(pod_security)}},
        _object(
            "NetworkPolicy", n["ingress_policy"], namespace, team,
            spec={
                "podSelector": {},
                "policyTypes": ["Ingress"],
                # From the namespace's own pods, and from the platform's namespaces named one by one: a namespace
                # anyone makes (default, Studio's shared one) is not one of them (issue 38).
                "ingress": [{"from": [{"podSelector": {}}] + ([
                    {"namespaceSelector": {"matchExpressions": [{"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": sorted(ingress_namespaces)}]}},
                ] if ingress_namespaces else [])}],
            },
        ),
        _object(
            "NetworkPolicy", n["egress_policy"], namespace, team,
            spec={
                "podSelector": {},
                "policyTypes": ["Egress"],
                # Anywhere (DNS, Kueue, Task Governance, the cluster's pods, S3) but the instance metadata endpoint.
                "egress": [{"to": [
                    {"namespaceSelector": {}},
                    {"ipBlock": {"cidr": "0.0.0.0/0", "except": [METADATA_ENDPOINTS[0]]}},
                    {"ipBlock": {"cidr": "::/0", "except": [METADATA_ENDPOINTS[1]]}},
                ]}],
            },
        ),
        _object("ServiceAccount", n["service_account"], namespace, team),
    ] + token_secret_policy(team, prefix) + queue_policy(team, prefix, priority_classes) + [  # before the Role
        _object("Role", n["role"], namespace, team, rules=copy.deepcopy(TEAM_ROLE_RULES)),
        _object(
            "RoleBinding", n["role_binding"], namespace, team,
            subjects=[{"kind": "Group", "name": n["group"], "apiGroup": "rbac.authorization.k8s.io"}],
            roleRef={"kind": "Role", "name": n["role"], "apiGroup": "rbac.authorization.k8s.io"},
        ),
        # The team's own ClusterQueue (its quota, usage, borrowing, pending count), read by name: no other team's, no list.
        _object(
            "ClusterRole", n["queue_reader"], None, team,
            rules=[{"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues"], "resourceNames": [n["cluster_queue"]], "verbs": ["get", "watch"]}],
        ),
        _object(
            "ClusterRoleBinding", n["queue_reader"], None, team,
            subjects=[{"kind": "Group", "name": n["group"], "apiGroup": "rbac.authorization.k8s.io"}],
            roleRef={"kind": "ClusterRole", "name": n["queue_reader"], "apiGroup": "rbac.authorization.k8s.io"},
        ),
    ]  # fmt: skip
    if volume:
        storage = "%dGi" % volume["capacity_gib"]
        objects.append(_object(
            "PersistentVolume", n["volume"], None, team,
            spec={
                "capacity": {"storage": storage},
                "volumeMode": "Filesystem",
                "accessModes": ["ReadWriteMany"],
                "mountOptions": ["flock"],
                # The data is the team's directory's, and follows storage.on_remove: never the volume's deletion.
                "persistentVolumeReclaimPolicy": "Retain",
                "storageClassName": "",
                # Only the team's claim can bind it.
                "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": namespace, "name": n["volume"]},
                "csi": {
                    "driver": "fsx.csi.aws.com",
                    "volumeHandle": "%s::%s" % (volume["file_system_id"], team),
                    "volumeAttributes": {"dnsname": volume["dns_name"], "mountname": "%s/%s" % (volume["mount_name"], volume["directory"])},
                },
            },
        ))  # fmt: skip
        objects.append(_object(
            "PersistentVolumeClaim", n["volume"], namespace, team,
            spec={"accessModes": ["ReadWriteMany"], "storageClassName": "", "volumeName": n["volume"], "resources": {"requests": {"storage": storage}}},
        ))  # fmt: skip
    return objects


def _key(obj):
    meta = obj["metadata"]
    return "%s/%s" % (obj["kind"], "%s/%s" % (meta["namespace"], meta["name"]) if meta.get("namespace") else meta["name"])


def normalized(obj):
    """The object without what the server manages (versions, timestamps, field ownership, status)."""
    if obj is None:
        return None
    result = {k: copy.deepcopy(v) for k, v in obj.items() if k != "status"}
    result["metadata"] = {k: v for k, v in result.get("metadata", {}).items() if k not in SERVER_FIELDS}
    return result


class KubernetesError(HyperPodError):
    pass


class Cluster(object):
    """The cluster's API, reached with a kubeconfig (a path or its content) as kubernetes.core reaches it."""

    def __init__(self, kubeconfig, context=None):
        if not HAS_KUBERNETES:
            raise KubernetesError(message="the kubernetes Python library is required (pip install kubernetes)")
        try:
            if isinstance(kubeconfig, dict):
                self.client = kube_config.new_client_from_config_dict(kubeconfig, context=context)
            else:
                self.client = kube_config.new_client_from_config(config_file=kubeconfig, context=context)
        except (ConfigException, OSError, ValueError) as e:
            raise KubernetesError(message="cannot load the kubeconfig: %s" % e)

    @staticmethod
    def path(kind, name=None, namespace=None):
        prefix, plural, namespaced = RESOURCES[kind]
        path = "%s/namespaces/%s/%s" % (prefix, namespace, plural) if namespaced else "%s/%s" % (prefix, plural)
        return "%s/%s" % (path, name) if name else path

    def request(self, method, path, body=None, query=None, content_type="application/json"):
        try:
            data = self.client.call_api(
                path, method, query_params=list((query or {}).items()),
                header_params={"Content-Type": content_type, "Accept": "application/json"},
                body=body, auth_settings=["BearerToken"], response_type="object", _return_http_data_only=True,
            )  # fmt: skip
        except ApiException as e:
            if e.status == 404 and method == "GET":
                return None
            try:
                message = json.loads(e.body).get("message") or e.reason
            except (TypeError, ValueError):
                message = e.reason
            error = KubernetesError(message="%s %s: %s (HTTP %s)" % (method, path, message, e.status))
            error.status = e.status
            raise error
        except Exception as e:  # urllib3's connection errors and the like: say where it failed
            raise KubernetesError(message="%s %s: %s" % (method, path, e))
        return data

    def get(self, obj):
        meta = obj["metadata"]
        return self.request("GET", self.path(obj["kind"], meta["name"], meta.get("namespace")))

    def apply(self, obj, dry_run):
        meta = obj["metadata"]
        query = {"fieldManager": FIELD_MANAGER, "force": "true"}
        if dry_run:
            query["dryRun"] = "All"
        return self.request("PATCH", self.path(obj["kind"], meta["name"], meta.get("namespace")), obj, query, "application/apply-patch+yaml")

    def wait_gone(self, objects):
        _wait_gone(self, objects)

    def delete(self, obj, dry_run):
        meta = obj["metadata"]
        # The API server reads a DELETE's options from its body when it has one, and then ignores the query string.
        options = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}
        if dry_run:
            options["dryRun"] = ["All"]
        return self.request("DELETE", self.path(obj["kind"], meta["name"], meta.get("namespace")), options)


def wait_token_policy(cluster, team, timeout=60):
    """Wait until the team's token policy refuses a token Secret in the team namespace (a dry-run create, nothing made).

    The API server enforces a new ValidatingAdmissionPolicy once its informer has it, a moment after the write (about
    0.4 s on the sandbox's kube-apiserver): the run returns only once a member's token Secret is refused.
    """
    namespace = naming.namespace(team)
    probe = {
        "apiVersion": "v1", "kind": "Secret", "type": TOKEN_SECRET_TYPE,
        "metadata": {"name": "hyperpod-tenancy-probe", "namespace": namespace, "annotations": {"kubernetes.io/service-account.name": "default"}},
    }  # fmt: skip
    deadline = time.time() + timeout
    while True:
        try:
            cluster.request("POST", "/api/v1/namespaces/%s/secrets" % namespace, probe, {"dryRun": "All"})
        except KubernetesError as e:
            if getattr(e, "status", None) == 403:
                return
            raise
        if time.time() > deadline:
            raise KubernetesError(
                message="team %r: the API server still admits a Secret of type %s in %s %d s after its admission policy "
                "was written (ValidatingAdmissionPolicy needs Kubernetes 1.30 or later)" % (team, TOKEN_SECRET_TYPE, namespace, timeout)
            )
        time.sleep(0.2)


def remove_token_secrets(cluster, team, check_mode):
    """Delete the team namespace's Secrets of type ``kubernetes.io/service-account-token``; ``[(key, Secret)]``.

    Admission acts on requests, never on stored objects
    (https://kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy/): a token Secret made before
    the team's policy was in effect (the Role has let members create Secrets all along) keeps a token of its service
    account that never expires, until the Secret is deleted, which invalidates the token
    (https://kubernetes.io/docs/concepts/configuration/secret/#serviceaccount-token-secrets). Listed by the field
    selector ``type``, which Secrets support
    (https://kubernetes.io/docs/concepts/overview/working-with-objects/field-selectors/); in check mode only listed,
    reported as the deletion the run would make. The Secret's data is left out of what is reported (it is the token).
    """
    namespace = naming.namespace(team)
    path = "/api/v1/namespaces/%s/secrets" % namespace
    listed = cluster.request("GET", path, query={"fieldSelector": "type=%s" % TOKEN_SECRET_TYPE}) or {}
    removed = []
    for secret in listed.get("items") or []:
        meta = secret.get("metadata") or {}
        if secret.get("type") != TOKEN_SECRET_TYPE:  # a server that ignored the selector
            continue
        shown = normalized(dict(secret, apiVersion="v1", kind="Secret", metadata=dict(meta, namespace=namespace)))
        for field in ("data", "stringData"):
            if field in shown:
                shown[field] = {name: "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER" for name in shown[field]}
        if not check_mode:
            # The one listed, not another made under its name since (its uid).
            options = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}
            if meta.get("uid"):
                options["preconditions"] = {"uid": meta["uid"]}
            try:
                cluster.request("DELETE", "%s/%s" % (path, meta["name"]), options)
            except KubernetesError as e:
                if getattr(e, "status", None) != 404:  # deleted by someone else meanwhile: gone all the same
                    raise KubernetesError(message="team %r: cannot delete the token Secret %s/%s: %s" % (team, namespace, meta["name"], e.message))
        removed.append((_key(shown), shown))
    return removed


def _wait_gone(cluster, objects, timeout=120):
    deadline = time.time() + timeout
    for obj in objects:
        while cluster.get(obj) is not None:
            if time.time() > deadline:
                raise KubernetesError(message="%s is still being deleted after %d s" % (_key(obj), timeout))
            time.sleep(0.2)


def _refuse_foreign(team, current, obj):
    if current is None or obj["kind"] == "Namespace":
        return
    labels = current["metadata"].get("labels") or {}
    if labels.get("app.kubernetes.io/managed-by") != MANAGED_BY["app.kubernetes.io/managed-by"] or labels.get(TEAM_LABEL) != team:
        raise InputError(
            message="team %r: %s exists and was not made by hyperpod.tenancy for this team (labels %s=%s, %s=%s); "
            "remove or relabel it first" % (team, _key(obj), "app.kubernetes.io/managed-by", MANAGED_BY["app.kubernetes.io/managed-by"], TEAM_LABEL, team)
        )


def _check_namespace(team, namespace):
    labels = (namespace or {}).get("metadata", {}).get("labels") or {}
    if labels.get(ALLOCATION_LABEL) != team:
        raise InputError(
            message="team %r: namespace %s is not Task Governance's namespace for this team (label %s is %r); "
            "the team's compute quota makes it" % (team, naming.namespace(team), ALLOCATION_LABEL, labels.get(ALLOCATION_LABEL))
        )


# A dry run is compared with a read of the same version of the object: another writer may change it between
# the two (the PersistentVolume controller binds the team's claim, annotating it and completing the volume's claimRef,
# when it gets to it, which can be up to its resync period after the claim was made: during the next run). A dry run
# answers with the resourceVersion it was computed from (none for an object it would create).
VERSION_READS = 3


def _version(obj):
    return (obj or {}).get("metadata", {}).get("resourceVersion")


def _read_with_prediction(cluster, team, obj, current):
    """``(current, the dry run of obj)``, both of one version of the object, read again while another writer moves it.

    After ``VERSION_READS`` reads of an object that keeps changing, the last pair is what the run compares.
    """
    predicted, reads = cluster.apply(obj, dry_run=True), 0
    while _version(predicted) != _version(current) and reads < VERSION_READS:
        reads += 1
        current = cluster.get(obj)
        if obj["kind"] == "Namespace":
            _check_namespace(team, current)
        _refuse_foreign(team, current, obj)
        predicted = cluster.apply(obj, dry_run=True)
    return current, predicted


def token_policy(obj):
    """Whether ``obj`` is the token policy or its binding (not the queue policy's, of the same kinds)."""
    return obj["kind"] in TOKEN_POLICY_KINDS and obj["metadata"]["name"].endswith(TOKEN_POLICY_SUFFIX)


def ensure_present(cluster, team, objects, check_mode):
    """Apply each object; returns (changed, before, after) keyed by object, from dry-run predictions in check mode."""
    namespace = cluster.get(objects[0])
    before, after = {}, {}
    if namespace is None and check_mode:
        # The quota that makes the namespace is itself only predicted: so is everything in it.
        for obj in objects:
            before[_key(obj)] = None
            after[_key(obj)] = normalized(obj)
        return True, before, after
    if namespace is None:
        raise InputError(message="team %r: namespace %s does not exist; the team's compute quota makes it" % (team, naming.namespace(team)))
    _check_namespace(team, namespace)
    current = {}
    for obj in objects:
        current[_key(obj)] = namespace if obj["kind"] == "Namespace" else cluster.get(obj)
        _refuse_foreign(team, current[_key(obj)], obj)
    changed = policy_written = False
    for obj in objects:
        key = _key(obj)
        current[key], predicted = _read_with_prediction(cluster, team, obj, current[key])
        predicted = normalized(predicted)
        before[key], after[key] = normalized(current[key]), predicted
        if predicted != before[key]:
            changed = True
            if not check_mode:
                after[key] = normalized(cluster.apply(obj, dry_run=False))
                policy_written = policy_written or token_policy(obj)
        if token_policy(obj) and obj["kind"] == TOKEN_POLICY_KINDS[-1]:
            if policy_written:
                # In effect before the Role that follows lets members create Secrets.
                wait_token_policy(cluster, team)
                policy_written = False
            # The policy refuses new token Secrets, not those stored before it was in effect: they go now.
            for key, secret in remove_token_secrets(cluster, team, check_mode):
                before[key], after[key] = secret, None
                changed = True
    return changed, before, after


def ensure_absent(cluster, team, objects, check_mode):
    """Delete what the layer made (in reverse order) and take its labels off the namespace."""
    before, after = {}, {}
    changed = False
    deleted = []
    for obj in reversed(objects[1:]):
        key = _key(obj)
        current = cluster.get(obj)
        before[key], after[key] = normalized(current), None
        if current is None:
            continue
        _refuse_foreign(team, current, obj)
        changed = True
        cluster.delete(obj, dry_run=check_mode)
        deleted.append(obj)
    if not check_mode:
        # A claim and its volume go once their protection finalizers are lifted: wait, so that what runs next
        # (the quota's removal, a new onboarding) finds them gone rather than terminating.
        cluster.wait_gone([o for o in deleted if o["kind"] in ("PersistentVolumeClaim", "PersistentVolume")])
    namespace = cluster.get(objects[0])
    key = _key(objects[0])
    if namespace is not None:
        ours = objects[0]["metadata"]["labels"]
        labels = namespace["metadata"].get("labels") or {}
        if any(label in labels for label in ours):
            # An apply that names no label gives up the labels this manager applied (server-side apply's ownership).
            bare = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": objects[0]["metadata"]["name"]}}
            before[key], after[key] = normalized(namespace), normalized(cluster.apply(bare, dry_run=check_mode))
            changed = changed or before[key] != after[key]
    return changed, before, after


def summary(team, prefix, objects, after, priority_classes=()):
    n = names(team, prefix)
    namespace = after.get(_key(objects[0])) or {}
    labels = namespace.get("metadata", {}).get("labels") or {}
    return {
        "namespace": n["namespace"],
        "pod_security": labels.get("pod-security.kubernetes.io/enforce"),
        "service_account": n["service_account"],
        "role": n["role"],
        "group": n["group"],
        "volume": n["volume"] if any(o["kind"] == "PersistentVolume" for o in objects) else None,
        # What a member's workload is labelled with (the queue policy: queue_policy).
        "queue": n["local_queue"],
        "priority_classes": list(priority_classes),
        "objects": sorted(key for key, value in after.items() if value is not None),
    }


# --- EKS Pod Identity: the role the team's service account runs as ------------------------


def pod_role_name(team, prefix):
    return "%s-%s-pods" % (prefix, team)


def pod_trust_policy(account_id, cluster_arn, namespace):
    """EKS Pod Identity's trust (pods.eks.amazonaws.com: sts:AssumeRole and sts:TagSession), for one cluster and namespace.

    EKS Auth tags the session with ``kubernetes-namespace`` (and the cluster, service account and pod), so the
    request tag limits the role to pods of the team namespace; the source ARN and account to the cluster.
    """
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "AllowEksAuthToAssumeRoleForPodIdentity",
                "Effect": "Allow",
                "Principal": {"Service": "pods.eks.amazonaws.com"},
                "Action": ["sts:AssumeRole", "sts:TagSession"],
                "Condition": {
                    "StringEquals": {"aws:SourceAccount": account_id, "aws:RequestTag/kubernetes-namespace": namespace},
                    "ArnEquals": {"aws:SourceArn": cluster_arn},
                },
            }
        ],
    }


def _association_view(association):
    if not association:
        return {}
    keys = {
        "cluster_name": "clusterName", "namespace": "namespace", "service_account": "serviceAccount",
        "role_arn": "roleArn", "association_id": "associationId", "association_arn": "associationArn",
    }  # fmt: skip
    view = {key: association.get(camel) for key, camel in keys.items()}
    view["tags"] = dict(association.get("tags") or {})
    return view


def _current_association(eks, cluster_name, namespace, service_account):
    found = eks_api.list_pod_identity_associations(eks, clusterName=cluster_name, namespace=namespace, serviceAccount=service_account) or []
    return eks_api.describe_pod_identity_association(eks, clusterName=cluster_name, associationId=found[0]["associationId"]) if found else None


def read_known_pod_identity(iam, eks, team, prefix, cluster_name):
    """What shared_info hands the namespace layer as ``known.pod_identity``: the pod role's GetRole answer and the
    service account's association as described, each None when missing (two or three reads)."""
    n = names(team, prefix)
    role = iam_api.get_role(iam, RoleName=pod_role_name(team, prefix))
    return dict(execution_role.known_role(role), association=_current_association(eks, cluster_name, n["namespace"], n["service_account"]))


def pod_identity_problems(team, prefix, cluster_name, role, association, tag_keys=None, adopt=False):
    """One sentence for the pod role (``execution_role.view``) and one for the association that are not the team's.

    The rule is every layer's, ``naming.ownership_problem``: the role and the association (by their tags) must carry
    the team's mark, or carry none and be adopted (``pod_role``); one marked for another team never is. Offboarding
    passes no ``adopt``: what the collection did not make is not deleted.
    """
    n = names(team, prefix)
    problems = []
    if role:
        problems.append(naming.ownership_problem("IAM role %s" % role["arn"], team, role["tags"], tag_keys, adopt, "pod_role"))
    if association is not None:
        what = "Pod Identity association %s of service account %s/%s on cluster %s (role %s)" % (
            association["associationId"], n["namespace"], n["service_account"], cluster_name, association.get("roleArn"),
        )  # fmt: skip
        problems.append(naming.ownership_problem(what, team, association.get("tags"), tag_keys, adopt, "pod_role"))
    return [problem for problem in problems if problem]


def read_pod_identity(context, team, prefix, pod_identity, tag_keys=None, adopt=False, known=None):
    """The team's pod role (``execution_role.view``, {} when missing) and its service account's association (None when
    missing), read before any write; refused with an ``InputError`` naming each that is not the team's
    (``pod_identity_problems``). ``known`` is ``read_known_pod_identity``'s answer, read earlier in the run: its
    GetRole and association are not read again."""
    n = names(team, prefix)
    cluster_name = pod_identity["cluster_name"]
    if known is None:
        association, known_role = _current_association(context.client("eks"), cluster_name, n["namespace"], n["service_account"]), None
    else:
        association, known_role = known.get("association"), {"role": known.get("role")}
    role = execution_role.view(execution_role.read(context.client("iam"), pod_role_name(team, prefix), known_role))
    problems = pod_identity_problems(team, prefix, cluster_name, role, association, tag_keys, adopt)
    if problems:
        raise InputError(message="; ".join(problems))
    return role, association


def ensure_pod_identity(context, team, prefix, pod_identity, tags, state, found, check_mode=None):
    """The team's pod role and its association: (changed, before, after). ``found`` is what ``read_pod_identity`` read
    (and checked): nothing is read again. ``check_mode`` defaults to the run's."""
    check_mode = context.check_mode if check_mode is None else check_mode
    iam, eks = context.client("iam"), context.client("eks")
    n = names(team, prefix)
    cluster_name = pod_identity["cluster_name"]
    role_before, current = found
    before = {"association": _association_view(current)}
    if state == "absent":
        changed = False
        if current is not None:
            changed = True
            if not check_mode:
                eks_api.delete_pod_identity_association(eks, clusterName=cluster_name, associationId=current["associationId"])
        role_changed, before["role"], after_role = engine.ensure_absent(
            execution_role.ExecutionRole(iam, pod_role_name(team, prefix), check_mode, before=role_before), check_mode
        )[:3]
        return changed or role_changed, before, {"association": {}, "role": after_role}
    account_id = pod_identity.get("account_id") or context.account_id()
    want = {
        "role_name": pod_role_name(team, prefix),
        "description": "Pods of team %s (service account %s in %s)" % (team, n["service_account"], n["namespace"]),
        "trust_policy": pod_trust_policy(account_id, pod_identity["cluster_arn"], n["namespace"]),
        "team_data_policy": execution_role.team_data_policy(pod_identity["data_bucket"], team),
        "tags": dict((k, "" if v is None else str(v)) for k, v in tags.items()),
        "purge_tags": False,
    }
    role_changed, before["role"], role = engine.ensure_present(
        execution_role.ExecutionRole(iam, want["role_name"], check_mode, want, account_id=lambda: account_id, before=role_before), check_mode
    )[:3]
    wanted = {"cluster_name": cluster_name, "namespace": n["namespace"], "service_account": n["service_account"], "role_arn": role["arn"]}
    if current is None:
        after = dict(wanted, association_id=None, association_arn=None, tags=dict(want["tags"]))
        if not check_mode:
            after = _association_view(eks_api.create_pod_identity_association(
                eks, clusterName=cluster_name, namespace=n["namespace"], serviceAccount=n["service_account"], roleArn=role["arn"], tags=tags
            ))
        return True, before, {"association": after, "role": role}
    after = dict(before["association"])
    changed = role_changed
    if current["roleArn"] != role["arn"]:
        changed = True
        after["role_arn"] = role["arn"]
        if not check_mode:
            after = _association_view(
                eks_api.update_pod_identity_association(eks, clusterName=cluster_name, associationId=current["associationId"], roleArn=role["arn"])
            )
    # The team tags, on an adopted association the mark the next run checks (EKS takes them with TagResource only).
    missing = dict((k, v) for k, v in want["tags"].items() if after["tags"].get(k) != v)
    if missing:
        changed = True
        if not check_mode:
            eks_api.tag_resource(eks, resourceArn=current["associationArn"], tags=missing)
        after["tags"] = dict(after["tags"], **missing)
    return changed, before, {"association": after, "role": role}


MODULE_OPTIONS = options(
    dict(
        team=dict(type="str", required=True),
        kubeconfig=dict(type="raw", required=True),
        context=dict(type="str"),
        pod_security=dict(type="str", choices=list(POD_SECURITY_LEVELS), default="restricted"),
        pod_identity=dict(
            type="dict",
            options=dict(
                cluster_name=dict(type="str", required=True),
                cluster_arn=dict(type="str", required=True),
                data_bucket=dict(type="str", required=True),
                account_id=dict(type="str"),
            ),
        ),
        priority_classes=dict(type="list", elements="str", default=[]),
        ingress_namespaces=dict(type="list", elements="str", default=list(INGRESS_NAMESPACES)),
        adopt_pod_role=dict(type="bool", default=False),
        volume=dict(
            type="dict",
            options=dict(
                file_system_id=dict(type="str", required=True),
                directory=dict(type="str"),
                capacity_gib=dict(type="int", default=1200),
                dns_name=dict(type="str"),
                mount_name=dict(type="str"),
            ),
        ),
    ),
    STATE, NAME_PREFIX, TEAM_TAGS,
)
# What shared_info read earlier in the run (team_resources' ``known``): ``read_known_pod_identity``'s answer.
KNOWN = dict(pod_identity=dict(type="dict"))
# The team file's access.pod_security (docs/team-file.md); access_entry declares the section's other keys.
TEAM_FILE_SECTION = team_section("access", MODULE_OPTIONS, ("pod_security",))


def check(params):
    """What is refused before any call."""
    volume = params.get("volume")
    if volume and volume.get("capacity_gib") is not None and volume["capacity_gib"] < 1:
        raise InputError(message="team %r: volume.capacity_gib must be at least 1, not %s" % (params["team"], volume["capacity_gib"]))


def _volume(context, params):
    """The volume's FSx attributes: given, or read from DescribeFileSystems (DNSName, LustreConfiguration.MountName)."""
    volume = params.get("volume")
    if not volume:
        return None
    volume = dict(volume, directory=volume.get("directory") or params["team"])
    if volume.get("dns_name") and volume.get("mount_name"):
        return volume
    described = (fsx.describe_file_systems(context.client("fsx"), FileSystemIds=[volume["file_system_id"]]) or [None])[0]
    if described is None:
        raise InputError(message="team %r: volume.file_system_id %s: no such FSx file system" % (params["team"], volume["file_system_id"]))
    volume["dns_name"] = volume.get("dns_name") or described["DNSName"]
    volume["mount_name"] = volume.get("mount_name") or (described.get("LustreConfiguration") or {}).get("MountName")
    if not volume["mount_name"]:
        raise InputError(message="team %r: FSx file system %s has no Lustre mount name" % (params["team"], volume["file_system_id"]))
    return volume


def converge(context, params):
    """The result of team_namespace: the team's objects in its namespace after the run."""
    p = params
    check(p)
    cluster = Cluster(p["kubeconfig"], p.get("context"))
    policy = (p.get("priority_classes") or [], p.get("ingress_namespaces", INGRESS_NAMESPACES))
    objects = desired(p["team"], p["name_prefix"], p["pod_security"], _volume(context, p) if p["state"] == "present" else None, *policy)
    identity = found = None
    tags = naming.team_tags(p["team"], p.get("cost_center"), p.get("tag_keys"))
    if p.get("pod_identity"):
        # The pod role and its association are checked before anything is written, in the cluster or in AWS.
        adopt = p["state"] == "present" and p["adopt_pod_role"]
        known = known_value(p, "pod_identity")
        # Read earlier in the run, the copy only tells that nothing changes: a change is planned from a new read.
        found, unused_found = engine.plan_from_copy(
            lambda fresh: read_pod_identity(context, p["team"], p["name_prefix"], p["pod_identity"], p.get("tag_keys"), adopt, None if fresh else known),
            lambda found: bool(known) and p["state"] == "present", lambda found: found, context.check_mode,
            writes=lambda found: ensure_pod_identity(context, p["team"], p["name_prefix"], p["pod_identity"], tags, "present", found, check_mode=True)[0],
        )
    if p["state"] == "absent":
        if found is not None:
            identity = ensure_pod_identity(context, p["team"], p["name_prefix"], p["pod_identity"], {}, "absent", found)
        # A volume the team no longer names is still the team's: removing it does not need its attributes.
        objects += desired(p["team"], p["name_prefix"], p["pod_security"], _ABSENT_VOLUME, *policy)[len(objects):]
        changed, before, after = ensure_absent(cluster, p["team"], objects, context.check_mode)
    else:
        changed, before, after = ensure_present(cluster, p["team"], objects, context.check_mode)
        if found is not None:
            identity = ensure_pod_identity(context, p["team"], p["name_prefix"], p["pod_identity"], tags, "present", found)
    result = summary(p["team"], p["name_prefix"], objects, after, policy[0])
    if identity is not None:
        changed = changed or identity[0]
        before["pod_identity"], after["pod_identity"] = identity[1], identity[2]
        result["pod_role"] = identity[2]["role"].get("arn")
        result["pod_identity_association"] = identity[2]["association"].get("association_id")
    return dict(changed=changed, namespace=result, diff={"before": before, "after": after})


# Placeholder attributes for naming the volume objects when removing them (only their names are used).
_ABSENT_VOLUME = {"file_system_id": "-", "directory": "-", "capacity_gib": 1, "dns_name": "-", "mount_name": "-"}
