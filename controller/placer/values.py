"""Label values as dense codes per node: what inter-pod rules count and compare by.

For a node label key, every node gets the code of its value (-1 without the key), so "pods per
value" is one `bincount` and "the value of each node" one lookup. The node key (`NODE`, host
ports) gives every node its own code. Memoised per index.
"""

from __future__ import annotations

import numpy as np

from controller.placer.memo import MemoSlot
from controller.placer.snapshot import I64, ClusterIndex

NODE = ""
"""The topology key of a node-level rule (host ports): every node is its own value."""
VALUE_CODES: MemoSlot[tuple[I64, int]] = MemoSlot("value_codes")


def value_codes(index: ClusterIndex, key: str) -> tuple[I64, int]:
    """Per node: a dense code of its `key` label value (-1 without it), and how many values."""
    return index.memo.get(VALUE_CODES, key, lambda: _codes(index, key))


def _codes(index: ClusterIndex, key: str) -> tuple[I64, int]:
    if key == NODE:
        return np.arange(index.n_nodes, dtype=np.int64), index.n_nodes
    seen: dict[str, int] = {}
    codes = np.full(index.n_nodes, -1, dtype=np.int64)
    for i, v in enumerate(index.label_values(key)):
        if v is not None:
            codes[i] = seen.setdefault(v, len(seen))
    return codes, len(seen)


def node_unique(index: ClusterIndex, key: str) -> bool:
    """Every node has the key, with a value of its own (kubernetes.io/hostname, normally)."""
    codes, n = value_codes(index, key)
    return n == index.n_nodes and bool((codes >= 0).all())


def at_nodes(codes: I64, per_value: I64) -> I64:
    """Per node: its value's entry of `per_value` (0 where the node lacks the key)."""
    if len(per_value) == 0:
        return np.zeros(len(codes), dtype=np.int64)
    return np.where(codes >= 0, per_value[np.maximum(codes, 0)], 0)


def per_value(codes: I64, nodes: list[int], n_values: int) -> I64:
    """How many of `nodes` (a node index per pod) fall in each value."""
    if not nodes:
        return np.zeros(n_values, dtype=np.int64)
    c = codes[np.asarray(nodes, dtype=np.int64)]
    return np.bincount(c[c >= 0], minlength=n_values).astype(np.int64)
