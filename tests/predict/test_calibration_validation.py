"""Calibrated on one node, predicted at many: published series; the README shows this table as computed."""

from __future__ import annotations

import re
import statistics
from functools import cache
from pathlib import Path

from tests.multinode_support import Row, markdown_table, mean_absolute, predicted, series, summary_table

DATA = Path(__file__).parents[1] / "data" / "multinode_series.csv"
README = Path(__file__).resolve().parents[2] / "README.md"


@cache
def rows() -> tuple[Row, ...]:
    return tuple(row for s in series(DATA) for row in predicted(s))


def test_every_series_measured_at_two_sizes_is_predicted() -> None:
    found = series(DATA)
    assert len(found) >= 60
    assert len(rows()) == sum(len(s.sizes) - 1 for s in found)
    assert all(0 < r.low < r.predicted < r.high for r in rows())  # the estimate inside its range, at neither end


def test_the_calibrated_model_is_closer_than_the_constant_efficiency() -> None:
    # Mean absolute error in points of E: the seed's constant E against the calibrated model.
    model = mean_absolute([r.error_points for r in rows()])
    constant = mean_absolute([r.baseline_points for r in rows()])
    assert model < 0.75 * constant, (model, constant)
    # today 4.6 (4.4 before the estimate was the median of its range, with a variation that waits for the
    # slowest of a node's ranks and of the nodes; 4.2 before the collectives were priced as NCCL runs
    # them): the goal was 3; a drift past 5 fails
    assert model < 5.0


def test_the_interval_holds_most_measurements() -> None:
    # Stated in the README as measured (not the nominal 90 %): today 164 of 205; a fall below 80 % fails.
    coverage = sum(r.covered for r in rows()) / len(rows())
    assert coverage >= 0.80, coverage


def test_the_interval_is_narrow_enough_to_act_on() -> None:
    # The median width of the 90 % range, in points: today 11.7 (12.0 before); the goal was at most 12.
    width = statistics.median((r.high - r.low) * 100 for r in rows())
    assert width <= 12.0, width


def test_efficiency_falls_across_nodes_as_measured_where_accumulation_is_fixed() -> None:
    # The cause the issue names: from one node to several, series lose far more than the
    # α-β model alone says. Where accumulation stays 1, the calibrated model loses at least 3
    # points at the largest size of every DDP series.
    for s in series(DATA):
        if s.cluster.sharding == "ddp" and set(s.accumulations) == {1} and s.sizes[-1] >= 16 * s.sizes[0]:
            last = predicted(s)[-1]
            assert last.predicted < 0.97, (s.label, last)


def test_readme_shows_the_table_as_computed() -> None:
    text = README.read_text(encoding="utf-8")
    shown = re.search(r"<!-- multinode:start -->\n(.*?)\n<!-- multinode:end -->", text, flags=re.S)
    assert shown, "README has no multi-node validation table"
    assert shown.group(1) == markdown_table(list(rows()))
    summary = re.search(r"<!-- multinode-summary:start -->\n(.*?)\n<!-- multinode-summary:end -->", text, flags=re.S)
    assert summary, "README has no summary of the multi-node validation"
    assert summary.group(1) == summary_table(list(rows()))
    coverage = sum(r.covered for r in rows()) / len(rows())
    assert f"**{round(coverage * 100)} % of all measurements" in text
