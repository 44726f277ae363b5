"""A small client for the sandbox's administrative endpoints, for tests, benchmarks and the CLI."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path

DEFAULT_PORT = 5055
# What `python -m sandbox start` records in its state directory: where its sandbox answers, and the id it answers with.
ENDPOINT_FILE_NAME = "endpoint"
INSTANCE_FILE_NAME = "instance"
SANDBOX_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "sandbox",
    # Distinctive: Ansible masks no_log values wherever they appear, so a secret that is
    # also an ordinary word ("sandbox") would be masked inside paths and names too.
    "AWS_SECRET_ACCESS_KEY": "hyperpod-sandbox-secret-0123456789",
    "AWS_DEFAULT_REGION": "us-east-1",
}


class SandboxError(Exception):
    """An administrative call the sandbox refused or failed, with what the sandbox said (its traceback on a 500)."""


class NotThisSandbox(SandboxError):
    """Another sandbox answers at the endpoint: what it holds is someone else's state, not to be seeded, reset or used."""


class SandboxClient:
    def __init__(self, endpoint: str | None = None, instance: str | None = None) -> None:
        if endpoint is None:
            # `python -m sandbox run` gives the command it runs both.
            endpoint = os.environ.get("HYPERPOD_SANDBOX_URL")
            instance = instance or os.environ.get("HYPERPOD_SANDBOX_INSTANCE")
        self.endpoint = (endpoint or f"http://127.0.0.1:{DEFAULT_PORT}").rstrip("/")
        # The id the sandbox answers its health check with (sandbox/launch.py): only that sandbox is this one.
        # None takes whichever sandbox answers at the endpoint.
        self.instance = instance or None

    @classmethod
    def recorded_in(cls, state_dir: Path) -> SandboxClient:
        """The sandbox `python -m sandbox start` recorded in ``state_dir``: a client that takes no other sandbox for it."""
        return cls((state_dir / ENDPOINT_FILE_NAME).read_text().strip(), (state_dir / INSTANCE_FILE_NAME).read_text().strip())

    def _call(self, method: str, path: str, payload: dict | None = None, timeout: float = 10) -> dict:
        data = json.dumps(payload).encode() if payload is not None else None
        request = urllib.request.Request(self.endpoint + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            raise SandboxError(f"{method} {path}: {error.code} {error.read().decode(errors='replace')}") from None

    def verify(self) -> None:
        """Raise unless this sandbox answers at the endpoint: NotThisSandbox, naming both ids, when another one does;
        OSError when none does."""
        answer = self._call("GET", "/_sandbox/health")
        if answer.get("status") != "ok":
            raise SandboxError(f"the sandbox at {self.endpoint} is not healthy: {answer}")
        if self.instance is not None and answer.get("instance") != self.instance:
            raise NotThisSandbox(
                f"the sandbox at {self.endpoint} is instance {answer.get('instance')}, not {self.instance}: "
                "another sandbox holds the endpoint this one recorded"
            )

    def healthy(self) -> bool:
        """Whether this sandbox answers at the endpoint (another sandbox answering there is not this one healthy)."""
        try:
            self.verify()
        except (OSError, SandboxError):
            return False
        return True

    def requests(self) -> list[dict]:
        return self._call("GET", "/_sandbox/requests")["requests"]

    def clear_requests(self) -> None:
        self._call("DELETE", "/_sandbox/requests")

    def writes(self) -> list[dict]:
        return [r for r in self.requests() if r["kind"] == "write"]

    def counts(self) -> Counter:
        """Calls per (service, operation, kind)."""
        return Counter((r["service"], r["operation"], r["kind"]) for r in self.requests())

    def set_faults(self, **faults) -> dict:
        return self._call("PUT", "/_sandbox/faults", faults)

    def clear_faults(self) -> dict:
        return self._call("PUT", "/_sandbox/faults", {})

    def configure(self, **settings) -> dict:
        return self._call("PUT", "/_sandbox/config", settings)

    def set_upstreams(self, **upstreams) -> dict:
        """The real servers the sandbox forwards to, e.g. ``prometheus="http://127.0.0.1:9090"``."""
        return self._call("PUT", "/_sandbox/upstreams", upstreams)

    def reset(self) -> None:
        # The reset waits until the Kubernetes namespaces it deletes are gone (seconds each, in parallel).
        self._call("POST", "/_sandbox/reset", timeout=180)

    def access_entry_works(self, cluster: str, principal_arn: str, region: str = "us-east-1") -> bool:
        """Whether the EKS access entry of ``principal_arn`` still maps the principal (not once its role was deleted and made again)."""
        query = urllib.parse.urlencode({"cluster": cluster, "principal": principal_arn, "region": region})
        return self._call("GET", "/_sandbox/access-entry-works?" + query)["works"]

    def kubeconfig(self) -> str:
        """The admin kubeconfig of the Kubernetes API server the sandbox's EKS clusters point at ('' without one)."""
        return self._call("GET", "/_sandbox/kubernetes").get("kubeconfig", "")

    def boto3_client(self, service: str, region: str = "us-east-1", credentials: dict | None = None, read_timeout: float = 60):
        """A client of the sandbox signed with its admin keys, or with ``credentials`` (an STS answer's
        ``AccessKeyId``, ``SecretAccessKey`` and ``SessionToken``: requests the sandbox authorizes);
        ``read_timeout`` is botocore's, 60 s unless a test wants an answer sooner."""
        import boto3
        from botocore.config import Config

        credentials = credentials or {
            "AccessKeyId": SANDBOX_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            "SecretAccessKey": SANDBOX_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        }
        return boto3.client(
            service,
            region_name=region,
            endpoint_url=self.endpoint,
            aws_access_key_id=credentials["AccessKeyId"],
            aws_secret_access_key=credentials["SecretAccessKey"],
            aws_session_token=credentials.get("SessionToken"),
            # One attempt: tests see every answer, and retries are the code under test's job.
            config=Config(retries={"mode": "standard", "total_max_attempts": 1}, read_timeout=read_timeout),
        )
