"""The controller loads kubernetes_asyncio's transport without its generated API and model
modules, and everything the whole package offers still resolves on first use.

Each case runs in a fresh interpreter: the test process itself has the whole package loaded.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_fresh(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_no_product_module_loads_the_generated_client() -> None:
    out = run_fresh(
        """
        import importlib, pkgutil, sys
        for package in ("controller", "topobridge", "webhooks", "translations"):
            root = importlib.import_module(package)
            for info in pkgutil.walk_packages(root.__path__, package + "."):
                if info.name != "topobridge.devcluster":  # a dev tool; it uses the typed APIs
                    importlib.import_module(info.name)
        loaded = sorted(m for m in sys.modules if m.startswith("kubernetes_asyncio"))
        print(len(loaded))
        print(*loaded)
        """
    )
    count, names = out.splitlines()
    loaded = names.split()
    assert "kubernetes_asyncio.client.api_client" in loaded
    assert not [
        m
        for m in loaded
        if m.startswith(("kubernetes_asyncio.client.models.", "kubernetes_asyncio.client.api."))
    ]
    assert int(count) < 40, loaded


def test_the_whole_package_still_resolves_on_first_use() -> None:
    out = run_fresh(
        """
        import sys
        from controller.kubeclient import ApiClient, ApiException, Configuration
        from kubernetes_asyncio.client import CoreV1Api, V1Pod
        import kubernetes_asyncio
        import kubernetes_asyncio.client.api_client as transport
        import kubernetes_asyncio.client.models as models
        from kubernetes_asyncio import watch
        from kubernetes_asyncio.dynamic import DynamicClient
        from kubernetes_asyncio.utils import create_from_yaml
        import kubernetes_asyncio.stream
        assert ApiClient is transport.ApiClient is kubernetes_asyncio.client.ApiClient
        assert models.V1Pod is V1Pod
        assert CoreV1Api.__module__ == "kubernetes_asyncio.client.api.core_v1_api"
        assert ApiException is kubernetes_asyncio.client.exceptions.ApiException
        print(kubernetes_asyncio.__version__, watch.Watch.__name__)
        try:
            kubernetes_asyncio.client.NoSuchThing
        except AttributeError as exc:
            print(exc)
        """
    )
    version, missing = out.splitlines()
    assert version.split()[1] == "Watch" and version.split()[0][0].isdigit()
    assert missing == "module 'kubernetes_asyncio.client' has no attribute 'NoSuchThing'"


def test_a_package_loaded_whole_before_is_left_as_it_is() -> None:
    out = run_fresh(
        """
        import sys
        import kubernetes_asyncio.client as whole
        from controller.kubeclient import ApiClient
        assert sys.modules["kubernetes_asyncio.client"] is whole
        assert "__getattr__" not in vars(whole)
        print(ApiClient is whole.ApiClient)
        """
    )
    assert out.strip() == "True"
