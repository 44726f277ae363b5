"""A node of the sandbox's cluster, for the pods' network only, with a real NetworkPolicy enforcer.

No kubelet or container runtime runs in the sandbox (a pod is admitted, then stays Pending). So that the
cluster's NetworkPolicies are enforced and not only stored, ``Node`` plays what a kubelet and its CNI plugin do
for a pod's network, and runs sig-network's enforcer, ``kube-network-policies``
(https://github.com/kubernetes-sigs/kube-network-policies, the version ``netpol/go.mod`` pins, built by
``build.sh``), unchanged but for reaching the API server through a kubeconfig (``netpol/main.go``).

- The node is a network namespace of its own (``ip netns``), with IPv4 forwarding on: the machine's own
  network and firewall are not touched.
- A pod the caller creates through the API server is bound to the node (``spec.nodeName``); the agent gives it
  a network namespace, a veth pair routed by the node (the layout of the CNI ``ptp`` plugin: a /32 per pod, the
  node's end as the gateway) and an IP from ``POD_CIDR``, and writes that IP and ``Running`` to the pod's status
  through the API server, as the kubelet reports what the CNI plugin gave
  (https://kubernetes.io/docs/concepts/cluster-administration/networking/). No container runs: the caller runs
  its programs in the pod's network namespace (``Node.spawn``, ``Node.probe``), as a container there would.
- A host outside the cluster (``Node.add_host``: the instance metadata endpoint ``169.254.169.254``) is another
  network namespace the node routes to, so that its traffic is forwarded as a pod's is.
- The enforcer runs in the node's namespace with a ServiceAccount and the ClusterRole of its own
  ``install.yaml`` (list and watch pods, namespaces and NetworkPolicies), never the admin's certificate. It
  reaches the API server (on the machine's loopback) through a forwarder the agent listens with inside the
  node's namespace. It puts every packet of a pod a policy selects through an nfqueue and gives the verdict
  the policies give.

``pod_program.py`` (standard library only, run as a script) is what runs in a pod's namespace: a TCP and UDP
echo server, and a client that prints ``open`` or ``closed`` (no answer within the timeout, or a reset).
"""

from __future__ import annotations

import base64
import ctypes
import ipaddress
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from sandbox.kube import binary_dir
from sandbox.kube.api import KubeApi, KubeError

POD_CIDR = ipaddress.ip_network("10.244.0.0/24")
GATEWAY = str(POD_CIDR[1])  # the node's end of every pod's veth pair, as the ptp plugin sets it
ENFORCER = "kube-network-policies"
ENFORCER_NAMESPACE = "kube-system"
# The ClusterRole of kube-network-policies' install.yaml.
ENFORCER_RULES = [
    {"apiGroups": [""], "resources": ["pods", "namespaces"], "verbs": ["list", "watch"]},
    {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": ["list", "watch"]},
]
POD_PROGRAM = Path(__file__).with_name("pod_program.py")
CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def _ip(*args: str, namespace: str | None = None) -> None:
    command = ["ip", *(["-n", namespace] if namespace else []), *args]
    subprocess.run(command, check=True, capture_output=True, text=True)


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns")


def available() -> str | None:
    """Why a node cannot run on this machine, or None: root, ``ip``, ``nft`` and the netfilter queue are needed."""
    if os.geteuid() != 0:
        return "a node needs root (network namespaces, nftables)"
    for tool in ("ip", "nft"):
        if shutil.which(tool) is None:
            return f"{tool} is absent: make system-packages (as root) installs Debian's iproute2 and nftables"
    if not Path("/proc/net/netfilter/nfnetlink_queue").exists():
        return "the kernel has no nfnetlink_queue: kube-network-policies cannot give verdicts"
    return None


class Node:
    """One node: its network namespace, the pods' namespaces and the enforcer, under ``directory``."""

    def __init__(self, kube_dir: str | Path, directory: str | Path, name: str | None = None) -> None:
        self.api = KubeApi(kube_dir)
        self.kube_dir = Path(kube_dir)
        self.directory = Path(directory)
        self.name = name or f"sandbox-node-{os.getpid()}"
        self.netns = f"hp-{os.getpid()}-node"
        self.namespaces: list[str] = []
        self.addresses = POD_CIDR.hosts()
        next(self.addresses)  # the gateway's
        self.enforcer: subprocess.Popen | None = None
        self._listener: socket.socket | None = None
        self._programs: list[subprocess.Popen] = []

    # -- the node -----------------------------------------------------------------------------------------------

    def start(self, timeout: float = 30) -> Node:
        self.directory.mkdir(parents=True, exist_ok=True)
        _ip("netns", "add", self.netns)
        self.namespaces.append(self.netns)
        _ip("link", "set", "lo", "up", namespace=self.netns)
        self.exec(self.netns, ["sysctl", "-qw", "net.ipv4.ip_forward=1"])
        port = self._forward_api_server()
        kubeconfig = self._enforcer_kubeconfig(f"https://127.0.0.1:{port}")
        log = open(self.directory / "kube-network-policies.log", "ab")  # noqa: SIM115 (the process owns it)
        self.enforcer = subprocess.Popen(
            ["ip", "netns", "exec", self.netns, str(binary_dir() / ENFORCER), "--kubeconfig", str(kubeconfig), "--hostname-override", self.name,
             # The kernel is 6.12 or later, which fixed the DNS race the workaround is for: DNS takes the same path as any packet.
             "--netfilter-bug-1766-fix=false", "--v=2"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        log.close()
        deadline = time.monotonic() + timeout
        while self._enforced_addresses() is None:
            if self.enforcer.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"kube-network-policies did not start: {self.log_tail()}")
            time.sleep(0.25)
        return self

    def stop(self) -> None:
        for process in [*self._programs, *([self.enforcer] if self.enforcer else [])]:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        if self._listener is not None:
            self._listener.close()
        for namespace in reversed(self.namespaces):
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True)
        self.namespaces.clear()

    def log_tail(self) -> str:
        try:
            return (self.directory / "kube-network-policies.log").read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def _forward_api_server(self) -> int:
        """A listener inside the node's namespace that forwards to the API server on the machine's loopback."""
        upstream = self.api.server.removeprefix("https://").rsplit(":", 1)
        host = os.open("/proc/self/ns/net", os.O_RDONLY)
        node = os.open(f"/run/netns/{self.netns}", os.O_RDONLY)
        try:
            _setns(node)  # this thread only, for the time it takes to make the socket: a socket keeps its namespace
            try:
                listener = socket.create_server(("127.0.0.1", 0))
            finally:
                _setns(host)
        finally:
            os.close(node)
            os.close(host)
        self._listener = listener

        def pipe(source: socket.socket, target: socket.socket) -> None:
            try:
                while data := source.recv(65536):
                    target.sendall(data)
            except OSError:
                pass
            finally:
                for sock in (source, target):
                    try:
                        sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

        def accept() -> None:
            while True:
                try:
                    client, _ = listener.accept()
                except OSError:
                    return
                server = socket.create_connection((upstream[0], int(upstream[1])))
                threading.Thread(target=pipe, args=(client, server), daemon=True).start()
                threading.Thread(target=pipe, args=(server, client), daemon=True).start()

        threading.Thread(target=accept, daemon=True).start()
        return listener.getsockname()[1]

    def _enforcer_kubeconfig(self, server: str) -> Path:
        """The enforcer's identity: its ServiceAccount, bound to the ClusterRole its manifests give it."""
        meta = {"name": ENFORCER}
        self.api.apply({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {**meta, "namespace": ENFORCER_NAMESPACE}}, "sandbox-node")
        self.api.request("PATCH", f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{ENFORCER}?fieldManager=sandbox-node&force=true",
                         {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": meta, "rules": ENFORCER_RULES},
                         "application/apply-patch+yaml")  # fmt: skip
        binding = {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": ENFORCER},
            "subjects": [{"kind": "ServiceAccount", "name": ENFORCER, "namespace": ENFORCER_NAMESPACE}],
        }  # fmt: skip
        self.api.request("PATCH", f"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{ENFORCER}?fieldManager=sandbox-node&force=true",
                         binding, "application/apply-patch+yaml")  # fmt: skip
        request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 86400}}
        token = self.api.request("POST", f"/api/v1/namespaces/{ENFORCER_NAMESPACE}/serviceaccounts/{ENFORCER}/token", request)["status"]["token"]
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": "node",
            "clusters": [{"name": "sandbox", "cluster": {"server": server, "certificate-authority-data": base64.b64encode(self.api.ca.encode()).decode()}}],
            "users": [{"name": ENFORCER, "user": {"token": token}}],
            "contexts": [{"name": "node", "context": {"cluster": "sandbox", "user": ENFORCER}}],
        }  # fmt: skip
        path = self.directory / "kube-network-policies.kubeconfig"
        path.write_text(json.dumps(config))
        path.chmod(0o600)
        return path

    def _enforced_addresses(self) -> set[str] | None:
        """The pod IPs the enforcer queues (its nftables set), or None before it wrote its table."""
        answer = subprocess.run(
            ["ip", "netns", "exec", self.netns, "nft", "-j", "list", "set", "inet", ENFORCER, "podips-v4"], capture_output=True, text=True,
        )  # fmt: skip
        if answer.returncode != 0:
            return None
        found = set()
        for item in json.loads(answer.stdout)["nftables"]:
            for element in item.get("set", {}).get("elem", []):
                found.add(element if isinstance(element, str) else json.dumps(element))
        return found

    def wait_enforced(self, addresses: list[str], timeout: float = 30) -> None:
        """Wait until the enforcer queues the packets of every one of ``addresses`` (it has seen their pods and policies)."""
        deadline = time.monotonic() + timeout
        while not set(addresses) <= (self._enforced_addresses() or set()):
            if self.enforcer is None or self.enforcer.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"kube-network-policies does not enforce {addresses} (it has {self._enforced_addresses()}): {self.log_tail()}")
            time.sleep(0.25)

    # -- pods and hosts ----------------------------------------------------------------------------------------

    def _attach(self, address: str) -> str:
        """A network namespace whose eth0 has ``address``/32, routed by the node: the ptp plugin's layout."""
        index = len(self.namespaces)
        namespace, veth = f"hp-{os.getpid()}-{index}", f"hpv{os.getpid() % 100000}-{index}"[:15]
        _ip("netns", "add", namespace)
        self.namespaces.append(namespace)
        _ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", namespace, namespace=self.netns)
        _ip("addr", "add", f"{GATEWAY}/32", "dev", veth, namespace=self.netns)
        _ip("link", "set", veth, "up", namespace=self.netns)
        _ip("route", "add", f"{address}/32", "dev", veth, namespace=self.netns)
        _ip("link", "set", "lo", "up", namespace=namespace)
        _ip("addr", "add", f"{address}/32", "dev", "eth0", namespace=namespace)
        _ip("link", "set", "eth0", "up", namespace=namespace)
        _ip("route", "add", GATEWAY, "dev", "eth0", "scope", "link", namespace=namespace)
        _ip("route", "add", "default", "via", GATEWAY, "dev", "eth0", namespace=namespace)
        return namespace

    def add_pod(self, pod: dict) -> tuple[str, str]:
        """Create ``pod`` on this node and give it its network, as the kubelet and CNI do; (its IP, its network namespace)."""
        pod = json.loads(json.dumps(pod))
        pod["spec"]["nodeName"] = self.name
        meta = pod["metadata"]
        made = self.api.request("POST", f"/api/v1/namespaces/{meta['namespace']}/pods", pod)
        address = str(next(self.addresses))
        namespace = self._attach(address)
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        made["status"] = {
            "phase": "Running", "podIP": address, "podIPs": [{"ip": address}], "startTime": now,
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now}],
        }  # fmt: skip
        self.api.request("PUT", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status", made)
        return address, namespace

    def add_host(self, address: str) -> tuple[str, str]:
        """A machine outside the cluster at ``address`` (such as the instance metadata endpoint) that the node routes to;
        (``address``, its network namespace)."""
        return address, self._attach(address)

    def delete_pod(self, namespace: str, name: str) -> None:
        try:
            self.api.request("DELETE", f"/api/v1/namespaces/{namespace}/pods/{name}", {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})
        except KubeError as error:
            if error.status != 404:
                raise

    def exec(self, netns: str, command: list[str], **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run(["ip", "netns", "exec", netns, *command], check=True, capture_output=True, text=True, **kwargs)

    def serve(self, netns: str, tcp: int, udp: int) -> None:
        """The echo server of this module, in ``netns``, listening once this returns."""
        process = subprocess.Popen(
            ["ip", "netns", "exec", netns, sys.executable, str(POD_PROGRAM), "serve", str(tcp), str(udp)],
            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        self._programs.append(process)
        if process.stdout.readline().strip() != "listening":
            raise RuntimeError(f"the echo server in {netns} did not start")

    def probe(self, netns: str, protocol: str, address: str, port: int, timeout: float = 3) -> subprocess.Popen:
        """Start the client of this module in ``netns``; its ``communicate()[0]`` is ``open`` or ``closed``."""
        return subprocess.Popen(
            ["ip", "netns", "exec", netns, sys.executable, str(POD_PROGRAM), "probe", protocol, address, str(port), str(timeout)],
            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
        )  # fmt: skip
