"""The fallback gang placer and job-level preemptor: a pure engine (no Kubernetes client).

One attempt for one gang is `engine.schedule(gang, snapshot, budgets=...) -> Verdict`, in
kube-scheduler's phases; the caller applies the verdict. Modules, in the order an attempt uses them:

* `snapshot`: the static index (nodes in tree order, domains as node ranges, allocatable) built
  once per node-set generation, and the per-cycle state (used capacity, bound pods, nominations).
* `demand`: prefilter, the gang's pending pods as shape classes (`uniform`, `leader`, `mixed`).
* `filter`: taints, selectors, node affinity, unschedulable, as node masks, with exclusion counts.
* `offer`: offer slots per node, per domain, for the cluster (score).
* `select`: lowest fitting tier, binpack, fewest lower domains, rank layout (select).
* `preempt`, `search`, `fast`: job-level preemption (postfilter): exact search on small
  places, a vectorised heuristic on big ones.
* `engine`: the phases and the `Verdict` (Success / Unschedulable / Unresolvable / Wait).
* `scenario`: plain objects in, a run to quiescence out (`topobridge simulate`).
* `oracle`: a brute-force solver for tiny clusters, to check the engine against.
"""
