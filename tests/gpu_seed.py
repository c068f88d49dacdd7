"""The GPU seed's worked example: the `gpu.topology/*` annotations of its Indexed Job, shared by
the placer, translation and end-to-end tests."""

from translations import gpu

SEED_ANNOTATIONS = {
    f"{gpu.PREFIX}policy": "nvlink",
    f"{gpu.PREFIX}min-bandwidth": "100",
    f"{gpu.PREFIX}multi-node-policy": "pack",
    f"{gpu.PREFIX}max-nodes": "2",
    f"{gpu.PREFIX}min-gpus-per-node": "4",
}
