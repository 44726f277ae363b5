"""The Grafana HTTP API stub (targets/role_observability/files/grafana_stub.py) run beside a test's playbooks."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

STUB = Path(__file__).parent / "targets" / "role_observability" / "files" / "grafana_stub.py"
# The stub's service-account token: the identity (sa-hyperpod-tenancy) the roles sign in as.
TOKEN = "stub-admin-token"


class GrafanaStub:
    """The stub on 127.0.0.1 for one test: its URL and token for the playbooks, its log, state and faults for the test."""

    def __init__(self, workdir: Path, lifetime: float = 1800, token: str = TOKEN) -> None:
        port_file = workdir / "grafana-stub.port"
        self.process = subprocess.Popen(
            [sys.executable, str(STUB), "--port-file", str(port_file), "--token", token, "--lifetime", str(lifetime)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while not port_file.exists():
            assert self.process.poll() is None and time.monotonic() < deadline, "the Grafana stub did not start"
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{port_file.read_text()}"
        self.token = token

    def _call(self, method: str, path: str, payload: dict | None = None):
        data = json.dumps(payload).encode() if payload is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())

    def requests(self) -> list[dict]:
        return self._call("GET", "/_stub/requests")["requests"]

    def clear_requests(self) -> None:
        self._call("DELETE", "/_stub/requests")

    def writes(self) -> list[str]:
        """The requests but GETs, in order, each as ``"<METHOD> <path>"``."""
        return [f"{r['method']} {r['path']}" for r in self.requests() if r["method"] != "GET"]

    def state(self) -> dict:
        return self._call("GET", "/_stub/state")

    def set_faults(self, **faults) -> dict:
        return self._call("PUT", "/_stub/faults", faults)

    def clear_faults(self) -> dict:
        return self._call("PUT", "/_stub/faults", {})

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                self._call("POST", "/_stub/shutdown")
                self.process.wait(timeout=10)
            except OSError:
                pass
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
