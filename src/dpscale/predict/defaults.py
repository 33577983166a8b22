"""What a prediction assumes when not told otherwise, and the all-reduce algorithms it knows.

A leaf but for the algorithms' names (:mod:`dpscale.collectives.names`, without numpy too): the
inputs' definition (no numpy) and the model (numpy) both read these.
"""

from __future__ import annotations

from typing import Literal, get_args

from dpscale.collectives.names import ALGORITHMS, Algorithm  # the cost model's: said here for the inputs

__all__ = [
    "ALGORITHMS",
    "BACKWARD_SHARE",
    "DDP_BUCKET_BYTES",
    "DEFAULT_DEVICES_PER_NODE",
    "DEFAULT_JITTER",
    "DEFAULT_LAYERS",
    "MASTER_BYTES",
    "OPTIMIZERS",
    "OPTIMIZER_STATE_BYTES",
    "SHARDINGS",
    "SHARDING_SYNONYMS",
    "Algorithm",
    "Optimizer",
    "Sharding",
]

BACKWARD_SHARE = 2 / 3  # backward ≈ 2 × forward: two matrix products per weight for one
DDP_BUCKET_BYTES = 25 * 2**20  # torch.nn.parallel.DistributedDataParallel(bucket_cap_mb=25)
DEFAULT_JITTER = 0.02  # assumption: 2 % step-time variation per rank; measure yours with dpscale measure
DEFAULT_DEVICES_PER_NODE = 8  # a DGX or HGX node; a network profile says its own

# Data parallelism, replicated or sharded (ZeRO's stages, FSDP's strategies): what each device
# holds whole and what it holds a 1/n share of, and which collectives keep the copies in step.
Sharding = Literal["ddp", "zero1", "zero2", "zero3", "hybrid"]
SHARDINGS: tuple[str, ...] = get_args(Sharding)
# The names users know from PyTorch's FSDP and elsewhere, and the strategy each one is.
SHARDING_SYNONYMS: tuple[tuple[str, str], ...] = (
    ("no_shard", "ddp"),
    ("shard_grad_op", "zero2"),
    ("full", "zero3"),
    ("full_shard", "zero3"),
    ("fsdp", "zero3"),
    ("hsdp", "hybrid"),
    ("hybrid_shard", "hybrid"),
)
Optimizer = Literal["adam", "adamw", "sgd"]
OPTIMIZERS: tuple[str, ...] = get_args(Optimizer)
# Optimizer state per parameter, in bytes: Adam's two fp32 moments; SGD's fp32 momentum buffer.
OPTIMIZER_STATE_BYTES: dict[str, float] = {"adam": 8.0, "adamw": 8.0, "sgd": 4.0}
MASTER_BYTES = 4.0  # the fp32 master copy of the weights an optimizer keeps under mixed precision
# How many pieces a sharded model is gathered in: FSDP wraps each transformer block (32 in a
# Llama 3 8B), DeepSpeed gathers by module; one piece ahead is prefetched behind the compute.
DEFAULT_LAYERS = 32
