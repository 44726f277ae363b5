#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: team_namespace
short_description: A team's guard rails, identity and volume in its Kubernetes namespace
version_added: 0.1.0
description:
  - Adds to the namespace C(hyperpod-ns-<team>) that HyperPod Task Governance makes for the team's compute quota,
    without taking it over, through the cluster's Kubernetes API (server-side apply, field manager C(hyperpod-tenancy)).
  - Pod Security admission labels on the namespace, C(enforce) at O(pod_security), C(warn) and C(audit) at V(restricted).
  - A NetworkPolicy C(<name_prefix>-team-ingress) that admits ingress only from the namespace's own pods and from the
    namespaces O(ingress_namespaces) names, and
    C(<name_prefix>-team-egress) that lets egress go anywhere but the instance metadata endpoint
    (C(169.254.169.254/32), C(fd00:ec2::254/128)).
  - The ServiceAccount C(<name_prefix>-<team>) for the team's pods.
  - A ValidatingAdmissionPolicy C(<name_prefix>-<team>-no-token-secrets) and its binding (cluster-scoped, matching the
    team namespace only) that refuse a Secret of type C(kubernetes.io/service-account-token), for which the token
    controller would write a token of a service account that never expires; the module waits until the API server
    enforces it. Needs Kubernetes 1.30 or later (C(admissionregistration.k8s.io/v1)).
  - Then the team namespace's Secrets of type C(kubernetes.io/service-account-token) stored before the policy (it refuses
    requests, not stored objects) are deleted, which invalidates their tokens; each is reported as changed and in the diff
    (its data masked). In check mode they are reported and left in place.
  - A ValidatingAdmissionPolicy C(<name_prefix>-<team>-workloads-in-queue) and its binding that hold a member's workload
    (a request of the team's group or of a service account of the team namespace, creating or updating a Pod, Job or
    PyTorchJob there, or one of the kinds the HyperPod access policies let a member write, a HyperPodPyTorchJob, an
    InferenceEndpointConfig or JumpStartModel, a Workspace) to the team's queue. It is refused unless it carries the label
    C(kueue.x-k8s.io/queue-name) naming the team's LocalQueue C(hyperpod-ns-<team>-localqueue), names in label
    C(kueue.x-k8s.io/priority-class) and in its pods' C(priorityClassName) nothing but O(priority_classes), its pods name
    no node (C(nodeName)), it names no owner (C(ownerReferences)) and no prebuilt Kueue Workload, a Job or PyTorchJob stays
    suspended (Kueue alone starts it; HyperPod's kinds are left to their operators), and a Pod carries Kueue's scheduling
    gate C(kueue.x-k8s.io/admission) (Kueue alone lets it be scheduled).
  - A member's CronJob, Deployment, StatefulSet, ReplicaSet, DaemonSet or ReplicationController is refused whatever it
    carries (Kueue would not queue its pods by its label). The controllers that make pods from an admitted workload are not
    held to the policy. Kubernetes 1.35 cannot set a missing label by default (MutatingAdmissionPolicy is beta and off
    there), so it is refused, its message naming the label.
  - The Role C(hyperpod-ns-<team>-namespace-role) of the HyperPod CLI's C(team-role-and-bindings) chart, plus reading
    PersistentVolumeClaims, the team's LocalQueue and its pending workloads (Kueue's visibility API), less the chart's
    writes on Kueue's Workloads and on C(pytorchjobs/status), bound to the group C(hyperpod-ns-<team>-namespace-level-group)
    that the team's access entry carries.
  - A ClusterRole and ClusterRoleBinding C(<name_prefix>-<team>-cluster-queue-reader) that let that group read the team's
    own ClusterQueue C(hyperpod-ns-<team>-clusterqueue) by name, and no other.
  - With O(volume), a static PersistentVolume C(<name_prefix>-<team>-fsx) for the team's FSx for Lustre directory
    (driver C(fsx.csi.aws.com), C(dnsname) and C(mountname) C(<MountName>/<directory>)), C(Retain)ed and reserved by
    C(claimRef) for the claim of the same name in the team namespace, and that claim.
  - With O(pod_identity), an IAM role for the team's pods and the EKS Pod Identity association of its ServiceAccount to it,
    each changed or deleted only when the collection made it for the team (O(adopt_pod_role)).
  - Every object but the namespace carries C(app.kubernetes.io/managed-by=hyperpod.tenancy) and C(hyperpod.tenancy/team=<team>);
    an object of the same name without them is refused, never changed.
  - Check mode and diff come from the same apply with C(dryRun=All), as the API server itself predicts it; when the
    namespace does not exist yet in check mode (the quota is only predicted too), every object is predicted as new.
  - O(state=absent) deletes what the module made (the volume's data stays, C(Retain)) and gives up its namespace labels.
author:
  - hyperpod.tenancy contributors (@hyperpod-tenancy)
options:
  team:
    description: The team name; with O(name_prefix) it names the service account, volume and network policy.
    type: str
    required: true
  state:
    description: V(absent) removes what the module made.
    type: str
    choices: [present, absent]
    default: present
  kubeconfig:
    description: The cluster's kubeconfig, a path or its content as a dictionary.
    type: raw
    required: true
  context:
    description: The kubeconfig context; by default its current context.
    type: str
  pod_security:
    description:
      - The Pod Security Standard the namespace enforces.
      - V(restricted) refuses a pod that may run as root (it requires C(runAsNonRoot), no privilege escalation, every
        capability dropped and a C(RuntimeDefault) or C(Localhost) seccomp profile); under V(baseline) a pod may run as
        root, which reads every file of the team's volume, the members' C(0700) homes included.
      - The team file asks for V(baseline) only where the cluster file's C(hyperpod_team_limits) allows it (docs/team-file.md).
    type: str
    choices: [baseline, restricted]
    default: restricted
  pod_identity:
    description:
      - An identity in AWS for the team's pods. The IAM role C(<name_prefix>-<team>-pods) may use only the team's prefix of
        O(pod_identity.data_bucket) (inline policy C(team-data)); its trust policy lets C(pods.eks.amazonaws.com) call
        C(sts:AssumeRole) and C(sts:TagSession) for the cluster O(pod_identity.cluster_arn) (C(aws:SourceArn)) and the team
        namespace (C(aws:RequestTag/kubernetes-namespace)) only.
      - The EKS Pod Identity association of the team's ServiceAccount to that role (C(eks:CreatePodIdentityAssociation));
        the cluster needs the C(eks-pod-identity-agent) add-on for pods to get its credentials.
      - Without it the team's pods have no AWS identity of their own. O(state=absent) removes both when given.
    type: dict
    suboptions:
      cluster_name:
        description: The EKS cluster.
        type: str
        required: true
      cluster_arn:
        description: The EKS cluster's ARN, the only source the role trusts.
        type: str
        required: true
      data_bucket:
        description: The bucket of the team's S3 prefix.
        type: str
        required: true
      account_id:
        description: The account; by default the caller's (STS).
        type: str
  priority_classes:
    description:
      - The platform's Task Governance priority classes (the cluster scheduler config's, each a Kueue WorkloadPriorityClass),
        the only values a member's workload may give label C(kueue.x-k8s.io/priority-class) or its pods' C(priorityClassName).
      - Empty, a member's workload names no priority class, and its pods none either.
    type: list
    elements: str
    default: []
  ingress_namespaces:
    description:
      - The namespaces, by name, whose pods may open connections to the team's pods (the cluster's add-ons and scrapers).
        A namespace anyone can make, V(default) or Studio's shared C(jupyter-k8s-shared), does not belong here.
      - V(hyperpod-observability) is the HyperPod observability add-on's namespace as public tooling for the add-on reads
        it; AWS's page on the add-on does not name it.
    type: list
    elements: str
    default: [kube-system, hyperpod-observability]
  adopt_pod_role:
    description:
      - The pod role and the Pod Identity association of O(pod_identity) are changed or deleted only when they carry the
        collection's ownership mark for O(team), the tags C(managed-by=hyperpod.tenancy) and the team tag naming O(team),
        which both carry when this module made them. Any other, for instance a role of that name made by hand, is refused
        before any write (to the cluster or to AWS), building and with O(state=absent), in check mode too, with an error
        naming the team, the role or association and its tags.
      - V(true) takes over a role and an association that carry no mark and marks them (the team file's C(adopt) list with
        C(pod_role); docs/team-file.md), and the role's policies and trust become the team's. One marked for another team
        is refused even then, and so is an unmarked one with O(state=absent).
    type: bool
    default: false
  volume:
    description: The team's FSx for Lustre directory as a PersistentVolume and claim; without it the team has no volume.
    type: dict
    suboptions:
      file_system_id:
        description: The FSx for Lustre file system.
        type: str
        required: true
      directory:
        description: The team's directory, relative to the file system's root; by default the team name.
        type: str
      capacity_gib:
        description: The capacity the volume and claim state (Kubernetes requires one; FSx does not enforce it per directory).
        type: int
        default: 1200
      dns_name:
        description: The file system's DNS name; by default read with C(fsx:DescribeFileSystems).
        type: str
      mount_name:
        description: The file system's Lustre mount name; by default read with C(fsx:DescribeFileSystems).
        type: str
requirements:
  - kubernetes (Python library)
extends_documentation_fragment:
  - hyperpod.tenancy.attributes
  - hyperpod.tenancy.team
  - hyperpod.tenancy.team.name_prefix
  - hyperpod.tenancy.aws"""

EXAMPLES = r"""
- name: Give team vision its guard rails, service account, role and FSx volume
  hyperpod.tenancy.team_namespace:
    team: vision
    kubeconfig: ~/.kube/config
    volume:
      file_system_id: fs-0123456789abcdef0
    pod_identity:
      cluster_name: ml-shared-eks
      cluster_arn: arn:aws:eks:us-east-1:123456789012:cluster/ml-shared-eks
      data_bucket: ml-team-data

- name: Remove them when the team leaves (the FSx data stays)
  hyperpod.tenancy.team_namespace:
    team: vision
    kubeconfig: ~/.kube/config
    state: absent
"""

RETURN = r"""
namespace:
  description: What the team has in its namespace after the run.
  returned: always
  type: dict
  contains:
    namespace:
      description: The team namespace.
      type: str
      sample: hyperpod-ns-vision
    pod_security:
      description: The Pod Security level enforced (null once removed).
      type: str
      sample: restricted
    service_account:
      description: The team's ServiceAccount.
      type: str
      sample: hyperpod-vision
    role:
      description: The Role bound to the team's Kubernetes group.
      type: str
      sample: hyperpod-ns-vision-namespace-role
    group:
      description: The Kubernetes group the Role is bound to.
      type: str
      sample: hyperpod-ns-vision-namespace-level-group
    volume:
      description: The PersistentVolume and claim of the team's FSx directory, or null.
      type: str
      sample: hyperpod-vision-fsx
    objects:
      description: The objects present after the run, as C(Kind/namespace/name).
      type: list
      elements: str
    pod_role:
      description: The ARN of the team's pod role, with O(pod_identity).
      type: str
      sample: arn:aws:iam::123456789012:role/hyperpod-vision-pods
    pod_identity_association:
      description: The id of the Pod Identity association, with O(pod_identity) (null in check mode before it exists).
      type: str
      sample: a-0123456789abcdefg
"""

from ansible_collections.hyperpod.tenancy.plugins.module_utils.layer import run_module
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_namespace import MODULE_OPTIONS, converge


def main():
    run_module(MODULE_OPTIONS, converge)


if __name__ == "__main__":
    main()
