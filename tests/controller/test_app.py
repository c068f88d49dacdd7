"""The assembled process (`topobridge.app`) against the real API server: webhook and leader
share one set of informers, so every resource is watched exactly once."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any, ClassVar

import pytest
from controller_helpers import eventually

from controller.aiotasks import run_roots
from controller.informer import SharedInformers
from controller.kube import Kube, KubeSettings, WatchEvent
from controller.leaderelection import LeaderElectionConfig
from controller.manager import ControllerOptions
from controller.resources import (
    CLUSTER_NETWORK_TOPOLOGIES,
    HYPERNODES,
    JOBS,
    LEADERWORKERSETS,
    NAMESPACES,
    NODES,
    PDBS_V1BETA1,
    PODS,
    PRIORITY_CLASSES,
    SIGS_PODGROUPS,
    VOLCANO_PODGROUPS,
    X_PODGROUPS,
    Resource,
)
from topobridge.app import WEBHOOK_STATE, ProcessConfig, build_roots, feed_webhook_state
from webhooks.server import ServerSettings
from webhooks.state import InMemoryStateSource

pytestmark = pytest.mark.integration

LEADER_WATCHES = {
    str(r)
    for r in (
        PODS,
        NODES,
        PRIORITY_CLASSES,
        PDBS_V1BETA1,  # Kubernetes 1.20 serves policy/v1beta1 only
        VOLCANO_PODGROUPS,
        SIGS_PODGROUPS,
        X_PODGROUPS,
        HYPERNODES,
        CLUSTER_NETWORK_TOPOLOGIES,
        LEADERWORKERSETS,
        JOBS,  # Indexed Jobs of the GPU dialect: a gang's size and ranks
        NAMESPACES,  # their labels, for pod affinity's namespaceSelector
    )
}


class CountingKube(Kube):
    """The real client, counting per resource the watch requests it opens and the most watch
    streams open at once (an informer re-watches after a 410 Gone: that is one watch again,
    a second informer would be two at once)."""

    watches: ClassVar[Counter[str]] = Counter()
    open_now: ClassVar[Counter[str]] = Counter()
    most_open: ClassVar[Counter[str]] = Counter()

    async def watch(self, res: Resource, **kw: Any) -> AsyncIterator[WatchEvent]:
        name = str(res)
        CountingKube.watches[name] += 1
        CountingKube.open_now[name] += 1
        CountingKube.most_open[name] = max(CountingKube.most_open[name], CountingKube.open_now[name])
        try:
            async for event in super().watch(res, **kw):
                yield event
        finally:
            CountingKube.open_now[name] -= 1


async def test_leader_watches_each_resource_once(
    control_plane: Any, controller_user: str, namespace: str
) -> None:
    for counter in (CountingKube.watches, CountingKube.open_now, CountingKube.most_open):
        counter.clear()
    config = ProcessConfig(
        kube=KubeSettings(impersonate=controller_user),
        kubeconfig=control_plane.kubeconfig,
        controller=ControllerOptions(
            translate_koordinator=True,
            leader_election=LeaderElectionConfig(lease_name="app-test", lease_namespace=namespace),
        ),
        webhook=ServerSettings(host="127.0.0.1", port=0, metrics_host="127.0.0.1", metrics_port=0),
    )
    kube = await CountingKube.connect(kubeconfig=control_plane.kubeconfig, settings=config.kube)
    informers = SharedInformers(kube, resync_period=300.0)
    stop: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    roots = build_roots(config, kube, informers=informers)
    assert sorted(roots) == ["controller", "informers", "webhook"]
    process = asyncio.ensure_future(run_roots(roots, stop=stop, grace=10.0))
    try:

        async def everything_watched() -> bool:
            assert not process.done(), process.exception()
            watched = {str(r) for r in informers.resources()}
            return (
                watched == LEADER_WATCHES
                and informers.synced(informers.resources())
                and (set(CountingKube.watches) == LEADER_WATCHES)
            )

        await eventually(everything_watched, timeout=30, what="the leader's informers to sync and watch")
        await asyncio.sleep(1.0)  # a second watch of anything would have been opened by now
        print(f"watch requests by resource: {dict(sorted(CountingKube.watches.items()))}")
        assert {str(r) for r in WEBHOOK_STATE} | {str(LEADERWORKERSETS)} <= LEADER_WATCHES
        assert dict(CountingKube.most_open) == dict.fromkeys(LEADER_WATCHES, 1)
        assert dict(CountingKube.open_now) == dict.fromkeys(LEADER_WATCHES, 1)
        assert len(informers.resources()) == len(LEADER_WATCHES) == 12
    finally:
        stop.set_result(None)
        await process
        await kube.close()


async def test_webhook_view_syncs_without_an_uninstalled_crd(control_plane: Any) -> None:
    """A PodGroup kind whose CRD is not installed is left out of the webhook's view, which
    still syncs; those the cluster serves are read."""
    absent = Resource("absent.topobridge.test", "v1alpha1", "podgroups", "PodGroup", True)
    kube = await Kube.connect(kubeconfig=control_plane.kubeconfig)
    informers = SharedInformers(kube, resync_period=None)
    state = InMemoryStateSource()
    running = asyncio.ensure_future(informers.run(grace=5.0))
    try:
        assert await kube.serves(SIGS_PODGROUPS) and not await kube.serves(absent)
        await asyncio.wait_for(feed_webhook_state(informers, state, if_served=(absent, SIGS_PODGROUPS)), 30)
        assert state.synced
        watched = set(informers.resources())
        assert SIGS_PODGROUPS in watched and absent not in watched
        assert set(WEBHOOK_STATE) <= watched
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        await kube.close()
