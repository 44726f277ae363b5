# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""Each team's capacity on the cluster now (issue 38): guaranteed, reserved, in use, borrowed, admitted and pending.

Read from the Kueue ClusterQueue ``hyperpod-ns-<team>-clusterqueue`` that the HyperPod Task Governance add-on makes for
each team's compute quota (naming.cluster_queue; the name is Task Governance's, fixed, whatever the collection's
``name_prefix``). The fields, as Kueue's API reference names them
(https://kueue.sigs.k8s.io/docs/reference/kueue.v1beta1/#kueue-x-k8s-io-v1beta1-ClusterQueue, and the types in
``apis/kueue/v1beta1/clusterqueue_types.go``):

- guaranteed: ``spec.resourceGroups[].flavors[].resources[].nominalQuota`` (``ResourceQuota``), with its
  ``borrowingLimit`` (null: no limit) and ``lendingLimit`` (null: all of the nominal quota may be lent);
- reserved: ``status.flavorsReservation[].resources[].total``, the quota reserved by the workloads assigned to the queue
  (``ClusterQueueStatus.flavorsReservation``, ``FlavorUsage``, ``ResourceUsage``);
- in use: ``status.flavorsUsage[].resources[].total``, the quota used by the workloads admitted, the borrowed part
  included (``ResourceUsage.total``);
- borrowed: ``status.flavorsUsage[].resources[].borrowed``, the used quota over the nominal quota (``ResourceUsage.borrowed``);
- ``status.pendingWorkloads``, ``status.reservingWorkloads`` and ``status.admittedWorkloads``: counts of workloads.

Each amount is a Kubernetes quantity, parsed exactly (``parse_quantity``); memory is shown in GiB. The flavor is the
instance type (Task Governance makes a ResourceFlavor per instance type, sandbox/kube/task_governance.py; an assumption
its pages do not state). Reading needs ``list`` on ``clusterqueues.kueue.x-k8s.io``, cluster-wide: the platform's
credentials (a team's group reads its own queue by name only, team_namespace).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from fractions import Fraction

from ansible_collections.hyperpod.tenancy.plugins.module_utils import naming, text_table
from ansible_collections.hyperpod.tenancy.plugins.module_utils.errors import InputError
from ansible_collections.hyperpod.tenancy.plugins.module_utils.team_namespace import KubernetesError

# A page of the list; the API server gives the next one's token in metadata.continue
# (https://kubernetes.io/docs/reference/using-api/api-concepts/#retrieving-large-results-sets-in-chunks).
PAGE = 500
# Task Governance's queue of a team, naming.cluster_queue(team) read back (the team name a DNS label, naming.TEAM_NAME_RULE).
QUEUE_NAME = re.compile("^%s$" % re.escape(naming.cluster_queue("TEAM")).replace("TEAM", "(?P<team>%s)" % naming.DNS_LABEL_PATTERN))

# The quantity grammar of https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/:
# <signedNumber><suffix>, the suffix binary SI (Ki .. Ei), decimal SI (m, "", k .. E) or a decimal exponent (e<n>, E<n>).
# n and u are apimachinery's parser's too (k8s.io/apimachinery/pkg/api/resource/suffix.go), though the page leaves them
# out: accepted (an assumption that they may reach a stored object).
_QUANTITY = re.compile(r"^(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?P<suffix>[KMGTPE]i|[numkMGTPE]?|[eE][+-]?[0-9]+)$")
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
MAX_EXPONENT = 30
GIB = 2**30
# Resources counted in bytes, shown in GiB (https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/
# #meaning-of-memory, and the local ephemeral storage and huge pages of the same page).
BYTE_RESOURCES = ("memory", "ephemeral-storage")
BYTE_RESOURCE_PREFIXES = ("hugepages-",)
# The amounts of a row, in the order of the table's columns.
AMOUNTS = ("guaranteed", "borrowing_limit", "lending_limit", "reserved", "in_use", "borrowed")
HEADERS = ("team", "flavor", "resource", "guaranteed", "borrow limit", "lend limit", "reserved", "in use", "borrowed")
NOT_IN_TEAM_FILES = "not in the team files"


def parse_quantity(value):
    """A Kubernetes quantity (``"8"``, ``"500m"``, ``"2048Gi"``, ``"1e3"``, or a JSON integer) as an exact ``Fraction``."""
    if isinstance(value, bool):
        raise InputError(message="%r is not a Kubernetes quantity" % (value,))
    if isinstance(value, int):
        return Fraction(value)
    match = _QUANTITY.match(value.strip()) if isinstance(value, str) else None
    if not match:
        raise InputError(message="%r is not a Kubernetes quantity" % (value,))
    number, suffix = Fraction(match.group("number")), match.group("suffix")
    if suffix in _BINARY:
        return number * 1024 ** _BINARY[suffix]
    exponent = _DECIMAL[suffix] if suffix in _DECIMAL else int(suffix[1:])
    # apimachinery holds a quantity in an int64 (up to about 9.2e18) or a Dec it rounds: an exponent far past that is no
    # quantity a queue holds, and 10**5000 would not print (Python's 4,300-digit limit).
    if abs(exponent) > MAX_EXPONENT:
        raise InputError(message="%r is not a Kubernetes quantity a queue holds (exponent beyond %d)" % (value, MAX_EXPONENT))
    return number * Fraction(10) ** exponent


def is_bytes(resource):
    return resource in BYTE_RESOURCES or resource.startswith(BYTE_RESOURCE_PREFIXES)


def unit(resource):
    """The unit the report gives ``resource`` in: GiB for memory, vCPUs for cpu, a count for the rest (GPUs, MIG slices)."""
    if is_bytes(resource):
        return "GiB"
    return "vCPU" if resource == "cpu" else "count"


def amount(resource, value):
    """A quantity of ``resource`` in the report's unit, exact; None stays None (a limit not set)."""
    if value is None:
        return None
    parsed = parse_quantity(value)
    return parsed / GIB if is_bytes(resource) else parsed


def number(value):
    """An exact amount as JSON gives it back: an int when whole, else a float; None stays None."""
    if value is None:
        return None
    return int(value) if value.denominator == 1 else float(value)


def shown(value, places=2):
    """An exact amount in the table: whole numbers as they are, others to ``places`` decimals (trailing zeros dropped);
    ``-`` for a limit not set."""
    if value is None:
        return "-"
    if value.denominator == 1:
        return str(value.numerator)
    # Half up, away from zero (Python's round() goes to the even neighbour: 0.005 would show 0).
    scaled = int(abs(value) * 10**places + Fraction(1, 2))
    text = "%s%d.%0*d" % ("-" if value < 0 and scaled else "", scaled // 10**places, places, scaled % 10**places)
    return text.rstrip("0").rstrip(".")


def _usage(entries):
    """``{(flavor, resource): ResourceUsage}`` of a ``status.flavorsUsage`` or ``status.flavorsReservation`` list."""
    return dict(((flavor["name"], r["name"]), r) for flavor in entries or [] for r in flavor.get("resources") or [])


def queue_rows(queue):
    """One row per flavor and resource of a ClusterQueue: its quota from the spec, its usage from the status.

    A (flavor, resource) in the status but no longer in the spec (a quota changed while workloads run) is a row too,
    guaranteed 0. Amounts are exact (``Fraction``), in ``unit(resource)``.
    """
    status = queue.get("status") or {}
    usage, reservation = _usage(status.get("flavorsUsage")), _usage(status.get("flavorsReservation"))
    quotas = [
        ((flavor["name"], r["name"]), r)
        for group in (queue.get("spec") or {}).get("resourceGroups") or []
        for flavor in group.get("flavors") or []
        for r in flavor.get("resources") or []
    ]
    keys = [key for key, _quota in quotas]
    keys += sorted((set(usage) | set(reservation)) - set(keys))
    quota_of = dict(quotas)
    rows = []
    for flavor, resource in keys:
        quota = quota_of.get((flavor, resource), {})
        used, reserved = usage.get((flavor, resource), {}), reservation.get((flavor, resource), {})
        try:
            rows.append(dict(
                flavor=flavor, resource=resource, unit=unit(resource),
                guaranteed=amount(resource, quota.get("nominalQuota", 0)),
                borrowing_limit=amount(resource, quota.get("borrowingLimit")),
                lending_limit=amount(resource, quota.get("lendingLimit")),
                # ResourceUsage.total and .borrowed are omitempty: absent is zero.
                reserved=amount(resource, reserved.get("total", 0)),
                in_use=amount(resource, used.get("total", 0)),
                borrowed=amount(resource, used.get("borrowed", 0)),
            ))  # fmt: skip
        except InputError as e:
            raise InputError(message="ClusterQueue %s, flavor %s, %s: %s" % (queue["metadata"]["name"], flavor, resource, e.message))
    return rows


def report(queues, teams=None):
    """The report of the ClusterQueues ``queues``: ``teams`` (a dict per team, exact amounts) and ``other_queues``.

    Every queue named ``hyperpod-ns-<team>-clusterqueue`` is reported, ``in_team_files`` saying whether ``teams`` (the
    team files' names, when given) names it: the platform engineer reads the whole cluster. A team of ``teams`` without
    a queue is reported with ``cluster_queue`` None. Other ClusterQueues, not Task Governance's, are counted in
    ``other_queues``, by name.
    """
    wanted = None if teams is None else set(teams)
    found, others = {}, []
    for queue in queues:
        name = queue["metadata"]["name"]
        match = QUEUE_NAME.match(name)
        if match:
            found[match.group("team")] = queue
        else:
            others.append(name)
    result = []
    for team in sorted(set(found) | (wanted or set())):
        queue = found.get(team)
        status = (queue or {}).get("status") or {}
        result.append(dict(
            team=team,
            cluster_queue=queue["metadata"]["name"] if queue else None,
            in_team_files=None if wanted is None else team in wanted,
            cohort=((queue or {}).get("spec") or {}).get("cohort"),
            pending_workloads=status.get("pendingWorkloads", 0) if queue else None,
            reserving_workloads=status.get("reservingWorkloads", 0) if queue else None,
            admitted_workloads=status.get("admittedWorkloads", 0) if queue else None,
            resources=queue_rows(queue) if queue else [],
        ))  # fmt: skip
    return dict(teams=result, other_queues=sorted(others))


def as_returned(teams):
    """The report's teams as the module returns them: amounts as JSON numbers."""
    return [dict(team, resources=[dict(row, **dict((key, number(row[key])) for key in AMOUNTS)) for row in team["resources"]]) for team in teams]


def table(teams, other_queues=()):
    """The report as fixed-width text lines: a row per team, flavor and resource, then a row per team of its workloads."""
    rows = [HEADERS]
    workloads = [("team", "cluster queue", "admitted", "reserving", "pending", "")]
    for team in teams:
        for row in team["resources"]:
            resource = "%s (GiB)" % row["resource"] if row["unit"] == "GiB" else row["resource"]
            rows.append((team["team"], row["flavor"], resource) + tuple(shown(row[key]) for key in AMOUNTS))
        if team["cluster_queue"] is None:
            workloads.append((team["team"], "-", "-", "-", "-", "no ClusterQueue %s (no compute quota yet)" % naming.cluster_queue(team["team"])))
        else:
            counts = (team["admitted_workloads"], team["reserving_workloads"], team["pending_workloads"])
            note = NOT_IN_TEAM_FILES if team["in_team_files"] is False else ""
            workloads.append((team["team"], team["cluster_queue"]) + tuple(str(count) for count in counts) + (note,))
    if not teams:
        lines = ["no ClusterQueue %s on the cluster" % naming.cluster_queue("<team>")]
    else:
        lines = text_table.columns(rows, (0, 1, 2)) if len(rows) > 1 else ["no quota in any team's ClusterQueue"]
        lines += [""] + text_table.columns(workloads, (0, 1, 5))
        lines.append("borrow limit - = no limit; lend limit - = all of guaranteed may be lent; in use includes borrowed")
    if other_queues:
        lines.append("%d other ClusterQueue(s), not Task Governance's: %s" % (len(other_queues), ", ".join(other_queues)))
    return lines


def list_cluster_queues(cluster):
    """Every ClusterQueue of the cluster, page by page, through team_namespace's ``Cluster`` (its kubeconfig and client)."""
    queues, token = [], None
    while True:
        query = {"limit": str(PAGE)}
        if token:
            query["continue"] = token
        path = cluster.path("ClusterQueue")
        page = cluster.request("GET", path, query=query)
        if page is None:
            # 404: the API server serves no ClusterQueues, Kueue's CRDs are not installed.
            raise KubernetesError(message="the cluster serves no Kueue ClusterQueues (%s): is the Task Governance add-on installed?" % path)
        queues.extend(page.get("items") or [])
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return queues


def read(cluster, teams=None):
    """The report of the cluster's ClusterQueues (``report``), with the table."""
    made = report(list_cluster_queues(cluster), teams)
    return dict(teams=as_returned(made["teams"]), other_queues=made["other_queues"], table=table(made["teams"], made["other_queues"]))
