"""What a prediction gives: E(n), A(n), S(n), each step-time term and the memory each device holds.

One element per device count in every array, so a row of the table (or of the JSON) is one
index. The model that fills it is :mod:`dpscale.predict.model`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from dpscale._display import ShowsAsTable

if TYPE_CHECKING:
    from dpscale.messages import Message
    from dpscale.predict.flops import Tokens
    from dpscale.predict.job import Cluster, Workload
    from dpscale.predict.sources import Source

__all__ = ["Bottleneck", "Memory", "Prediction"]

Bottleneck = Literal["compute", "communication", "stragglers", "input"]
Array = npt.NDArray[Any]
MEMORY_PARTS = ("parameters", "gradients", "optimizer_states", "buffers", "activations")


@dataclass(frozen=True)
class Memory:
    """Bytes one device holds, per device count: each part as the strategy shards it."""

    parameters: Array
    gradients: Array
    optimizer_states: Array
    buffers: Array  # unsharded pieces held at once: gathered parameters, a gradient bucket
    activations: Array  # as the user gave them (0 when not given): not sharded by data parallelism

    @property
    def total(self) -> Array:
        return np.asarray(self.parameters + self.gradients + self.optimizer_states + self.buffers + self.activations)

    @property
    def model_states(self) -> Array:
        """Parameters, gradients and optimizer states: what sharding divides."""
        return np.asarray(self.parameters + self.gradients + self.optimizer_states)

    def row(self, i: int) -> dict[str, float]:
        out = {name: float(getattr(self, name)[i]) for name in MEMORY_PARTS}
        out["total"] = float(self.total[i])
        return out


@dataclass(frozen=True)
class Prediction(ShowsAsTable):
    """E(n), A(n), S(n) and the step-time terms, one element per device count.

    ``reference_step`` is the step time efficiencies are relative to: one device's (the compute
    alone) unless the per-device throughput came from a measurement on ``reference_devices``
    devices, in which case it is the step time at that size (E = 1 there, as LLM reports state it).
    ``efficiency_low`` and ``efficiency_high`` bound E(n) at ``level`` (0.9: 90 %), from what the
    model cannot know (:mod:`dpscale.predict.uncertainty`).
    """

    devices: Array
    compute_time: Array
    communication_time: Array
    exposed_communication: Array
    straggler_wait: Array
    input_wait: Array
    workload: Workload
    cluster: Cluster
    memory: Memory
    communication_volume: Array  # bytes each device sends per optimizer step
    assumptions: dict[str, Any] = field(default_factory=dict)
    reference_devices: int | None = None
    reference_step: float | None = None
    efficiency_low: Array | None = None  # the interval at ``level`` (None: not worked out)
    efficiency_high: Array | None = None
    level: float = 0.9
    # where each term's figure came from (compute, exposed_communication, straggler_wait, input_wait:
    # dpscale.predict.sources); empty: not said
    sources: tuple[tuple[str, Source], ...] = ()
    warnings: tuple[Message, ...] = ()  # what the inputs make unlikely, said in the table, the JSON and the page
    tokens: Tokens | None = None  # tokens per sample, FLOPs per token and peak (None: samples only)

    def source(self, term: str) -> Source | None:
        """Where ``term``'s figure came from (None: not said)."""
        return dict(self.sources).get(term)

    @property
    def step_time(self) -> Array:
        return np.asarray(self.compute_time + self.exposed_communication + self.straggler_wait + self.input_wait)

    @property
    def efficiency(self) -> Array:
        """E(n) = T_step(reference) / T_step(n); the reference is one device, whose step is its compute."""
        base = self.compute_time if self.reference_step is None else self.reference_step
        return np.asarray(base / self.step_time)

    @property
    def per_device_throughput(self) -> float:
        """v: one device's throughput at the reference size (alone, or as measured)."""
        if self.reference_step is None:
            return self.workload.per_device_throughput
        return float(self.workload.batch * self.workload.accumulation / self.reference_step)

    @property
    def actual_throughput(self) -> Array:
        return np.asarray(self.devices * self.per_device_throughput * self.efficiency)

    @property
    def efficiency_interval(self) -> tuple[Array, Array]:
        """E(n)'s interval at ``level``: (low, high), each an array (E itself where none was worked out)."""
        if self.efficiency_low is None or self.efficiency_high is None:
            return self.efficiency, self.efficiency
        return np.asarray(self.efficiency_low), np.asarray(self.efficiency_high)

    @property
    def actual_throughput_interval(self) -> tuple[Array, Array]:
        """A(n)'s interval: n·v times E's."""
        low, high = self.efficiency_interval
        scale = self.devices * self.per_device_throughput
        return np.asarray(scale * low), np.asarray(scale * high)

    @property
    def tokens_per_second(self) -> Array | None:
        """The cluster's tokens/s, A(n)·S (None: no tokens per sample given)."""
        return None if self.tokens is None else np.asarray(self.actual_throughput * self.tokens.per_sample)

    @property
    def tokens_per_second_interval(self) -> tuple[Array, Array] | None:
        """The cluster's tokens/s at E's interval."""
        if self.tokens is None:
            return None
        low, high = self.actual_throughput_interval
        return np.asarray(low * self.tokens.per_sample), np.asarray(high * self.tokens.per_sample)

    @property
    def mfu(self) -> Array | None:
        """MFU(n) = A(n)·S·F / (n·P) (:mod:`dpscale.predict.flops`; None: no peak given)."""
        t = self.tokens
        if t is None or t.flops is None or t.peak is None or self.tokens_per_second is None:
            return None
        from dpscale.predict.flops import model_flops_utilization

        return np.asarray(model_flops_utilization(self.tokens_per_second, t.flops, self.devices, t.peak))

    @property
    def mfu_interval(self) -> tuple[Array, Array] | None:
        """MFU at E's interval."""
        t, rates = self.tokens, self.tokens_per_second_interval
        if t is None or t.flops is None or t.peak is None or rates is None:
            return None
        from dpscale.predict.flops import model_flops_utilization

        low, high = (np.asarray(model_flops_utilization(r, t.flops, self.devices, t.peak)) for r in rates)
        return low, high

    @property
    def speedup(self) -> Array:
        return np.asarray(self.devices * self.efficiency)

    @property
    def fits(self) -> Array | None:
        """Whether each device's memory holds what it must (None: the device's memory was not given)."""
        limit = self.cluster.device_memory
        return None if limit is None else np.asarray(self.memory.total <= limit)

    @property
    def bottleneck(self) -> list[Bottleneck]:
        """What costs most beyond the compute itself, per device count ("compute" when nothing does).

        What was measured (or fitted, or read from a log or traces) comes first: the largest such
        term that costs anything, and only where none does, the largest of those assumed.
        """
        names: tuple[Bottleneck, ...] = ("communication", "stragglers", "input")
        terms = ("exposed_communication", "straggler_wait", "input_wait")
        extra = np.stack([self.exposed_communication, self.straggler_wait, self.input_wait])
        found = np.array([self.source(term) not in (None, "assumed") for term in terms])
        measured = np.where(found[:, None] & (extra > 0), extra, -1.0)
        largest = np.where(measured.max(axis=0) > 0, np.argmax(measured, axis=0), np.argmax(extra, axis=0))
        return [  # ties: the first, communication
            "compute" if value == 0 else names[i]
            for i, value in zip(largest.tolist(), extra.max(axis=0).tolist(), strict=True)
        ]

    def bottleneck_assumed(self) -> list[bool]:
        """Per device count, whether the bottleneck named rests on an assumption alone."""
        terms = {"communication": "exposed_communication", "stragglers": "straggler_wait", "input": "input_wait"}
        return [b in terms and self.source(terms[b]) == "assumed" for b in self.bottleneck]

    def _add_tokens(self, rows: list[dict[str, Any]]) -> None:
        """Each row's tokens/s (the cluster's, with its interval, and one device's) and MFU, when given."""
        none = dict.fromkeys(("tokens_per_second", "tokens_per_second_interval", "tokens_per_second_per_device"))
        for row in rows:  # the same keys with or without tokens: null where not given, as the API's schema says
            row |= none | {"mfu": None, "mfu_interval": None}
        rates, bounds = self.tokens_per_second, self.tokens_per_second_interval
        if rates is None or bounds is None:
            return
        per_device = (rates / self.devices).tolist()
        mfu, mfu_bounds = self.mfu, self.mfu_interval
        columns = zip(rates.tolist(), *(b.tolist() for b in bounds), per_device, strict=True)
        for row, (rate, low, high, alone) in zip(rows, columns, strict=True):
            row |= {"tokens_per_second": rate, "tokens_per_second_interval": [low, high]}
            row["tokens_per_second_per_device"] = alone
        if mfu is not None and mfu_bounds is not None:
            for row, m, low, high in zip(rows, mfu.tolist(), *(b.tolist() for b in mfu_bounds), strict=True):
                row |= {"mfu": m, "mfu_interval": [low, high]}

    def to_dict(self) -> dict[str, Any]:
        fits = self.fits
        e_bounds = self.efficiency_interval
        scale = self.devices * self.per_device_throughput
        columns = zip(
            self.devices.tolist(),
            self.efficiency.tolist(),
            self.actual_throughput.tolist(),
            self.speedup.tolist(),
            self.bottleneck,
            self.step_time.tolist(),
            self.compute_time.tolist(),
            self.communication_time.tolist(),
            self.exposed_communication.tolist(),
            self.straggler_wait.tolist(),
            self.input_wait.tolist(),
            self.communication_volume.tolist(),
            *(bound.tolist() for bound in e_bounds),
            *((scale * bound).tolist() for bound in e_bounds),
            strict=True,
        )  # each column computed once: a row per device count, linear in their number
        rows = [
            {
                "devices": n,
                "efficiency": e,
                "efficiency_interval": [e_low, e_high],
                "actual_throughput": a,
                "actual_throughput_interval": [a_low, a_high],
                "speedup": s,
                "bottleneck": b,
                "step_time": {
                    "total": total,
                    "compute": compute,
                    "communication": comm,
                    "exposed_communication": exposed,
                    "straggler_wait": straggler,
                    "input_wait": wait,
                },
                "memory_per_device": self.memory.row(i),
                "communication_volume": volume,
                "fits": None if fits is None else bool(fits[i]),
            }
            for i, (
                n,
                e,
                a,
                s,
                b,
                total,
                compute,
                comm,
                exposed,
                straggler,
                wait,
                volume,
                e_low,
                e_high,
                a_low,
                a_high,
            ) in enumerate(columns)
        ]
        self._add_tokens(rows)
        said = {"step_sources": dict(self.sources)} if self.sources else {}
        return {
            "predictions": rows,
            "assumptions": {**self.assumptions, **said, "interval_level": self.level},
            "warnings": [str(warning) for warning in self.warnings],
        }
