"""A real Prometheus with a month of cluster metrics, for the sandbox's AMP query API to forward to.

The metrics are those the HyperPod observability add-on sends to AMP, with the names and labels their
exporters document:

- Kueue's ClusterQueue metrics (``kueue_cluster_queue_nominal_quota``, ``kueue_cluster_queue_resource_usage``,
  labels ``cohort``, ``cluster_queue``, ``flavor``, ``resource``) and its counter
  ``kueue_admitted_workloads_total{cluster_queue}``;
- the NVIDIA DCGM exporter's ``DCGM_FI_DEV_GPU_UTIL`` per GPU (percent; ``gpu``, ``UUID``, ``device``,
  ``modelName``, ``Hostname``, and ``namespace``/``pod``/``container`` of the pod using the GPU, absent
  when none does);
- kube-state-metrics' ``kube_node_labels{node, label_node_kubernetes_io_instance_type}``.

A ``Scenario`` says what ran: ``Job(team, instance_type, first_hour, end_hour, instances, utilisation)``,
placed on whole nodes. ``openmetrics()`` writes the series hour by hour; ``promtool tsdb
create-blocks-from openmetrics`` turns them into TSDB blocks, and ``PrometheusServer`` serves them on a
free loopback port from a data directory of its own (never Debian's service).

Each sample stands for the hour that begins 150 s after it: an hourly evaluation at ``t`` finds the
sample of ``t - 150 s`` and none from the hour before, whether Prometheus' lookback window (5 min) is
open or closed at its start. A series that ends has no staleness marker (backfilled data has none), and
this spacing is what keeps the previous hour from leaking into the next.
"""

from __future__ import annotations

import calendar
import shutil
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.services.ce_tags import last_full_month

GPU = "nvidia.com/gpu"
GPUS = {"ml.p5.48xlarge": 8, "ml.p4d.24xlarge": 8, "ml.g5.12xlarge": 4, "ml.g5.48xlarge": 8, "ml.g5.xlarge": 1, "ml.g5.2xlarge": 1}
MODEL = {"ml.p5.48xlarge": "NVIDIA H100 80GB HBM3", "ml.p4d.24xlarge": "NVIDIA A100-SXM4-40GB"}
COHORT = "hyperpod-cohort"
EARLY = 150


@dataclass
class Job:
    team: str
    instance_type: str
    first_hour: int
    end_hour: int
    instances: int
    utilisation: float  # percent, DCGM_FI_DEV_GPU_UTIL of each of its GPUs
    workloads: int = 1  # admissions counted at its first hour


@dataclass
class Scenario:
    month: str
    capacity: dict  # {instance type: instances}
    quotas: dict  # {team: {instance type: instances}}
    jobs: list = field(default_factory=list)
    counter_resets: list = field(default_factory=list)  # hours at which Kueue restarted (its counters drop to 0)

    @property
    def start(self) -> int:
        year, number = (int(x) for x in self.month.split("-"))
        return calendar.timegm((year, number, 1, 0, 0, 0))

    @property
    def hours(self) -> int:
        year, number = (int(x) for x in self.month.split("-"))
        return calendar.monthrange(year, number)[1] * 24


def _labels(**labels) -> str:
    return "{" + ",".join('%s="%s"' % (k, str(v).replace("\\", "\\\\").replace('"', '\\"')) for k, v in labels.items()) + "}"


def _namespace(team: str) -> str:
    return "hyperpod-ns-%s" % team


def _place(scenario: Scenario) -> dict:
    """{(node, hour): job} with every job on whole nodes of its type, first fit; refuses what does not fit."""
    placed = {}
    for job in scenario.jobs:
        for hour in range(job.first_hour, job.end_hour):
            free = [n for n in range(scenario.capacity[job.instance_type]) if (job.instance_type, n, hour) not in placed]
            if len(free) < job.instances:
                raise ValueError("hour %d: %d %s do not fit (%d free)" % (hour, job.instances, job.instance_type, len(free)))
            for node in free[: job.instances]:
                placed[(job.instance_type, node, hour)] = job
    return placed


def openmetrics(scenario: Scenario, out) -> int:
    """Write the scenario's series to ``out`` in OpenMetrics text; returns the number of samples."""
    start, hours = scenario.start, scenario.hours
    placed = _place(scenario)
    samples = 0

    def stamp(hour):
        return start + hour * 3600 - EARLY

    queues = sorted(set((team, itype) for team, quota in scenario.quotas.items() for itype in quota)
                    | set((j.team, j.instance_type) for j in scenario.jobs))
    used = {}
    for job in scenario.jobs:
        for hour in range(job.first_hour, job.end_hour):
            key = (job.team, job.instance_type, hour)
            used[key] = used.get(key, 0) + job.instances * GPUS[job.instance_type]
    out.write("# TYPE kueue_cluster_queue_nominal_quota gauge\n")
    for team, itype in queues:
        labels = _labels(cohort=COHORT, cluster_queue="%s-clusterqueue" % _namespace(team), flavor=itype, resource=GPU)
        value = scenario.quotas.get(team, {}).get(itype, 0) * GPUS[itype]
        for hour in range(hours):
            out.write("kueue_cluster_queue_nominal_quota%s %d %d\n" % (labels, value, stamp(hour)))
            samples += 1
    out.write("# TYPE kueue_cluster_queue_resource_usage gauge\n")
    for team, itype in queues:
        labels = _labels(cohort=COHORT, cluster_queue="%s-clusterqueue" % _namespace(team), flavor=itype, resource=GPU)
        for hour in range(hours):
            out.write("kueue_cluster_queue_resource_usage%s %d %d\n" % (labels, used.get((team, itype, hour), 0), stamp(hour)))
            samples += 1
    out.write("# TYPE kueue_admitted_workloads counter\n")
    for team in sorted(set(t for t, _i in queues)):
        labels = _labels(cluster_queue="%s-clusterqueue" % _namespace(team))
        count = 0
        # The counter exists before the month (Kueue runs all along): its hour before is the baseline.
        for hour in range(-1, hours):
            if hour in scenario.counter_resets:
                count = 0
            count += sum(j.workloads for j in scenario.jobs if j.team == team and j.first_hour == hour)
            out.write("kueue_admitted_workloads_total%s %d %d\n" % (labels, count, stamp(hour)))
            samples += 1
    out.write("# TYPE kube_node_labels gauge\n")
    for itype, instances in sorted(scenario.capacity.items()):
        for node in range(instances):
            labels = _labels(node=_node(itype, node), label_node_kubernetes_io_instance_type=itype)
            for hour in range(hours):
                out.write("kube_node_labels%s 1 %d\n" % (labels, stamp(hour)))
                samples += 1
    out.write("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n")
    for itype, instances in sorted(scenario.capacity.items()):
        for node in range(instances):
            for gpu in range(GPUS.get(itype, 0)):
                common = dict(gpu=gpu, UUID="GPU-%s-%d-%d" % (itype.replace(".", "-"), node, gpu), device="nvidia%d" % gpu,
                              modelName=MODEL.get(itype, "NVIDIA A10G"), Hostname=_node(itype, node))
                for hour in range(hours):
                    job = placed.get((itype, node, hour))
                    if job is None:
                        labels, value = _labels(**common), 0
                    else:
                        pod = "%s-%s-%d-worker-%d" % (job.team, itype.split(".")[1], job.first_hour, node)
                        labels = _labels(**common, namespace=_namespace(job.team), pod=pod, container="pytorch")
                        value = job.utilisation
                    out.write("DCGM_FI_DEV_GPU_UTIL%s %s %d\n" % (labels, _number(value), stamp(hour)))
                    samples += 1
    out.write("# EOF\n")
    return samples


def _number(value) -> str:
    return ("%f" % value).rstrip("0").rstrip(".")


def _node(itype: str, index: int) -> str:
    return "hyperpod-i-%s-%02d" % (itype.split(".")[1], index)


def build_tsdb(scenario: Scenario, data_dir: Path, promtool: str = "promtool") -> int:
    """Generate the scenario and backfill it into ``data_dir``; returns the number of samples."""
    data_dir.mkdir(parents=True, exist_ok=True)
    source = data_dir.parent / ("%s.om" % data_dir.name)
    with open(source, "w") as out:
        samples = openmetrics(scenario, out)
    # Blocks of at most a day keep promtool's memory small; Prometheus compacts them itself.
    subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", "--max-block-duration=24h", str(source), str(data_dir)],
                   check=True, capture_output=True, text=True, timeout=600)
    source.unlink()
    return samples


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PrometheusServer:
    """``prometheus`` on a free loopback port, serving ``data_dir``, until ``stop()``."""

    def __init__(self, data_dir: Path, binary: str = "prometheus", port: int | None = None):
        self.data_dir = Path(data_dir)
        self.port = port or _free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        config = self.data_dir.parent / ("%s.yml" % self.data_dir.name)
        config.write_text("global: {}\n")  # nothing to scrape: the data is what was backfilled
        self.log = self.data_dir.parent / ("%s.log" % self.data_dir.name)
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [binary, "--config.file=%s" % config, "--storage.tsdb.path=%s" % self.data_dir,
                 "--storage.tsdb.retention.time=100y", "--web.listen-address=127.0.0.1:%d" % self.port,
                 "--query.max-samples=50000000"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as answer:  # noqa: S310 - loopback
                    if answer.status == 200:
                        return
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("prometheus did not start: %s" % self.log.read_text()[-2000:])
            time.sleep(0.2)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def installed() -> bool:
    return bool(shutil.which("prometheus") and shutil.which("promtool"))


def demo_scenario(settings: dict, month: str) -> Scenario:
    """A month for the team file of ``settings`` (group_vars/all): teams that borrow, one that idles, one with no jobs.

    The first present team borrows two extra instances of its type for the first half of the month; the
    second runs one instance of each of its types all month at half utilisation; the third holds half its
    quota all month at 10 % utilisation (admitted, not busy); any further team runs nothing.
    """
    capacity = {}
    for group in settings["hyperpod_cluster"]["instance_groups"]:
        capacity[group["instance_type"]] = capacity.get(group["instance_type"], 0) + int(group["count"])
    teams = [t for t in settings["hyperpod_teams"] if t.get("state", "present") == "present"]
    quotas = dict((t["name"], dict((r["instance_type"], int(r.get("count") or 0)) for r in (t.get("quota") or {}).get("resources") or []))
                  for t in teams)
    year, number = (int(x) for x in month.split("-"))
    hours = calendar.monthrange(year, number)[1] * 24
    jobs = []
    for index, team in enumerate(teams):
        quota = quotas[team["name"]]
        for itype, count in sorted(quota.items()):
            if index == 0:
                jobs.append(Job(team["name"], itype, 0, hours // 2, min(count + 2, capacity[itype]), 75, workloads=2))
                jobs.append(Job(team["name"], itype, hours // 2, hours, count, 75))
            elif index == 1:
                jobs.append(Job(team["name"], itype, 0, hours, 1, 50))
            elif index == 2:
                jobs.append(Job(team["name"], itype, 0, hours, max(count // 2, 1), 10))
    return Scenario(month=month, capacity=capacity, quotas=quotas, jobs=jobs)


def serve_demo(client, settings: dict, directory: Path, month: str | None = None) -> PrometheusServer:
    """``python -m sandbox run``: the demo month served, the sandbox forwarding to it, and the AMP workspace it is read through.

    The workspace (alias ``<name_prefix>-observability``, the one the observability role makes) stands for
    the observability role having run before; ``make demo`` does not enable that role.
    """
    data_dir = Path(directory) / "prometheus-data"
    if data_dir.exists():
        shutil.rmtree(data_dir)
    build_tsdb(demo_scenario(settings, month or last_full_month()), data_dir)
    server = PrometheusServer(data_dir)
    client.set_upstreams(prometheus=server.url)
    alias = "%s-observability" % settings.get("hyperpod_name_prefix", "hyperpod")
    amp = client.boto3_client("amp", settings.get("hyperpod_aws_region", "us-east-1"))
    if not [w for w in amp.list_workspaces(alias=alias)["workspaces"] if w.get("alias") == alias]:
        workspace_id = amp.create_workspace(alias=alias)["workspaceId"]
        deadline = time.monotonic() + 60
        while amp.describe_workspace(workspaceId=workspace_id)["workspace"]["status"]["statusCode"] != "ACTIVE":
            if time.monotonic() > deadline:
                raise RuntimeError("the demo's AMP workspace did not become ACTIVE")
            time.sleep(0.2)
    return server

