"""What a prediction assumes when not told otherwise, and the all-reduce algorithms it knows.

A leaf: the inputs' definition (no numpy) and the model (numpy) both read these.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["ALGORITHMS", "DDP_BUCKET_BYTES", "DEFAULT_DEVICES_PER_NODE", "DEFAULT_JITTER", "Algorithm"]

Algorithm = Literal["auto", "ring", "tree", "hierarchical"]
ALGORITHMS: tuple[str, ...] = get_args(Algorithm)
DDP_BUCKET_BYTES = 25 * 2**20  # torch.nn.parallel.DistributedDataParallel(bucket_cap_mb=25)
DEFAULT_JITTER = 0.02  # assumption: 2 % step-time variation per rank; measure yours with dpscale measure
DEFAULT_DEVICES_PER_NODE = 8  # a DGX or HGX node; a network profile says its own
