"""A standby replica fills the fallback scheduler's cache before it leads, as kube-scheduler's
standby runs its informers: while another replica holds the lease, the standby's cache holds
the cluster's nodes and pods (kept current by the watch) and its first view is cut; once it
takes the lease, the scheduler it starts reads that cache, not a fresh one, and binds."""

from __future__ import annotations

from typing import Any

import pytest
from controller_helpers import create_node, eventually, running

from controller.informer import SharedInformers
from controller.kube import JsonDict, Kube, KubeSettings
from controller.leaderelection import LeaderElectionConfig, micro_time
from controller.manager import ControllerOptions, Manager
from controller.resources import LEASES, NODES, PODS

pytestmark = pytest.mark.integration

LEASE = "warm-standby"
NODE = "warm-standby-node"


def pod(name: str, namespace: str) -> JsonDict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "schedulerName": "topobridge",
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
        },
    }


async def test_a_standby_fills_the_schedulers_cache_and_leads_from_it(
    control_plane: Any, admin: Kube, controller_user: str, namespace: str
) -> None:
    await create_node(admin, NODE)
    now = micro_time()
    lease = {"holderIdentity": "another-replica", "leaseDurationSeconds": 3600}
    await admin.create(
        LEASES,
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": LEASE, "namespace": namespace},
            "spec": {**lease, "acquireTime": now, "renewTime": now},
        },
        namespace=namespace,
    )
    options = ControllerOptions(
        reconcile_lws=False,
        reconcile_hypernodes=False,
        # Long enough that the other holder's lease never expires while the test looks.
        leader_election=LeaderElectionConfig(
            lease_name=LEASE,
            lease_namespace=namespace,
            lease_duration=600,
            renew_deadline=10,
            retry_period=0.5,
        ),
    )
    kube = await Kube.connect(
        kubeconfig=control_plane.kubeconfig, settings=KubeSettings(impersonate=controller_user)
    )
    informers = SharedInformers(kube, resync_period=None)
    manager = Manager(kube, options, informers=informers)
    try:
        async with running(informers.run(), "informers"), running(manager.run(), "replica"):

            async def warm() -> bool:
                w = manager.warm
                return w is not None and w.prepared and NODE in w.cache.nodes.items

            await eventually(warm, timeout=30, what="the standby's cache synced and viewed")
            assert manager.warm is not None
            await admin.create(PODS, pod("after-sync", namespace), namespace=namespace)
            cache = manager.warm.cache

            async def watched() -> bool:
                return f"{namespace}/after-sync" in cache.pods.items

            await eventually(watched, timeout=30, what="the standby's watch delivering a new pod")
            assert manager.scope is None, "the standby led while another replica held the lease"
            assert (await admin.get(PODS, "after-sync", namespace=namespace))["spec"].get("nodeName") is None

            await admin.merge_patch(LEASES, LEASE, {"spec": {"holderIdentity": ""}}, namespace=namespace)

            async def bound() -> bool:
                got = await admin.get(PODS, "after-sync", namespace=namespace)
                return bool(got["spec"].get("nodeName") == NODE)

            await eventually(bound, timeout=30, what="the new leader binding the pod")
            assert manager.scope is not None and manager.scope.scheduler is not None
            assert manager.scope.scheduler.cache is cache
    finally:
        await kube.close()
        await admin.delete(NODES, NODE)
