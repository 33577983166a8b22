"""Calibrate on the first node, predict the larger sizes: tests/data/multinode_series.csv.

Test support, not part of the package: tests/predict/test_calibration_validation.py keeps the README's
table in step with :func:`markdown_table` and checks the numbers it states.

A series is one job (source table, model, precision, micro-batch, sequence length) measured at
several sizes. Each is calibrated on its smallest size alone (one node where the source has one)
with :func:`dpscale.predict.calibration.predict_calibrated`, and each larger size is predicted from
the job's own columns: parameters, micro-batch (in tokens where the throughput is in tokens),
accumulation at that size, devices per node, the strategy (FSDP's FULL_SHARD or SHARD_GRAD_OP
where the caveat names it, else DDP) and the system's links, from the vendor's specification as
the file's header says (DGX-1: NVLink 2 and 4 × EDR; DGX-2H: NVLink 2 through NVSwitch and 8 × EDR;
DGX A100: NVLink 3 and 8 × HDR; the MosaicML H100 nodes: NVLink 4 and 8 × NDR, not stated by the
source; its A100 nodes: NVLink 3 and the 1 600 Gb/s the table states). Gradients are reduced in
fp32 (4 bytes) except under Composer's PURE bf16; the one-device throughput columns are not used.

Efficiencies are relative to the calibration size, E_N(n) = (A(n)/n) / (A(N)/N), the measured
one and the predicted one alike; the seed's constant E says E_N(n) = 1.
"""

from __future__ import annotations

import csv
import re
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from dpscale.collectives.link import Link
from dpscale.predict import presets, uncertainty
from dpscale.predict.calibration import calibrate
from dpscale.predict.model import Cluster, Reference, Workload, _calibrated, _point
from dpscale.predict.uncertainty import LEVEL

__all__ = ["Row", "Series", "markdown_table", "mean_absolute", "predicted", "series", "summary_table"]

SYSTEMS: dict[
    str, tuple[str, float]
] = {  # system (as the file starts its name) -> NVLink preset, network bytes/s per node
    "DGX-1": ("nvlink2", 4 * 12.5e9),
    "DGX-2H": ("nvlink2", 8 * 12.5e9),
    "DGX A100": ("nvlink3", 8 * 25e9),
    "MosaicML platform, H100": ("nvlink4", 8 * 50e9),
    "MosaicML platform, A100": ("nvlink3", 1600e9 / 8),
}
_SUFFIX = {"": 1.0, "k": 1e3, "M": 1e6, "B": 1e9}


def _lead(text: str, default: float | None = None) -> float:
    """The number a cell starts with (``330M (README model table)`` is 3.3e8); ``default`` if none."""
    found = re.match(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kMB]?)\b", text)
    if found is None:
        if default is None:
            raise ValueError(f"no number in {text!r}")
        return default
    return float(found.group(1)) * _SUFFIX[found.group(2)]


@dataclass(frozen=True, slots=True)
class Series:
    source: str
    model: str
    precision: str
    sizes: tuple[int, ...]
    throughputs: tuple[float, ...]
    accumulations: tuple[int, ...]
    workload: Workload  # at the first size's accumulation; its throughput is a placeholder the calibration replaces
    cluster: Cluster

    system: str = ""
    batch_text: str = ""
    table: int = 1  # the same job in a second table of the same source

    @property
    def group(self) -> str:
        """The source file: framework and model family."""
        path = self.source.split(":", 1)[-1].split("::")[0].strip()
        if self.repository != "DeepLearningExamples":
            return "Composer (llm-foundry) MPT, FSDP"
        return f"{path.split('/')[0]} {path.split('/')[-2].replace('biobert', 'BioBERT')}"

    @property
    def repository(self) -> str:
        return self.source.split("@")[0].split("/")[-1]

    @property
    def label(self) -> str:
        """Framework, model, precision, micro-batch (× sequence length) and system: one series."""
        path = self.source.split(":", 1)[-1].split("::")[0].strip()
        framework = path.split("/")[0] if self.repository == "DeepLearningExamples" else "Composer"
        model = self.model.split(" (")[0].replace(" pretraining", "")
        phase = re.search(r"phase \d", self.model)
        precision = self.precision.split(" (")[0]
        again = f" (table {self.table})" if self.table > 1 else ""
        phase_text = " " + phase.group(0) if phase else ""
        return f"{framework} {model}{phase_text} {precision} {self.batch_text}, {self.system}{again}"


def series(path: Path) -> list[Series]:
    """Every series of ``path`` measured at two sizes or more, in the file's order."""
    with path.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(line for line in f if line.strip() and not line.startswith("#")))
    grouped: dict[tuple[str, ...], list[dict[str, str]]] = {}
    for row in rows:
        key = (row["source"], row["model"], row["precision"], row["batch_per_device"], row["seq_len"])
        grouped.setdefault(key, []).append(row)
    out = []
    for (source, model, precision, *_), found in grouped.items():
        if len(found) < 2:
            continue
        first = found[0]
        system = next(name for name in SYSTEMS if first["system"].startswith(name))
        nvlink, network = SYSTEMS[system]
        tokens = first["throughput_unit"].startswith("tokens")
        batch = _lead(first["batch_per_device"]) * (_lead(first["seq_len"]) if tokens else 1)
        caveat = first["caveat"]
        sharding = "zero3" if "FULL_SHARD" in caveat else "zero2" if "SHARD_GRAD_OP" in caveat else "ddp"
        sharded = sharding != "ddp"
        accumulations = tuple(int(_lead(r["accumulation"], 1)) for r in found)
        workload = Workload(
            1.0,
            batch,
            _lead(first["params"]),
            grad_bytes=2.0 if "PURE" in precision else 4.0,
            accumulation=accumulations[0],
            param_bytes=2.0 if sharded else 4.0,
        )
        cluster = Cluster(
            presets.link("intra", nvlink),
            int(_lead(first["devices_per_node"])),
            Link(network, presets.DEFAULT_LATENCY["inter"], presets.DEFAULT_EFFICIENCY),
            sharding=sharding,
        )
        sizes = tuple(int(r["devices"]) for r in found)
        throughputs = tuple(float(r["throughput"]) for r in found)
        batch_text = f"b{_lead(first['batch_per_device']):g}×{_lead(first['seq_len']):g}"
        shown = first["system"].replace("MosaicML platform, ", "").split(" (")[0].replace(" nodes", "")
        out.append(
            Series(source, model, precision, sizes, throughputs, accumulations, workload, cluster, shown, batch_text)
        )
    seen: dict[str, int] = {}
    for i, found_series in enumerate(out):
        seen[found_series.label] = seen.get(found_series.label, 0) + 1
        if seen[found_series.label] > 1:
            out[i] = replace(found_series, table=seen[found_series.label])
    return out


@dataclass(frozen=True, slots=True)
class Row:
    """One predicted size of one series."""

    label: str
    group: str
    calibrated_on: int
    devices: int
    measured: float  # E relative to the calibration size
    predicted: float
    low: float
    high: float

    @property
    def error_points(self) -> float:
        return (self.predicted - self.measured) * 100

    @property
    def baseline_points(self) -> float:
        """The seed's constant E: E_N(n) = 1."""
        return (1.0 - self.measured) * 100

    @property
    def covered(self) -> bool:
        return self.low <= self.measured <= self.high


def predicted(s: Series, level: float = LEVEL) -> list[Row]:
    """Calibrate on the series' first size, predict each other one with its own accumulation.

    The calibration fixes the compute speed per micro-step and the unknowns at the first size; at
    n the job may accumulate fewer micro-steps (a fixed global batch), which the model prices.
    """
    first = Reference(s.sizes[0], s.throughputs[0])
    per_device = s.throughputs[0] / s.sizes[0]
    fit = calibrate([first], s.workload, s.cluster)
    out = []
    for n, a, k in zip(s.sizes[1:], s.throughputs[1:], s.accumulations[1:], strict=True):

        def evaluate(values: Mapping[str, float], n: int = n, k: int = k) -> Any:
            c = uncertainty.apply(s.cluster, values)
            w = _calibrated(first, s.workload, c)
            at_n = _point(np.asarray([n]), replace(w, accumulation=k), c, None)
            return at_n.actual_throughput / n / per_device

        spread = uncertainty.spread_at(np.asarray([n]), first.devices, uncertainty.MEASUREMENT_SPREAD * fit.misfit)
        middle, low, high = uncertainty.band(evaluate, fit.names, fit.centre, fit.covariance, level, spread=spread)
        out.append(
            Row(s.label, s.group, s.sizes[0], n, a / n / per_device, float(middle[0]), float(low[0]), float(high[0]))
        )
    return out


def mean_absolute(values: list[float]) -> float:
    return statistics.fmean(abs(v) for v in values)


def summary_table(rows: list[Row]) -> str:
    """Per source: sizes predicted, mean absolute error of the model and of the constant E, coverage."""
    lines = [
        "| source | sizes predicted | calibrated model: error (points) | constant E: error (points) | "
        "in the 90 % interval |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    groups: dict[str, list[Row]] = {}
    for r in rows:
        groups.setdefault(r.group, []).append(r)
    for name, found in [*groups.items(), ("**all**", rows)]:
        model = mean_absolute([r.error_points for r in found])
        constant = mean_absolute([r.baseline_points for r in found])
        coverage = sum(r.covered for r in found) / len(found)
        lines.append(f"| {name} | {len(found)} | {model:.1f} | {constant:.1f} | {coverage:.0%} |")
    return "\n".join(lines)


def markdown_table(rows: list[Row]) -> str:
    lines = [
        "| series | calibrated on | devices | measured E | predicted E (90 % interval) | error (points) | "
        "constant E: error |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r.label} | {r.calibrated_on} | {r.devices} | {r.measured:.3f} | "
            f"{r.predicted:.3f} ({r.low:.3f}–{r.high:.3f}) | {r.error_points:+.1f} | {r.baseline_points:+.1f} |"
        )
    coverage = sum(r.covered for r in rows) / len(rows)
    lines.append(
        f"| **{len(rows)} sizes** | | | | **coverage {coverage:.0%}** | "
        f"**{mean_absolute([r.error_points for r in rows]):.1f}** | "
        f"**{mean_absolute([r.baseline_points for r in rows]):.1f}** |"
    )
    return "\n".join(lines)
