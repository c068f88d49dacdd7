"""One scheduling cycle's inputs, built from the cache: topology tree, static index, snapshot,
gangs and disruption budgets.

* Tree: the HyperNodes (what Volcano would use) when any exist that topobridge did not
  translate from the ClusterNetworkTopology; else the ClusterNetworkTopology `default` over
  node labels (its domain names are what Koordinator's messages use); else none.
* Index: rebuilt only when the cache's topology generation moves.
* Snapshot: every non-terminal pod on a known node uses its node's room (whatever its
  scheduler), pods assumed bound count on their assumed node, pods being deleted are marked
  terminating; pending pods' `status.nominatedNodeName` become nominations.
* Gangs: `translations.gangs.discover_gangs` over every non-terminal pod, so a bound pod's
  gang (and its minMember) is known to preemption.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import structlog

from controller.placer.preempt import Budget, budgets_from
from controller.placer.snapshot import I64, BoundPod, ClusterIndex, Nomination, Snapshot
from controller.placer.terms import PodTerms
from controller.runtime.cache import ClusterCache
from translations import gpu, volcano
from translations import hypernodes as hntr
from translations import koordinator as koord
from translations.errors import InvalidSpecError
from translations.gangs import Gang, PodGroups, discover_gangs
from translations.topology import TopologyTree, from_cluster_network_topology, from_hypernodes, natural_key

log = structlog.get_logger(__name__)


@dataclass
class View:
    tree: TopologyTree
    index: ClusterIndex
    snapshot: Snapshot
    gangs: list[Gang]
    gang_of: dict[str, str]
    """pod key -> gang key, for every non-terminal pod."""
    budgets: list[Budget]


class ViewBuilder:
    """Builds views, keeping the tree and index while the topology generation stands still."""

    def __init__(self, cache: ClusterCache, *, nvlink_label: str = gpu.NVLINK_LABEL) -> None:
        self.cache = cache
        self.nvlink_label = nvlink_label
        self._index_gen = -1
        self._tree = TopologyTree.empty()
        self._index: ClusterIndex | None = None

    def topology(self) -> tuple[TopologyTree, ClusterIndex, koord.ClusterNetworkTopology | None]:
        cache = self.cache
        cnt = cache.cnts.items.get(koord.CNT_DEFAULT_NAME)
        if self._index is None or self._index_gen != cache.topology_generation:
            nodes = sorted(cache.nodes.items.values(), key=lambda n: natural_key(n.name))
            foreign = [h for h in cache.hypernodes.items.values() if not _translated_from_cnt(h)]
            if foreign or (cache.hypernodes.items and cnt is None):
                tree = from_hypernodes(cache.hypernodes.items.values(), nodes)
            elif cnt is not None:
                try:
                    tree = from_cluster_network_topology(cnt, nodes)
                except InvalidSpecError as exc:
                    log.warning("scheduler.topology_unusable", error=str(exc))
                    tree = TopologyTree.empty()
            else:
                tree = TopologyTree.empty()
            self._tree = tree
            self._index = ClusterIndex.build(nodes, tree)
            self._index_gen = cache.topology_generation
        return self._tree, self._index, cnt

    def build(self) -> View:
        cache = self.cache
        tree, index, cnt = self.topology()
        # A pod sent to bind is bound as far as anyone planning is concerned (kube-scheduler's
        # assume): its gang must not see it as pending and place it a second time.
        live = [
            p
            if (node := cache.assumed.get(key)) is None or p.spec.node_name
            else p.model_copy(update={"spec": p.spec.model_copy(update={"node_name": node})})
            for key, p in cache.pods.items.items()
            if not p.terminal
        ]
        gangs = discover_gangs(
            live,
            podgroups=PodGroups(
                volcano=list(cache.volcano_pgs.items.values()),
                koordinator=list(cache.sigs_pgs.items.values()),
                scheduler_plugins=list(cache.x_pgs.items.values()),
                jobs=list(cache.jobs.items.values()),
            ),
            priority_classes=cache.priority_classes.items.values(),
            tree=tree,
            cnt=cnt,
            nvlink_label=self.nvlink_label,
        )
        gang_of: dict[str, str] = {}
        for g in gangs:
            for m in g.pods:
                gang_of[m.key] = g.key
        bound: list[BoundPod] = []
        nominations: list[Nomination] = []
        gang_min: dict[str, int] = {}
        for g in gangs:
            has_bound = False
            for m in g.pods:
                node = m.node_name
                if node:
                    pos = index.node_pos.get(node)
                    if pos is None:
                        continue  # on a node we do not know (deleted): holds nothing we schedule on
                    has_bound = True
                    bound.append(
                        BoundPod(
                            key=m.key,
                            namespace=m.pod.namespace,
                            node=pos,
                            req=_vector(index, m.requests),
                            priority=m.priority,
                            gang=g.key,
                            labels=dict(m.pod.metadata.labels or {}),
                            terminating=bool(m.pod.metadata.deletion_timestamp),
                            terms=PodTerms.of(m.pod),
                        )
                    )
                elif m.pod.status is not None and m.pod.status.nominated_node_name:
                    pos = index.node_pos.get(m.pod.status.nominated_node_name)
                    if pos is not None:
                        nominations.append(
                            Nomination(m.key, g.key, pos, _vector(index, m.requests), m.priority)
                        )
            if has_bound:
                gang_min[g.key] = g.min_member
        snap = Snapshot.build(index, bound, gang_min)
        for nom in nominations:
            snap.nominate(nom)
        budgets = budgets_from(list(cache.pdbs.items.values()), snap)
        return View(tree, index, snap, gangs, gang_of, budgets)


def _translated_from_cnt(hn: volcano.HyperNode) -> bool:
    labels = hn.metadata.labels or {}
    return (
        labels.get(hntr.MANAGED_BY_LABEL) == hntr.MANAGED_BY
        and labels.get(hntr.SOURCE_LABEL) == "koordinator"
    )


def _vector(index: ClusterIndex, requests: Mapping[str, int]) -> I64:
    """A request over the index's resource axis; resources no node has are dropped (they
    cannot consume room we schedule with)."""
    out = np.zeros(len(index.resources), dtype=np.int64)
    for name, v in requests.items():
        pos = index.res_pos.get(name)
        if pos is not None and v > 0:
            out[pos] = v
    return out


def ordered(gangs: Iterable[Gang]) -> list[Gang]:
    """Scheduling order: higher priority first, then older, then by key."""
    return sorted(gangs, key=lambda g: (-g.priority, g.creation or "", natural_key(g.key)))
