"""The predictor against published measurements (tests/data/published_scaling.csv and the like).

Test support, not part of the package: tests/predict/test_predict_validation.py holds each row to its
tolerance and keeps the README's table in step with :func:`markdown_table`.

Each row with a single-device throughput is predicted from its own columns only: devices,
devices per node, per-device batch, parameters, gradient bytes, the per-device link inside a node
and the node's network bandwidth, with dpscale's defaults for everything else (latencies,
achievable bandwidth, DDP overlap and buckets, 2 % step-time variation). Nothing is fitted to
these rows.
"""

from __future__ import annotations

import csv
import statistics
from dataclasses import dataclass
from pathlib import Path

from dpscale.collectives.link import Link
from dpscale.predict.model import Cluster, Workload, predict
from dpscale.predict.presets import DEFAULT_EFFICIENCY, DEFAULT_LATENCY

__all__ = ["Check", "check", "markdown_table", "mean_absolute_error"]


@dataclass(frozen=True, slots=True)
class Check:
    source: str
    model: str
    precision: str
    devices: int
    interconnect: str
    measured: float
    predicted: float
    low: float = 0.0  # the prediction's 90 % interval
    high: float = 1.0

    @property
    def covered(self) -> bool:
        return self.low <= self.measured <= self.high

    @property
    def error_points(self) -> float:
        """Predicted minus measured, in percentage points."""
        return (self.predicted - self.measured) * 100


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        lines = [line for line in f if line.strip() and not line.startswith("#")]
    return list(csv.DictReader(lines))


def check(path: Path) -> list[Check]:
    """Predict every row of ``path`` that has the inputs (a single-device throughput)."""
    out = []
    for row in _rows(path):
        if not row["single_device_throughput"]:
            continue
        inter_bw = float(row["inter_link_GBps"]) * 1e9
        cluster = Cluster(
            Link(float(row["intra_link_GBps"]) * 1e9, DEFAULT_LATENCY["intra"], DEFAULT_EFFICIENCY),
            int(row["devices_per_node"]),
            Link(inter_bw, DEFAULT_LATENCY["inter"], DEFAULT_EFFICIENCY) if inter_bw > 0 else None,
        )
        params = float(row["params"])
        workload = Workload(
            float(row["single_device_throughput"]),
            float(row["batch_per_device"]),
            params,
            float(row["grad_bytes"]) / params,
        )
        n = int(row["devices"])
        link = row["intra_link"] + ("" if inter_bw == 0 else f" + {row['inter_link']}")
        p = predict([n], workload, cluster)
        low, high = p.efficiency_interval
        out.append(
            Check(
                row["source"],
                row["model"],
                row["precision"],
                n,
                link,
                float(row["efficiency"]),
                float(p.efficiency[0]),
                float(low[0]),
                float(high[0]),
            )
        )
    return out


def mean_absolute_error(checks: list[Check]) -> float:
    return statistics.fmean(abs(c.error_points) for c in checks)


def markdown_table(checks: list[Check]) -> str:
    lines = [
        "| source | model | precision | devices | links | measured E | predicted E | 90 % interval | error (points) |",
        "| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for c in checks:
        lines.append(
            f"| {c.source} | {c.model} | {c.precision} | {c.devices} | {c.interconnect} | "
            f"{c.measured:.3f} | {c.predicted:.3f} | {c.low:.3f}–{c.high:.3f} | {c.error_points:+.1f} |"
        )
    covered = sum(c.covered for c in checks)
    lines.append(
        f"| | | | | **mean absolute error; measured E in the interval** | | | **{covered} of {len(checks)}** | "
        f"**{mean_absolute_error(checks):.1f}** |"
    )
    return "\n".join(lines)
