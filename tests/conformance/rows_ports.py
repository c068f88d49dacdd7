"""NodePorts: `TestNodePorts` (PreFilter + Filter), read at kubernetes commit 008b3652.

The node's NodeInfo pod is bound to the one node; ports are written `PROTOCOL/hostIP/port` as
upstream's table writes them. A case whose PreFilter skips (no host ports) passes the node.
"""

from __future__ import annotations

from conformance.harness import Feasible, Obj, Row
from conformance.objects import container, node, pod

UPSTREAM = "pkg/scheduler/framework/plugins/nodeports/node_ports_test.go:TestNodePorts"
TAKEN = "node(s) didn't have free ports for the requested pod ports"


def ports(*specs: str) -> list[Obj]:
    out: list[Obj] = []
    for spec in specs:
        protocol, ip, port = spec.split("/")
        out.append({"containerPort": int(port), "hostPort": int(port), "hostIP": ip, "protocol": protocol})
    return out


def _with_ports(name: str, *specs: str, node_name: str | None = None) -> Obj:
    return pod(name, node_name=node_name, containers=[container(ports=ports(*specs))])


def _row(case: str, incoming: Obj, held: list[str], verdict: bool | str) -> Row:
    objects: list[Obj] = [node("node")]
    if held:
        objects.append(_with_ports("existing", *held, node_name="node"))
    return Row("NodePorts", UPSTREAM, case, objects, [incoming], Feasible({"node": verdict}))


def _init_port(sidecar: bool) -> Obj:
    init = container("init", ports=[{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}])
    if sidecar:
        init["restartPolicy"] = "Always"
    return pod("p", initContainers=[init])


ROWS = [
    _row("skip filter", pod("p"), [], True),
    _row("other port", _with_ports("p", "UDP/127.0.0.1/8080"), ["UDP/127.0.0.1/9090"], True),
    _row("same udp port", _with_ports("p", "UDP/127.0.0.1/8080"), ["UDP/127.0.0.1/8080"], TAKEN),
    _row("same tcp port", _with_ports("p", "TCP/127.0.0.1/8080"), ["TCP/127.0.0.1/8080"], TAKEN),
    _row("different host ip", _with_ports("p", "TCP/127.0.0.1/8080"), ["TCP/127.0.0.2/8080"], True),
    _row("different protocol", _with_ports("p", "UDP/127.0.0.1/8080"), ["TCP/127.0.0.1/8080"], True),
    _row(
        "second udp port conflict",
        _with_ports("p", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
        ["UDP/127.0.0.1/8080"],
        TAKEN,
    ),
    _row(
        "first tcp port conflict",
        _with_ports("p", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
        ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"],
        TAKEN,
    ),
    _row(
        "first tcp port conflict due to 0.0.0.0 hostIP",
        _with_ports("p", "TCP/0.0.0.0/8001"),
        ["TCP/127.0.0.1/8001"],
        TAKEN,
    ),
    _row(
        "TCP hostPort conflict due to 0.0.0.0 hostIP",
        _with_ports("p", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
        ["TCP/127.0.0.1/8001"],
        TAKEN,
    ),
    _row(
        "second tcp port conflict to 0.0.0.0 hostIP",
        _with_ports("p", "TCP/127.0.0.1/8001"),
        ["TCP/0.0.0.0/8001"],
        TAKEN,
    ),
    _row("second different protocol", _with_ports("p", "UDP/127.0.0.1/8001"), ["TCP/0.0.0.0/8001"], True),
    _row(
        "UDP hostPort conflict due to 0.0.0.0 hostIP",
        _with_ports("p", "UDP/127.0.0.1/8001"),
        ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"],
        TAKEN,
    ),
    _row("non-sidecar initContainer using hostPort", _init_port(False), ["TCP/0.0.0.0/8001"], True),
    _row("TCP hostPort conflict from sidecar initContainer", _init_port(True), ["TCP/0.0.0.0/8001"], TAKEN),
]
