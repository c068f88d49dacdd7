"""The Python half of e2e/run-kind.sh: what the shell script cannot do with kubectl alone.

    python -m e2e.kindsuite manifests            every manifest of ours the run applies (--dry-run shows it)
    python -m e2e.kindsuite lws-crd-patch        the JSON patch adding spec.networkTopology to LWS's CRD
    python -m e2e.kindsuite install-volcano      Volcano's Helm chart, pinned, from its chart repository
    python -m e2e.kindsuite uninstall-volcano    Volcano removed (its CRDs with it, when its chart owns them)
    python -m e2e.kindsuite install-topobridge   deploy/topobridge with e2e/kind/values.yaml
    python -m e2e.kindsuite scenarios --target kind-volcano|kind-fallback

Helm runs in-process through helm-python-sdk (Helm's own Go engine), so the suite needs no
helm binary: Docker, kind and kubectl are the only tools it needs besides this checkout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from controller.kube import JsonDict, Kube
from e2e import chart
from e2e.scenario import TARGETS, ScenarioRunner, Target, adapt, all_scenarios

KIND_DIR = Path(__file__).resolve().parent / "kind"
VALUES = KIND_DIR / "values.yaml"
NAMESPACE = "topobridge-system"
RELEASE = "topobridge"
VOLCANO_REPO = "https://volcano-sh.github.io/helm-charts"
KIND_TARGETS = ("kind-volcano", "kind-fallback")
BEGIN, END = "# ==== manifests ====", "# ==== end of manifests ===="


def kind_values() -> dict[str, Any]:
    values: dict[str, Any] = yaml.safe_load(VALUES.read_text())
    return values


def scenario_objects(target: Target) -> list[tuple[str, JsonDict]]:
    """What the scenarios create on a kind target, as they create it (nodes, topology, objects)."""
    out: list[tuple[str, JsonDict]] = []
    seen_clusters: set[str] = set()
    for spec in all_scenarios():
        if target.name not in spec.targets:
            continue
        cluster = spec.cluster_spec()
        if cluster.name not in seen_clusters:
            seen_clusters.add(cluster.name)
            where = f"e2e/scenarios/clusters/{cluster.name}.yaml ({target.name})"
            for node in cluster.node_objects(
                annotations=target.node_annotations, taints=target.node_taints, labels=target.node_labels
            ):
                out.append((where, node))
            cnt = cluster.cluster_network_topology()
            if cnt is not None:
                out.append((where, cnt))
        namespace = f"e2e-{spec.name}"
        out.append(
            (
                f"e2e/scenarios/{spec.name}.yaml",
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
            )
        )
        for step in spec.steps:
            for obj in step.apply:
                adapted = adapt(obj, target)
                if adapted["kind"] != "PriorityClass":
                    adapted["metadata"] = {**adapted.get("metadata", {}), "namespace": namespace}
                out.append((f"e2e/scenarios/{spec.name}.yaml ({target.name}, step: {step.name})", adapted))
    return out


def manifests() -> list[tuple[str, JsonDict]]:
    """(source, object) for every Kubernetes object of ours the kind run applies."""
    out: list[tuple[str, JsonDict]] = []
    for path in ("volcano-scheduler.yaml", "lws-volcano.yaml"):
        out += [(f"e2e/kind/{path}", d) for d in yaml.safe_load_all((KIND_DIR / path).read_text()) if d]
    out += [("deploy/topobridge/files/crds", d) for d in chart.crds()]
    files = chart.render_files(kind_values(), release=RELEASE, namespace=NAMESPACE)
    for name in sorted(files):
        if not name.endswith(chart.NOTES):
            out += [(name, d) for d in yaml.safe_load_all(files[name]) if d]
    seen: set[str] = set()
    for target in KIND_TARGETS:
        for source, obj in scenario_objects(TARGETS[target]):
            key = json.dumps(obj, sort_keys=True)
            if key not in seen:  # both phases create the same nodes and most of the same objects
                seen.add(key)
                out.append((source, obj))
    return out


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (configuration files inside ConfigMaps) as literal blocks."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def print_manifests(out: Any = sys.stdout) -> None:
    out.write(BEGIN + "\n")
    for source, obj in manifests():
        out.write(f"---\n# Source: {source}\n")
        out.write(yaml.dump(obj, Dumper=_Dumper, sort_keys=False, width=120))
    out.write(END + "\n")


def lws_crd_patch() -> list[JsonDict]:
    """JSON patch adding topobridge's `spec.networkTopology` schema to the upstream LWS CRD, which
    lacks it (the API server would prune the field)."""
    crd = next(c for c in chart.crds() if c["spec"]["names"]["kind"] == "LeaderWorkerSet")
    version = next(v for v in crd["spec"]["versions"] if v.get("storage"))
    field = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["networkTopology"]
    return [
        {
            "op": "add",
            "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/networkTopology",
            "value": field,
        }
    ]


def install_volcano(kubeconfig: str, version: str) -> None:
    import helm_python as helm

    config = helm.Config(kubeconfig_path=kubeconfig, namespace="volcano-system")
    try:
        result = config.install(
            "volcano",
            "volcano",
            {},
            namespace="volcano-system",
            create_namespace=True,
            chart_repo_url=VOLCANO_REPO,
            chart_version=version,
            wait="watcher",
            timeout=600,
        )
    finally:
        config.close()
    print(f"volcano {result.get('chart_version')} installed: {result.get('status')}")


def uninstall_volcano(kubeconfig: str) -> None:
    import helm_python as helm

    config = helm.Config(kubeconfig_path=kubeconfig, namespace="volcano-system")
    try:
        config.uninstall("volcano")
    finally:
        config.close()
    print("volcano uninstalled")


def install_topobridge(kubeconfig: str) -> None:
    result = chart.install(
        kubeconfig, release=RELEASE, namespace=NAMESPACE, values=kind_values(), timeout=300
    )
    print(f"topobridge {result.get('app_version')} installed in {NAMESPACE}: {result.get('status')}")


async def run_scenarios(kubeconfig: str, target_name: str, names: Sequence[str]) -> int:
    target = TARGETS[target_name]
    failed = 0
    async with await Kube.connect(kubeconfig=kubeconfig) as kube:
        runner = ScenarioRunner(kube, target, poll=1.0)
        for spec in all_scenarios():
            if target.name not in spec.targets or (names and spec.name not in names):
                continue
            result = await runner.run(spec)
            print(result.report(), flush=True)
            failed += not result.ok
    print(f"{target.name}: {failed} scenario(s) failed" if failed else f"{target.name}: all scenarios passed")
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m e2e.kindsuite", description=__doc__.split("\n\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("manifests")
    sub.add_parser("lws-crd-patch")
    volcano = sub.add_parser("install-volcano")
    volcano.add_argument("--kubeconfig", required=True)
    volcano.add_argument("--version", required=True)
    gone = sub.add_parser("uninstall-volcano")
    gone.add_argument("--kubeconfig", required=True)
    tb = sub.add_parser("install-topobridge")
    tb.add_argument("--kubeconfig", required=True)
    sc = sub.add_parser("scenarios")
    sc.add_argument("--kubeconfig", required=True)
    sc.add_argument("--target", required=True, choices=KIND_TARGETS)
    sc.add_argument("names", nargs="*", help="scenario names (default: every one for the target)")
    args = parser.parse_args(argv)
    from topobridge import logs

    logs.configure(level="warning", json_output=False)
    if args.command == "manifests":
        print_manifests()
    elif args.command == "lws-crd-patch":
        print(json.dumps(lws_crd_patch()))
    elif args.command == "install-volcano":
        install_volcano(args.kubeconfig, args.version)
    elif args.command == "uninstall-volcano":
        uninstall_volcano(args.kubeconfig)
    elif args.command == "install-topobridge":
        install_topobridge(args.kubeconfig)
    else:
        return asyncio.run(run_scenarios(args.kubeconfig, args.target, args.names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
