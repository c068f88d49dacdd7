"""The fallback scheduler's impure half: it runs the pure engine in `controller.placer`
against the live cluster while Volcano is absent.

* `cache`      parsed models kept in step by the informers, plus pods assumed bound
* `view`       one cycle's inputs for the engine: tree, index, snapshot, gangs, budgets
* `binder`     bind a gang through `pods/binding`: retry to completion, roll back only
               when completion is impossible
* `preemptor`  DisruptionTarget, delete (grace respected), nominate
* `status`     PodScheduled=False on pods, PodGroup phase and conditions
* `scheduler`  the loop, and the supervisor that runs it only while Volcano is absent
"""
