"""Python's cyclic garbage collector, held off while a batch of objects is built.

Building a view, a topology tree or a simulated cluster makes an object or more per pod or
node; the allocations set off collections, and each full one walks every object alive (every
parsed pod and node): measured at a fifth to a half of such a batch, for nothing, since the
batch makes no reference cycles worth collecting (reference counting frees what it drops).
`paused()` holds the collector off for the batch and restores it as it was; collection goes
on as usual afterwards. The one place this rule lives: the placer's view, the HyperNode tree,
`simulate`, one scheduling attempt (`engine.schedule`), an informer's list (every object of a
resource parsed into the caches) and the ui's model update call it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """The collector off inside the block (left off when it already was)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
