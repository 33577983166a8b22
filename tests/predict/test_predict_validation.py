"""The predictor against published measurements; the README shows this table as computed."""

from __future__ import annotations

import re
import statistics
from functools import cache
from pathlib import Path

import pytest

from tests.validation_support import Check, check, markdown_table, mean_absolute_error

DATA = Path(__file__).parents[1] / "data" / "published_scaling.csv"
README = Path(__file__).resolve().parents[2] / "README.md"

Row = tuple[str, str, str, int, str]  # source, model, precision, devices, links: one published row

# How far each row's prediction may be from the measurement, in points of efficiency
# (|predicted − measured| · 100): today's error (after #) plus at least one point, rounded up to a
# whole point. The point absorbs what should not count as a change of model (rounding, a preset's
# latency nudged); a drift beyond it, at any row, fails here even where the mean hides it. A row the
# model gets closer to passes: tighten its tolerance then. The large ones are the misses the README
# explains: AMP on one node, whose hosts' input rate and clocks the sources do not give. Before the
# estimate was the median of its own range (2 % variation, no interference, the whole network, at the
# top of a range centred elsewhere) the errors were -0.6, +11.8, -1.2, +9.2, +1.3, +4.4, +3.0, +0.8,
# +5.7, +15.4 and +26.2: a mean of 7.2 points.
TOLERANCE: dict[Row, int] = {
    ("S1", "ResNet-50v1.5", "TF32", 8, "NVSwitch (NVLink3)"): 2,  # -0.7
    ("S1", "ResNet-50v1.5", "AMP", 8, "NVSwitch (NVLink3)"): 13,  # +11.6
    ("S1", "ResNet-50v1.5", "FP32", 8, "NVLink2 hybrid cube-mesh"): 3,  # -1.4
    ("S1", "ResNet-50v1.5", "AMP", 8, "NVLink2 hybrid cube-mesh"): 11,  # +9.0
    ("S9", "ResNet-50", "FP32", 16, "NVLink2 hybrid cube-mesh + 4x100Gb InfiniBand"): 4,  # -2.5
    ("S9", "ResNet-101", "FP32", 16, "NVLink2 hybrid cube-mesh + 4x100Gb InfiniBand"): 2,  # +0.5
    ("S9", "ResNeXt101-32x8d", "FP32", 16, "NVLink2 hybrid cube-mesh + 4x100Gb InfiniBand"): 2,  # -0.4
    ("S10", "ResNet-50v1.5", "FP32", 32, "NVLink2 + 1x100Gb InfiniBand"): 5,  # -3.7
    ("S10", "ResNet-50v1.5", "AMP", 32, "NVLink2 + 1x100Gb InfiniBand"): 3,  # +1.1
    ("S10", "BERT-base", "FP32", 16, "NVLink2 + 1x100Gb InfiniBand"): 4,  # +2.1
    ("S10", "BERT-base", "FP16", 32, "NVLink2 + 1x100Gb InfiniBand"): 6,  # -4.9
}
# The table as a whole, as the README states it: today's figures and how far each may drift.
MEAN_ERROR = 3.45  # points; the goal was 3: the two AMP rows on one node alone add 1.9
MEAN_ERROR_DRIFT = 0.3
COVERED = 9  # of 11 rows: the two AMP rows lie below what the priors allow on one node
MEDIAN_WIDTH = 12.8  # points; the goal was 12
MEDIAN_WIDTH_DRIFT = 0.7


@cache
def checks() -> dict[Row, Check]:
    return {(c.source, c.model, c.precision, c.devices, c.interconnect): c for c in check(DATA)}


def test_every_row_with_inputs_is_predicted() -> None:
    # the two Horovod rows have no single-device throughput; a new row comes with its tolerance
    assert list(checks()) == list(TOLERANCE)
    assert all(0 < c.predicted <= 1 for c in checks().values())


@pytest.mark.parametrize(
    ("row", "tolerance"), TOLERANCE.items(), ids=[" ".join([*map(str, r[:4]), r[4].split()[0]]) for r in TOLERANCE]
)
def test_each_row_within_its_tolerance(row: Row, tolerance: int) -> None:
    c = checks()[row]
    assert abs(c.error_points) <= tolerance, (
        f"predicted {c.predicted:.3f} against {c.measured:.3f} measured: {c.error_points:+.1f} points, "
        f"past the {tolerance} allowed"
    )


def test_readme_shows_the_table_as_computed() -> None:
    text = README.read_text(encoding="utf-8")
    shown = re.search(r"<!-- validation:start -->\n(.*?)\n<!-- validation:end -->", text, flags=re.S)
    assert shown, "README has no validation table"
    assert shown.group(1) == markdown_table(check(DATA))


def test_rows_where_communication_dominates_are_within_a_few_points() -> None:
    # Where the model's own terms are what limits scaling (multi-node ResNet, FP32 on one node),
    # it stays close; the README explains the rows it misses.
    close = [c for c in check(DATA) if c.model.startswith("ResNet") and c.precision in ("FP32", "TF32")]
    assert close
    assert max(abs(c.error_points) for c in close) < 5


def test_every_row_carries_its_interval_with_the_estimate_inside() -> None:
    # The estimate is the median of its own range: strictly inside it on every row, at neither end.
    assert all(0 < c.low < c.predicted < c.high for c in check(DATA))


def test_the_table_as_a_whole() -> None:
    found = check(DATA)
    mean = mean_absolute_error(found)
    assert abs(mean - MEAN_ERROR) <= MEAN_ERROR_DRIFT, mean
    assert sum(c.covered for c in found) >= COVERED
    width = statistics.median((c.high - c.low) * 100 for c in found)
    assert abs(width - MEDIAN_WIDTH) <= MEDIAN_WIDTH_DRIFT, width
