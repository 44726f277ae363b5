"""A real Kubernetes control plane beside the AWS sandbox: etcd, kube-apiserver, kube-controller-manager.

The binaries are built from their Go modules by ``sandbox/kube/build.sh`` (once per machine,
cached outside the repository). :class:`KubeCluster` runs them on loopback ports with what an
EKS control plane has on: TLS with certificates made here, client-certificate authentication,
RBAC authorization and the PodSecurity admission plugin, and the controllers a team namespace
needs (namespace deletion, service accounts, persistent volume binding, garbage collection).
No kubelet runs: pods are admitted or refused by the API server and then stay Pending.

Started with ``webhook=`` (the sandbox's endpoint), it also authenticates the tokens ``aws eks get-token`` makes and
authorizes with the access entries' access policies, as EKS does, by asking the sandbox
(``sandbox/services/eks_kubernetes_webhook.py``).

Its admin kubeconfig (``system:masters``, as the cluster creator's access entry is on EKS) is what
the sandbox's EKS clusters point at: DescribeCluster returns this API server's endpoint and CA.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The controllers kube-controller-manager runs (``--controllers``): those whose work a team's
# namespace, service account and static volume need (deletion, the ``default`` service account
# pods are admitted with, binding a claim to its volume, and the protection controllers that lift
# the finalizers the StorageObjectInUseProtection admission plugin puts on claims and volumes).
# Node, pod and endpoint controllers have nothing to do without nodes.
CONTROLLERS = (
    "namespace-controller", "serviceaccount-controller", "persistentvolume-binder-controller",
    "persistentvolumeclaim-protection-controller", "persistentvolume-protection-controller",
    # Type-checks each ValidatingAdmissionPolicy against the kinds it matches (status.typeChecking), as on EKS.
    "validatingadmissionpolicy-status-controller",
)  # fmt: skip
ADMIN_USER = "kubernetes-admin"
CONTROLLER_MANAGER_USER = "system:kube-controller-manager"
# The file under the cluster's directory that holds the URL of the controller manager's metrics.
CONTROLLER_MANAGER_METRICS = "controller-manager-metrics.url"
# The audit log (``audit.log``, one JSON event per line) records every request but the controller
# manager's and the API server's own, at Metadata level: who asked, as which groups, for what, and what the server answered.
# Tests read it to prove what a playbook asked of the cluster.
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "None", "users": [CONTROLLER_MANAGER_USER, "system:apiserver"]},
        {"level": "None", "nonResourceURLs": ["/readyz", "/livez", "/healthz", "/version", "/api", "/api/*", "/apis", "/apis/*", "/openapi/*"]},
        {"level": "Metadata"},
    ],
}


def binary_dir() -> Path:
    """The directory of the built binaries: ``KUBE_BIN_DIR``, or what build.sh builds (when missing) and prints."""
    given = os.environ.get("KUBE_BIN_DIR")
    if given:
        return Path(given)
    result = subprocess.run([str(HERE / "build.sh")], check=True, stdout=subprocess.PIPE, text=True)
    return Path(result.stdout.strip().splitlines()[-1])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _write_certificates(directory: Path) -> None:
    """A CA, the API server's serving certificate, the admin's client certificate and the service-account key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)

    def key_pem(key) -> bytes:
        return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())

    def name(common: str, organization: str | None = None) -> x509.Name:
        parts = [x509.NameAttribute(NameOID.COMMON_NAME, common)]
        if organization:
            parts.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
        return x509.Name(parts)

    def certificate(subject, key, issuer, issuer_key, *, ca=False, usage=None, names=()):
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(issuer)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if ca:
            builder = builder.add_extension(
                x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
            )
        else:
            builder = builder.add_extension(x509.KeyUsage(True, False, True, False, False, False, False, False, False), critical=True)
            builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(list(names)), critical=False)
        return builder.sign(issuer_key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = name("hyperpod-sandbox-kubernetes-ca")
    (directory / "ca.crt").write_bytes(certificate(ca_name, ca_key, ca_name, ca_key, ca=True))
    server_key = ec.generate_private_key(ec.SECP256R1())
    server_names = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    server_names += [x509.DNSName(n) for n in ("kubernetes", "kubernetes.default", "kubernetes.default.svc")]
    (directory / "apiserver.key").write_bytes(key_pem(server_key))
    (directory / "apiserver.crt").write_bytes(
        certificate(name("kube-apiserver"), server_key, ca_name, ca_key, usage=ExtendedKeyUsageOID.SERVER_AUTH, names=server_names)
    )
    # The admin, and the controller manager (a user of its own, so the audit log can leave it out).
    for file_name, user in (("admin", ADMIN_USER), ("controller-manager", CONTROLLER_MANAGER_USER)):
        client_key = ec.generate_private_key(ec.SECP256R1())
        (directory / f"{file_name}.key").write_bytes(key_pem(client_key))
        (directory / f"{file_name}.crt").write_bytes(
            certificate(name(user, "system:masters"), client_key, ca_name, ca_key, usage=ExtendedKeyUsageOID.CLIENT_AUTH)
        )
    service_account_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (directory / "sa.key").write_bytes(key_pem(service_account_key))
    (directory / "sa.pub").write_bytes(
        service_account_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    for private in ("apiserver.key", "admin.key", "controller-manager.key", "sa.key"):
        (directory / private).chmod(0o600)


def write_kubeconfig(path: Path, server: str, pki: Path, cluster_name: str = "hyperpod-sandbox", user: str = "admin") -> Path:
    """A kubeconfig with the certificates inlined (``pki/<user>.crt``), so it can be copied anywhere."""

    def data(name: str) -> str:
        return base64.b64encode((pki / name).read_bytes()).decode()

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": {"server": server, "certificate-authority-data": data("ca.crt")}}],
        "users": [{"name": user, "user": {"client-certificate-data": data(f"{user}.crt"), "client-key-data": data(f"{user}.key")}}],
        "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": user}}],
        "current-context": cluster_name,
    }
    path.write_text(json.dumps(config, indent=2))
    path.chmod(0o600)
    return path


def wait_for_exit(pid: int, seconds: float) -> None:
    """Wait until process ``pid`` has exited, at most ``seconds``.

    A process that has exited stays a zombie until its parent reaps it, and answers signal 0 until then: this process
    reaps it when it is its own child (`python -m sandbox run` starts the servers and stops them by pid), and a zombie
    of another parent counts as exited. Before, each such stop waited out its whole timeout (50 s a `sandbox run`).
    """
    for _ in range(int(seconds * 10)):
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        if not _running(pid):
            return
        time.sleep(0.1)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


class KubeCluster:
    """etcd, kube-apiserver and kube-controller-manager under ``directory``, on free loopback ports."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.pki = self.directory / "pki"
        self.kubeconfig = self.directory / "kubeconfig"
        self.audit_log = self.directory / "audit.log"
        self.processes: list[subprocess.Popen] = []
        self.server = ""

    # What a DescribeCluster of an EKS cluster answers: the endpoint and the CA, base64-encoded.
    def connection(self) -> dict:
        return {"endpoint": self.server, "ca": base64.b64encode((self.pki / "ca.crt").read_bytes()).decode(), "kubeconfig": str(self.kubeconfig)}

    def audit_events(self, since: int = 0) -> list[dict]:
        """The audit log's events from line ``since`` on (``len(audit_events())`` marks a point to read from)."""
        try:
            lines = self.audit_log.read_text().splitlines()
        except OSError:
            return []
        return [json.loads(line) for line in lines[since:] if line.strip()]

    def _spawn(self, name: str, command: list[str]) -> subprocess.Popen:
        log = open(self.directory / f"{name}.log", "ab")  # noqa: SIM115 (the process owns it)
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        self.processes.append(process)
        return process

    def _log_tail(self, name: str) -> str:
        try:
            return (self.directory / f"{name}.log").read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def start(self, timeout: float = 120, webhook: str | None = None) -> KubeCluster:
        """Start the servers; ``webhook``: the endpoint of the sandbox that authenticates EKS tokens and authorizes
        with access policies for this API server (``sandbox/services/eks_kubernetes_webhook.py``), None for none.

        The sandbox need not answer yet: its socket is bound before (``sandbox/launch.py``), so the API server's
        first questions wait in its backlog, and the API server asks none while it starts (its own and the admin's
        requests are client certificates of ``system:masters``, which RBAC allows before the webhook is asked).
        """
        binaries = binary_dir()
        if self.directory.exists():
            shutil.rmtree(self.directory)
        self.pki.mkdir(parents=True)
        _write_certificates(self.pki)
        etcd_port, peer_port, api_port = _free_port(), _free_port(), _free_port()
        etcd_url = f"http://127.0.0.1:{etcd_port}"
        self.server = f"https://127.0.0.1:{api_port}"
        self._spawn("etcd", [
            str(binaries / "etcd"), "--name", "sandbox", "--data-dir", str(self.directory / "etcd"),
            "--listen-client-urls", etcd_url, "--advertise-client-urls", etcd_url,
            "--listen-peer-urls", f"http://127.0.0.1:{peer_port}", "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
            "--initial-cluster", f"sandbox=http://127.0.0.1:{peer_port}",
            # A test cluster's data need not survive a power cut; fsync would cost every write.
            "--unsafe-no-fsync", "--log-level", "warn",
        ])  # fmt: skip
        pki = self.pki
        (self.directory / "audit-policy.json").write_text(json.dumps(AUDIT_POLICY))
        self._spawn("kube-apiserver", [
            str(binaries / "kube-apiserver"), "--etcd-servers", etcd_url,
            "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", str(api_port),
            "--tls-cert-file", str(pki / "apiserver.crt"), "--tls-private-key-file", str(pki / "apiserver.key"),
            "--client-ca-file", str(pki / "ca.crt"), "--anonymous-auth=false",
            "--authorization-mode", "RBAC,Webhook" if webhook else "RBAC",
            # PodSecurity is on by default since v1.25; named so the flag says what the tests rely on.
            "--enable-admission-plugins", "NamespaceLifecycle,ServiceAccount,PodSecurity,DefaultStorageClass,ResourceQuota",
            # Privileged containers are allowed by the server, as on EKS: Pod Security is what refuses them.
            "--allow-privileged=true",
            "--service-account-issuer", "https://kubernetes.default.svc", "--api-audiences", "https://kubernetes.default.svc",
            "--service-account-key-file", str(pki / "sa.pub"), "--service-account-signing-key-file", str(pki / "sa.key"),
            "--service-cluster-ip-range", "10.100.0.0/16", "--cert-dir", str(self.directory / "certs"),
            "--audit-policy-file", str(self.directory / "audit-policy.json"), "--audit-log-path", str(self.audit_log),
            "--audit-log-format", "json", "--audit-log-mode", "blocking",
            *self._webhook_flags(webhook),
        ])  # fmt: skip
        write_kubeconfig(self.kubeconfig, self.server, pki)
        controller_kubeconfig = write_kubeconfig(self.directory / "controller-manager.kubeconfig", self.server, pki, user="controller-manager")
        self._record()
        self._wait_ready(timeout)
        metrics_port = _free_port()
        self._spawn("kube-controller-manager", [
            str(binaries / "kube-controller-manager"), "--kubeconfig", str(controller_kubeconfig),
            "--controllers", ",".join(CONTROLLERS), "--leader-elect=false",
            "--use-service-account-credentials=false", "--concurrent-namespace-syncs=5",
            # Its /metrics, read without credentials on loopback, say when no namespace deletion is under way
            # (KubeApi.wait_namespace_controller_idle); served with the API server's certificate (127.0.0.1 too).
            "--bind-address", "127.0.0.1", "--secure-port", str(metrics_port),
            "--tls-cert-file", str(pki / "apiserver.crt"), "--tls-private-key-file", str(pki / "apiserver.key"),
            "--authorization-always-allow-paths", "/healthz,/readyz,/livez,/metrics",
        ])  # fmt: skip
        (self.directory / CONTROLLER_MANAGER_METRICS).write_text(f"https://127.0.0.1:{metrics_port}/metrics")
        self._record()
        return self

    def _webhook_flags(self, webhook: str | None) -> list[str]:
        """EKS's authentication and authorization beside the certificates and RBAC, both asking the sandbox at ``webhook``.

        Client certificates are tried before bearer tokens, and a valid service-account token before the webhook, so
        neither the admin, the controllers nor pods are asked about; RBAC first, the webhook only for what RBAC does not
        allow (kube-apiserver's --authorization-mode: the first authorizer that allows decides). The authorizer's cache is
        off (a TTL of 0): an access policy disassociated holds from the next request. The API server still keeps a
        successful token review for about 10 seconds whatever the authentication TTL says (measured by issue 40's red
        team): an entry deleted stops a token that worked within those seconds (assumption: how long EKS caches is not
        documented).
        """
        if not webhook:
            return []
        from sandbox.services.eks_kubernetes_webhook import ACCESS_REVIEW_PATH, TOKEN_REVIEW_PATH

        for name, path in (("authentication", TOKEN_REVIEW_PATH), ("authorization", ACCESS_REVIEW_PATH)):
            config = {
                "apiVersion": "v1", "kind": "Config",
                "clusters": [{"name": "sandbox", "cluster": {"server": webhook.rstrip("/") + path}}],
                "users": [{"name": "kube-apiserver", "user": {}}],
                "contexts": [{"name": "webhook", "context": {"cluster": "sandbox", "user": "kube-apiserver"}}],
                "current-context": "webhook",
            }  # fmt: skip
            (self.directory / f"{name}-webhook.kubeconfig").write_text(json.dumps(config))
        return [
            "--authentication-token-webhook-config-file", str(self.directory / "authentication-webhook.kubeconfig"),
            "--authentication-token-webhook-version", "v1", "--authentication-token-webhook-cache-ttl", "0s",
            "--authorization-webhook-config-file", str(self.directory / "authorization-webhook.kubeconfig"),
            "--authorization-webhook-version", "v1",
            "--authorization-webhook-cache-authorized-ttl", "0s", "--authorization-webhook-cache-unauthorized-ttl", "0s",
        ]  # fmt: skip

    def _record(self) -> None:
        # `python -m sandbox stop` runs in another process than the one that started the servers.
        (self.directory / "pids").write_text(" ".join(str(p.pid) for p in self.processes))

    @staticmethod
    def stop_recorded(directory: Path) -> bool:
        """Stop the servers a KubeCluster started in ``directory`` from another process; whether any ran."""
        try:
            pids = [int(pid) for pid in (Path(directory) / "pids").read_text().split()]
        except (OSError, ValueError):
            return False
        running = False
        # As stop() does: each server stops before what it talks to. A kube-apiserver whose etcd went at the same
        # time hung in its graceful shutdown and outlived `python -m sandbox run`; one still there after 15 s is killed.
        for pid in reversed(pids):
            try:
                os.killpg(pid, signal.SIGTERM)
                running = True
            except OSError:
                continue
            wait_for_exit(pid, 15.0)
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        (Path(directory) / "pids").unlink(missing_ok=True)
        return running

    def _context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.pki / "ca.crt"))
        context.load_cert_chain(str(self.pki / "admin.crt"), str(self.pki / "admin.key"))
        return context

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        context = self._context()
        while True:
            for process, name in zip(self.processes, ("etcd", "kube-apiserver"), strict=True):
                if process.poll() is not None:
                    self.stop()
                    raise RuntimeError(f"{name} exited with {process.returncode}:\n{self._log_tail(name)}")
            try:
                with urllib.request.urlopen(f"{self.server}/readyz", context=context, timeout=5) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"kube-apiserver was not ready within {timeout:.0f} s:\n{self._log_tail('kube-apiserver')}")
            time.sleep(0.3)

    def stop(self) -> None:
        # The controller manager, then the API server, then etcd: each stops before what it talks to.
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.processes.clear()
        (self.directory / "pids").unlink(missing_ok=True)
