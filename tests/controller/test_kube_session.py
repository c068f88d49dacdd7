"""The client's aiohttp session skips the per-request ~/.netrc and proxy-variable lookups
(two worker-thread hops each) unless a proxy variable is set."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.kube import PROXY_VARIABLES, Kube

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


@pytest.fixture
def kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    return str(path)


async def test_no_environment_lookups_without_a_proxy(kubeconfig: str) -> None:
    kube = await Kube.connect(kubeconfig=kubeconfig)
    try:
        assert kube.api.rest_client.pool_manager.trust_env is False
    finally:
        await kube.close()


async def test_a_proxy_variable_keeps_them(kubeconfig: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    kube = await Kube.connect(kubeconfig=kubeconfig)
    try:
        assert kube.api.rest_client.pool_manager.trust_env is True
    finally:
        await kube.close()
