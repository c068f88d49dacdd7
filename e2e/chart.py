"""Render or install the Helm chart (deploy/topobridge) with Helm's own engine.

Helm's Go SDK is loaded from the `helm-python-sdk` wheel (libhelm_c), so rendering and
installing need no helm binary: the templates go through exactly the code `helm template` and
`helm install` run.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
CHART_DIR = REPO_ROOT / "deploy" / "topobridge"
NOTES = "NOTES.txt"


class ChartError(Exception):
    """The chart did not render or install; the message is Helm's."""


def _helm() -> Any:
    try:
        import helm_python
    except ImportError as exc:  # a test extra: say how to get it
        raise ChartError(
            f"rendering the chart needs helm-python-sdk: pip install -e '.[test]' ({exc})"
        ) from None
    return helm_python


def render_files(
    values: Mapping[str, Any] | None = None,
    *,
    release: str = "topobridge",
    namespace: str = "topobridge-system",
    chart_dir: Path = CHART_DIR,
) -> dict[str, str]:
    """Template path -> rendered text, offline (as `helm template`; `lookup` finds nothing)."""
    helm = _helm()
    try:
        with helm.Chart.load(str(chart_dir)) as chart:
            files: dict[str, str] = chart.render(
                dict(values or {}), name=release, namespace=namespace, is_install=True
            )
    except helm.HelmError as exc:
        raise ChartError(str(exc)) from None
    return files


def objects(files: Mapping[str, str]) -> list[dict[str, Any]]:
    """The Kubernetes objects of rendered templates, in template order (NOTES.txt left out)."""
    out: list[dict[str, Any]] = []
    for name in sorted(files):
        if name.endswith(NOTES):
            continue
        out.extend(doc for doc in yaml.safe_load_all(files[name]) if doc)
    return out


def render(values: Mapping[str, Any] | None = None, **kw: Any) -> list[dict[str, Any]]:
    """The chart's objects for `values`."""
    return objects(render_files(values, **kw))


def crds(chart_dir: Path = CHART_DIR) -> list[dict[str, Any]]:
    """The third-party CRDs the chart installs with `crds.install: true` (files/crds/)."""
    docs: list[dict[str, Any]] = []
    for path in sorted((chart_dir / "files" / "crds").glob("*.yaml")):
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


def to_yaml(objs: list[dict[str, Any]]) -> str:
    return "".join("---\n" + yaml.safe_dump(o, sort_keys=False) for o in objs)


def lint(
    values: Mapping[str, Any] | None = None, *, kube_version: str = "v1.20.2", chart_dir: Path = CHART_DIR
) -> dict[str, Any]:
    """`helm lint --strict --kube-version`: {"messages": [{"severity", "path", "error"}], "errors": [...]}."""
    helm = _helm()
    report: dict[str, Any] = helm.lint(
        str(chart_dir), dict(values or {}), strict=True, kube_version=kube_version
    )
    return report


def install(
    kubeconfig: str,
    *,
    release: str,
    namespace: str,
    values: Mapping[str, Any] | None = None,
    dry_run: str | None = None,
    timeout: int = 120,
) -> dict[str, Any]:
    """`helm install` of the chart (creating the namespace) against the cluster of `kubeconfig`."""
    helm = _helm()
    config = helm.Config(kubeconfig_path=kubeconfig, namespace=namespace)
    try:
        result: dict[str, Any] = config.install(
            str(CHART_DIR),
            release,
            dict(values or {}),
            namespace=namespace,
            create_namespace=True,
            dry_run=dry_run,
            timeout=timeout,
        )
    except helm.HelmError as exc:
        raise ChartError(str(exc)) from None
    finally:
        config.close()
    return result


def uninstall(kubeconfig: str, *, release: str, namespace: str) -> None:
    helm = _helm()
    config = helm.Config(kubeconfig_path=kubeconfig, namespace=namespace)
    try:
        config.uninstall(release)
    except helm.HelmError as exc:
        raise ChartError(str(exc)) from None
    finally:
        config.close()
