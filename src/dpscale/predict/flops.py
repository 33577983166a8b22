"""Tokens per second and model FLOPs utilization (MFU): what a language model's trainers read.

With S tokens per sample (the sequence length), the cluster's actual throughput A(n) samples/s
is A(n)·S tokens/s, and one device's A(n)·S/n. The FLOPs a token costs, forward and backward, are

    F = 6·N + 12·L·H·S

N parameters (two FLOPs per multiply-add, three passes: forward, and the backward pass's two
matrix products), plus the attention scores and their weighting of the values, which the
parameters do not count: L layers, H the attention's width (heads × head size, the model's width
in most models), S the sequence length (Kaplan et al. 2020, "Scaling Laws for Neural Language
Models", section 2.1; Chowdhery et al. 2022, "PaLM", appendix B; Narayanan et al. 2021,
"Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM"). Recomputed
activations are not counted: that is the model's FLOPs, not the hardware's.

    MFU(n) = A(n)·S·F / (n·P)

with P one device's dense peak (:mod:`dpscale.predict.peaks`). For a model that has never run,
one device's throughput alone may be given as its MFU instead, and read back from it:

    v = MFU·P / (F·S)  samples/s

so that the prediction's MFU on one device is the one given. Plain numbers and arrays in and out;
no numpy import, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["FORMULA", "FROM_MFU", "Tokens", "flops_per_token", "model_flops_utilization", "throughput_from_mfu"]

FORMULA = "6N + 12·L·H·S (Kaplan et al. 2020; PaLM, Chowdhery et al. 2022, appendix B)"
FORMULA_PARAMETERS_ONLY = "6N (Kaplan et al. 2020): the attention term needs layers and hidden"
FROM_MFU = "MFU × peak FLOP/s ÷ (FLOPs per token × tokens per sample)"

T = TypeVar("T")


def flops_per_token(
    params: float, *, layers: int | None = None, width: float | None = None, sequence: float | None = None
) -> float:
    """F = 6·N + 12·L·H·S: a token's training FLOPs (forward and backward); 6·N alone without L, H and S."""
    attention = 0.0 if layers is None or width is None or sequence is None else 12.0 * layers * width * sequence
    return 6.0 * params + attention


def model_flops_utilization(tokens_per_second: T, flops: float, devices: Any, peak: float) -> T:
    """MFU = tokens/s × FLOPs per token ÷ (n × peak): the share of the cluster's peak the model's FLOPs use."""
    return tokens_per_second * flops / (devices * peak)  # type: ignore[no-any-return,operator]


def throughput_from_mfu(mfu: float, peak: float, flops: float, per_sample: float) -> float:
    """v = MFU·P / (F·S): one device's samples/s alone at utilization ``mfu`` of its peak ``peak``."""
    return mfu * peak / (flops * per_sample)


@dataclass(frozen=True)
class Tokens:
    """What turns samples into tokens and FLOPs: S tokens per sample, F FLOPs per token, P the peak.

    ``flops`` and ``peak`` None: no MFU (tokens/s only). ``device``: the preset the peak came from.
    ``mfu``: the MFU one device's throughput alone was derived from (None: the throughput was given).
    """

    per_sample: float
    flops: float | None = None
    peak: float | None = None
    formula: str | None = None  # how F was found: FORMULA, FORMULA_PARAMETERS_ONLY or "given"
    device: str | None = None
    source: str | None = None  # where the device's peak is stated
    mfu: float | None = None  # one device's MFU alone, given in place of its throughput

    @property
    def has_mfu(self) -> bool:
        return self.flops is not None and self.peak is not None

    def to_dict(self) -> dict[str, Any]:
        """The assumptions a result states about its tokens and FLOPs."""
        out: dict[str, Any] = {"tokens_per_sample": self.per_sample}
        if self.flops is not None:
            out |= {"flops_per_token": self.flops, "flops_per_token_formula": self.formula}
        if self.peak is not None:
            out |= {"peak_flops": self.peak, "peak_device": self.device, "peak_source": self.source}
        if self.has_mfu:
            out["mfu_formula"] = "tokens/s × FLOPs per token ÷ (devices × peak FLOP/s)"
        if self.mfu is not None and self.flops is not None and self.peak is not None:
            out |= {
                "per_device_throughput_from_mfu": self.mfu,
                "per_device_throughput_formula": FROM_MFU,
                "per_device_throughput": throughput_from_mfu(self.mfu, self.peak, self.flops, self.per_sample),
            }
        return out
