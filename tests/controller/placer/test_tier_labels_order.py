"""The tree's tier -> label table is in tier order whatever the process's hash seed: messages
list the tree's levels from it, and a message that changed with PYTHONHASHSEED made the
simulate output of one Kueue scenario differ from run to run."""

from __future__ import annotations

import os
import subprocess
import sys

PROGRAM = """
from placer_objects import cnt, node
from controller.placer.cluster import topology_tree
from translations import koordinator as koord
from translations.core import Node

levels = [("BlockLayer", "example.com/block"), ("RackLayer", "example.com/rack"), ("SpineLayer", "example.com/spine")]
nodes = [
    Node.parse(node(f"n{i}", labels={"example.com/block": f"b{i}", "example.com/rack": f"r{i // 2}", "example.com/spine": "s0"}))
    for i in range(4)
]
tree = topology_tree(nodes, [], koord.ClusterNetworkTopology.parse(cnt(levels=levels)))
print(list(tree.tier_labels.items()))
"""


def test_tier_labels_come_in_tier_order_under_every_hash_seed() -> None:
    here = os.path.dirname(__file__)
    seen = set()
    for seed in ("0", "1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": os.pathsep.join([here, *sys.path])}
        out = subprocess.run(
            [sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, check=True
        )
        seen.add(out.stdout.strip())
    assert seen == {"[(1, 'example.com/block'), (2, 'example.com/rack'), (3, 'example.com/spine')]"}
