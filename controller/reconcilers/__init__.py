"""Level-based reconcilers: each keeps one translation applied to the cluster.

* `lws`         LeaderWorkerSet networkTopology -> each group's Volcano PodGroup
* `koordinator` Koordinator gangs (PodGroups, annotations) -> Volcano PodGroup + pod patches
* `hypernodes`  ClusterNetworkTopology + node labels -> owned HyperNodes (+ CNT status)

They read informer caches, call the pure functions in `translations`, and write only the
difference; every verdict is reported on the source object (condition and Events).
"""
