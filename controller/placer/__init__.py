"""The fallback gang placer and job-level preemptor: a pure engine (no Kubernetes client).

One scheduling cycle is `cycle.SchedulingCycle` (queue order, the engine per gang, reserve,
permit, a `CyclePlan`) over `cluster.ClusterState.view()` (the incrementally kept snapshot);
the live scheduler and `topobridge simulate` both run it. One attempt for one gang is
`engine.schedule(gang, snapshot, budgets=...) -> Verdict`. Modules:

* `cluster`: parsed objects plus per-node aggregates kept in step with every change; the view
  (index, snapshot, gangs, budgets) each cycle takes; the shared rules (topology tree choice,
  request vectors, the resource axis).
* `cycle`: the cycle's phases and the plan (binds, preemptions, per-gang and per-pod verdicts).
* `snapshot`: the static index (nodes in tree order, domains as node ranges, allocatable) built
  once per node-set generation, and the per-cycle state (used capacity, bound pods, nominations).
* `demand`: prefilter, the gang's pending pods as shape classes (`uniform`, `leader`, `mixed`).
* `filter`: taints, selectors, node affinity, unschedulable, as node masks, with exclusion counts.
* `offer`: offer slots per node, per domain, for the cluster (score).
* `select`: lowest fitting tier, binpack, fewest lower domains, rank layout (select).
* `preempt`, `search`, `fast`: job-level preemption (postfilter): exact search on small
  places, a vectorised heuristic on big ones.
* `engine`: the phases and the `Verdict` (Success / Unschedulable / Unresolvable / Wait).
* `scenario`: plain objects in, the cycle run to quiescence out (`topobridge simulate`).
* `oracle`: a brute-force solver for tiny clusters, to check the engine against.
"""
