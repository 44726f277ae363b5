"""``python -m sandbox.kube.pod_identity_agent``, the step of ``make demo`` after site.yml, fails when it has nothing to show."""

from __future__ import annotations

import pytest

from sandbox.kube import pod_identity_agent


@pytest.mark.parametrize("kubeconfig", [None, "/nonexistent/kube/kubeconfig"], ids=["unset", "missing"])
def test_without_an_api_server_the_demo_fails_saying_why(monkeypatch, capsys, kubeconfig):
    if kubeconfig is None:
        monkeypatch.delenv("K8S_AUTH_KUBECONFIG", raising=False)
    else:
        monkeypatch.setenv("K8S_AUTH_KUBECONFIG", kubeconfig)
    assert pod_identity_agent.main() == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "pod_identity_agent: no Kubernetes API server" in captured.err and "SANDBOX_KUBERNETES=off" in captured.err
    assert ("K8S_AUTH_KUBECONFIG is not set" if kubeconfig is None else f"{kubeconfig} does not exist") in captured.err


def test_without_an_association_the_demo_fails_saying_why(sandbox, kube_cluster, monkeypatch, capsys):
    monkeypatch.setenv("K8S_AUTH_KUBECONFIG", str(kube_cluster.kubeconfig))
    monkeypatch.setenv("HYPERPOD_SANDBOX_URL", sandbox.endpoint)
    assert pod_identity_agent.main() == 2
    assert "no Pod Identity association in the sandbox's EKS clusters" in capsys.readouterr().err
