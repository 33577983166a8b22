"""Effective batch size: what data parallelism does to the batch.

Each of d data-parallel devices runs k gradient-accumulation micro-steps of b samples before
the optimizer step, so one step sees

    B = b·k·d          global (effective) batch, in samples
    B_tok = B·L        in tokens, for sequences of L tokens

Adding devices at a fixed micro-batch grows B, which changes the optimisation itself: the
linear scaling rule (Goyal et al. 2017, "Accurate, Large Minibatch SGD: Training ImageNet in
1 Hour", arXiv:1706.02677) multiplies the learning rate by the same factor as the batch,
η = η₀·B/B₀, with a gradual warm-up (5 epochs in that paper) because the rule breaks down in
the first steps of training; it held there up to B = 8 192 for ResNet-50.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from dpscale import _validate
from dpscale._display import ShowsAsTable
from dpscale.errors import InvalidInput

__all__ = [
    "Batch",
    "BatchResult",
    "BatchSolution",
    "accumulation_for",
    "devices_for_batch",
    "effective_batch",
    "growth",
    "scaled_learning_rate",
]

WARMUP_EPOCHS = 5  # Goyal et al. 2017, section 2.2 ("gradual warmup")
LINEAR_SCALING_SOURCE = "Goyal et al. 2017, arXiv:1706.02677"


@dataclass(frozen=True, slots=True)
class Batch(ShowsAsTable):
    """A data-parallel batch: b samples per micro-step, k micro-steps, d devices."""

    micro_batch: int
    accumulation: int
    devices: int
    sequence_length: int | None = None

    def __post_init__(self) -> None:
        _validate.whole("micro_batch", self.micro_batch)
        _validate.whole("accumulation", self.accumulation)
        _validate.whole("devices", self.devices)
        if self.sequence_length is not None:
            _validate.whole("sequence_length", self.sequence_length)

    @property
    def per_device_batch(self) -> int:
        """b·k: the samples one device contributes to each optimizer step."""
        return self.micro_batch * self.accumulation

    @property
    def global_batch(self) -> int:
        """B = b·k·d: the samples behind each optimizer step."""
        return self.micro_batch * self.accumulation * self.devices

    @property
    def global_batch_tokens(self) -> int | None:
        """B·L, when a sequence length was given."""
        return None if self.sequence_length is None else self.global_batch * self.sequence_length

    def to_dict(self) -> dict[str, Any]:
        return {
            "micro_batch": self.micro_batch,
            "accumulation": self.accumulation,
            "devices": self.devices,
            "sequence_length": self.sequence_length,
            "per_device_batch": self.per_device_batch,
            "global_batch": self.global_batch,
            "global_batch_tokens": self.global_batch_tokens,
        }


def effective_batch(
    micro_batch: int, accumulation: int = 1, devices: int = 1, *, sequence_length: int | None = None
) -> Batch:
    """The global batch of ``devices`` devices, each running ``accumulation`` micro-steps of ``micro_batch``.

    >>> effective_batch(32, 4, 64).global_batch
    8192
    """
    return Batch(
        _validate.whole("micro_batch", micro_batch),
        _validate.whole("accumulation", accumulation),
        _validate.whole("devices", devices),
        None if sequence_length is None else _validate.whole("sequence_length", sequence_length),
    )


@dataclass(frozen=True, slots=True)
class BatchSolution:
    """The batch that a whole number of accumulation steps (or devices) really gives, against a target."""

    solved_for: Literal["accumulation", "devices"]
    batch: Batch
    target_global_batch: int

    @property
    def difference(self) -> int:
        """Global batch minus the target: 0 when it divides evenly, else how far above it."""
        return self.batch.global_batch - self.target_global_batch

    @property
    def exact(self) -> bool:
        return self.difference == 0

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.batch.to_dict(),
            "solved_for": self.solved_for,
            "target_global_batch": self.target_global_batch,
            "difference": self.difference,
        }


def accumulation_for(
    target_global_batch: int, micro_batch: int, devices: int, *, sequence_length: int | None = None
) -> BatchSolution:
    """The fewest accumulation steps whose global batch reaches the target: k = ⌈B / (b·d)⌉."""
    target = _validate.whole("target_global_batch", target_global_batch)
    b = _validate.whole("micro_batch", micro_batch)
    d = _validate.whole("devices", devices)
    k = max(1, -(-target // (b * d)))
    return BatchSolution("accumulation", effective_batch(b, k, d, sequence_length=sequence_length), target)


def devices_for_batch(
    target_global_batch: int, micro_batch: int, accumulation: int = 1, *, sequence_length: int | None = None
) -> BatchSolution:
    """The fewest data-parallel devices whose global batch reaches the target: d = ⌈B / (b·k)⌉."""
    target = _validate.whole("target_global_batch", target_global_batch)
    b = _validate.whole("micro_batch", micro_batch)
    k = _validate.whole("accumulation", accumulation)
    d = _validate.device_count("target_global_batch", max(1, -(-target // (b * k))))  # a billion at most
    return BatchSolution("devices", effective_batch(b, k, d, sequence_length=sequence_length), target)


def growth(batch: Batch, *, sizes: int = 8) -> tuple[Batch, ...]:
    """The same micro-batch and accumulation on more devices: the powers of two up to 4·d, and d.

    Shows what adding devices does to the global batch when nothing else changes.
    """
    counts = sorted({*(2**k for k in range(31) if 2**k <= 4 * batch.devices), batch.devices})
    return tuple(effective_batch(batch.micro_batch, batch.accumulation, d) for d in counts[-sizes:])


def scaled_learning_rate(base_learning_rate: float, base_batch: int, global_batch: int) -> float:
    """The linear scaling rule: η = η₀·B/B₀ (Goyal et al. 2017; warm up over the first epochs).

    >>> scaled_learning_rate(0.1, 256, 8192)
    3.2
    """
    lr = _validate.positive("base_learning_rate", base_learning_rate)
    b0 = _validate.whole("base_batch", base_batch)
    b = _validate.whole("global_batch", global_batch)
    scaled = float(Decimal(repr(lr)) * b / b0)
    if not math.isfinite(scaled):
        raise InvalidInput("base_learning_rate", base_learning_rate, "a value small enough that the result is finite")
    return scaled


@dataclass(frozen=True)
class BatchResult:
    """What the batch calculator answers: the batch, what was solved for, the scaled learning rate."""

    batch: Batch
    solution: BatchSolution | None  # when a target global batch was given
    learning_rate: float | None
    base_learning_rate: float | None
    base_batch: int | None
    growth: tuple[Batch, ...]  # the same micro-batch and accumulation on more devices

    def to_dict(self) -> dict[str, Any]:
        shown = self.solution if self.solution is not None else self.batch
        return {**shown.to_dict(), "learning_rate": self.learning_rate}
