"""The fallback gang placer and job-level preemptor: a pure engine (no Kubernetes client).

One scheduling cycle is `cycle.SchedulingCycle` (queue order, the engine per gang, reserve,
permit, a `CyclePlan`) over `cluster.ClusterState.view()` (the incrementally kept snapshot);
the live scheduler and `topobridge simulate` both run it. One attempt for one gang is
`engine.schedule(gang, snapshot, budgets=...) -> Verdict`, kube-scheduler's framework for
gangs (`framework`: the extension points; `plugins`: one plugin per rule).

The modules stack in layers, top down; each imports only the layers below it (pyproject.toml's
layers contract, checked by `lint-imports`; docs/architecture.md draws them):

* runners: `scenario` (a static cluster run to quiescence), `cycle` (one cycle and its plan),
  `explain` (why a gang waits, `topobridge explain`), `engine` (one attempt and its
  `Verdict`), `filtering` (the attempt's Filter step: shape classes through the Filter,
  MemberRules and Score plugins, the demand);
* `plugins`: the rules, each at the extension points it implements;
* `framework`: the extension points, the `Status` they answer, the attempt's `CycleState`;
* kernels: `preempt` (postfilter: job-level preemption) with `fast` (a vectorised heuristic
  for big places) over `search` (exact search on small ones); `select` (the place and node of
  every pod) over `offer` (offer slots), `ruled` (placement under rules between members),
  `tiers` (the tier bounding a hard gang); `demand` (what an attempt asks, and the placement
  points it carries); `gpu`;
* `cluster`: parsed objects plus per-node aggregates kept in step with every change; the view
  each cycle takes;
* data: `budgets` (PodDisruptionBudgets as preemption counts them), `values`, `snapshot` (the
  static index built once per node-set generation, the per-cycle state), `columns`,
  `records`, `memo`, `rules`, `terms`, `attempt_budget`, `timeout`, `backoff`.

The runners name no plugin (a `forbidden` contract says so): loading this package loads the
in-tree plugins, which register the default profile (`framework.default_profile`), as
kube-scheduler's in-tree registry is assembled above its framework runtime.
"""

from controller.placer import plugins  # noqa: F401  (registers the default profile)
