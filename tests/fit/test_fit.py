from __future__ import annotations

import csv
import json
import math
import statistics
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpscale import InvalidInput
from dpscale.fit import MODELS, fit, read_points
from dpscale.parse import number_reader

DLPERF = Path(__file__).parents[1] / "data" / "dlperf_resnet50_v100.csv"
SIZES = np.array([1, 2, 4, 8, 16, 32, 64] * 3)


def synthetic(model: str, params: tuple[float, ...], noise: float, seed: int) -> list[tuple[int, float]]:
    rng = np.random.default_rng(seed)
    clean = MODELS[model].fn(SIZES.astype(float), *params)
    return list(zip(SIZES.tolist(), (clean * (1 + rng.normal(0, noise, SIZES.size))).tolist(), strict=True))


# STATISTICAL: these draw noisy data and check the fit within a few standard errors. Left free,
# Hypothesis hunts the noise seed for a tail beyond them and fails a run now and then; derandomized,
# every run checks the same broad set of examples.
@settings(max_examples=25, deadline=None, derandomize=True)  # see STATISTICAL below
@given(sigma=st.floats(0.001, 0.1), lam=st.floats(10, 1e4), seed=st.integers(0, 10**6))
def test_recovers_amdahl(sigma: float, lam: float, seed: int) -> None:
    f = fit(synthetic("amdahl", (lam, sigma), 0.005, seed), models=["amdahl"])
    m = f.best
    assert m.params["lambda"] == pytest.approx(lam, rel=0.02)
    assert abs(m.params["sigma"] - sigma) <= 4 * m.errors["sigma"] + 1e-4


@settings(max_examples=25, deadline=None, derandomize=True)  # see STATISTICAL below
@given(sigma=st.floats(0.0, 0.05), kappa=st.floats(1e-4, 2e-3), seed=st.integers(0, 10**6))
def test_recovers_usl_and_its_peak(sigma: float, kappa: float, seed: int) -> None:
    f = fit(synthetic("usl", (1000.0, sigma, kappa), 0.005, seed), models=["usl"])
    m = f.best
    assert abs(m.params["kappa"] - kappa) <= 4 * m.errors["kappa"] + 5e-5
    true_peak = math.sqrt((1 - sigma) / kappa)
    assert m.peak_devices == pytest.approx(true_peak, rel=0.25)


@settings(max_examples=15, deadline=None, derandomize=True)  # see STATISTICAL below
@given(e=st.floats(0.5, 1.0), seed=st.integers(0, 10**6))
def test_recovers_the_seeds_constant_efficiency(e: float, seed: int) -> None:
    f = fit(synthetic("constant", (2000.0, e), 0.005, seed), models=["constant"])
    # E rests on the one single-device point (0.5 % noise): within 4 standard errors, not a fixed 1 %.
    tolerance = 4 * f.best.errors["E"] + 1e-3
    assert abs(f.best.params["E"] - e) <= tolerance
    assert abs(f.best.efficiency(64) - e) <= tolerance


@pytest.mark.parametrize(("model", "params"), [("gustafson", (500.0, 0.1)), ("comm", (800.0, 0.002, 0.05))])
def test_recovers_gustafson_and_comm(model: str, params: tuple[float, ...]) -> None:
    f = fit(synthetic(model, params, 0.002, 7), models=[model])
    for name, value in zip(MODELS[model].params, params, strict=True):
        assert f.best.params[name] == pytest.approx(value, rel=0.15, abs=2e-3)


def test_aicc_prefers_the_generating_model() -> None:
    f = fit(synthetic("usl", (1000.0, 0.02, 5e-4), 0.003, 3))
    assert f.chosen == "usl"
    assert f.peak_devices == pytest.approx(math.sqrt(0.98 / 5e-4), rel=0.1)


def dlperf(series: str) -> list[tuple[int, float]]:
    with DLPERF.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    return [(int(r["devices"]), float(r["throughput"])) for r in rows if r["series"] == series]


@pytest.mark.parametrize(("series", "tolerance"), [("amp_b256", 0.01), ("fp32_b128", 0.03)])
def test_held_out_published_series(series: str, tolerance: float) -> None:
    """Fit 1 to 16 V100s (DLPerf), predict 32, compare with the measured 32-GPU throughput."""
    points = dlperf(series)
    f = fit([p for p in points if p[0] <= 16], at=[32])
    predicted = f.best.predictions[0]
    measured = statistics.median(a for d, a in points if d == 32)
    assert abs(predicted.throughput / measured - 1) < tolerance
    assert f.chosen == "amdahl"


def test_amp_interval_covers_the_held_out_size() -> None:
    points = dlperf("amp_b256")  # five repeats per size: a real interval
    p = fit([q for q in points if q[0] <= 16], at=[32]).best.predictions[0]
    measured = statistics.median(a for d, a in points if d == 32)
    assert p.low <= measured <= p.high
    assert p.extrapolated


def test_warnings_for_extrapolation_and_missing_single_device() -> None:
    f = fit([(8, 2887.65), (16, 5716.79), (32, 10917.09)], at=[1024])
    assert any("more than 4× the largest measured" in w for w in f.warnings)
    assert any("no single-device measurement" in w for w in f.warnings)


def test_too_few_points_skip_models_with_a_reason() -> None:
    f = fit([(1, 10.0), (2, 19.0)], at=[4])
    skipped = {m.name: m.skipped for m in f.models if m.skipped is not None}
    assert "usl" in skipped
    assert str(skipped["usl"]) == "needs measurements at 3 or more sizes, has 2"
    assert skipped["usl"].localized("fr") == "demande des mesures à 3 tailles ou plus, en a 2"
    assert "usl: needs measurements at 3 or more sizes, has 2" in f.warnings
    assert "usl : demande des mesures à 3 tailles ou plus, en a 2" in [n.localized("fr") for n in f.notes]
    payload = json.loads(json.dumps(f.to_dict(), allow_nan=False))  # no NaN reaches JSON
    assert next(m for m in payload["models"] if m["model"] == "usl")["skipped"] == str(skipped["usl"])


def test_a_model_named_twice_is_fitted_once_and_one_model_alone_is_not_said_to_be_ranked() -> None:
    points = [(1, 367.29), (4, 1449.48), (8, 2887.65), (16, 5716.79)]
    alone = fit(points, models=["usl", "usl"])
    assert [m.name for m in alone.models] == ["usl"]
    assert not any("rank the models" in w for w in alone.warnings)  # no choice was made among models
    several = fit(points, models=["usl", "comm"])  # 3 parameters each, 4 points: neither ranked, the simplest shown
    assert all(m.aicc is None for m in several.models)
    assert "too few measurements (4) to rank the models by AICc: showing the simplest" in several.warnings


def test_fitted_curve_drives_the_planner() -> None:
    from dpscale.plan import devices_for_deadline

    best = fit(synthetic("usl", (1000.0, 0.02, 5e-4), 0.003, 3)).best
    # The USL caps throughput near its peak: a deadline beyond reach is refused with the reason.
    with pytest.raises(InvalidInput, match="deadline_seconds"):
        devices_for_deadline(1e9, 3600, best.throughput(1), best.efficiency)
    found = devices_for_deadline(3e7, 3600, best.throughput(1), best.efficiency)
    assert found.plan.seconds <= 3600


@pytest.mark.parametrize(
    ("text", "where", "accepted"),
    [
        ("", "file", "devices,throughput header"),
        ("devices,throughput\n1,367\n", None, "two or more cluster sizes"),
        ("devices,throughput\n1,-5\n2,9", "line 2, column throughput", "greater than 0"),
        ("devices,throughput\nx,5\n2,9", "line 2, column devices", "whole number"),
        ("devices,devices,throughput\n1,1,2", "line 1", "each column once"),
        ("gpus,samples\n1,2", "line 1", "found gpus, samples"),
        ("devices,throughput\n1,2,3", "line 2", "2 cells"),
        ('{"devices": 1}', "line 1", "a throughput key"),
    ],
)
def test_bad_files_name_the_line_and_column(text: str, where: str | None, accepted: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        fit(read_points("runs.csv", text=text))
    message = str(caught.value)
    if where:
        assert where in message
    assert accepted in message


def test_reads_numbers_as_a_spreadsheet_in_the_users_language_writes_them() -> None:
    french = "devices;throughput\n1;367,29\n4;1 449,48\n8;2887.65\n"  # a French spreadsheet's copy
    with pytest.raises(InvalidInput, match="line 2, column throughput"):
        read_points("runs.csv", text=french)  # plain: Python's numbers only
    points = read_points("runs.csv", text=french, read_number=number_reader("fr"))
    assert [(p.devices, p.throughput) for p in points] == [(1, 367.29), (4, 1449.48), (8, 2887.65)]
    with pytest.raises(InvalidInput, match="line 3, column devices"):
        read_points(
            "r.csv",
            text="devices;throughput\n1;2\n4,5;3",
            read_number=number_reader("fr"),
        )


def test_reads_jsonl_records_and_skips_incomplete_ones(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    records = [
        {"devices": 1, "throughput": 100.0, "complete": True},
        {"devices": 2, "throughput": 190.0, "complete": True},
        {"devices": 4, "throughput": 1.0, "complete": False},
    ]
    path.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    assert [p.devices for p in read_points(path)] == [1, 2]


def test_missing_file() -> None:
    with pytest.raises(InvalidInput, match="an existing CSV or JSON-lines file"):
        read_points("/nonexistent/runs.csv")


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: fit([(1, 10)]), "points"),
        (lambda: fit([(1, 10), (0, 5)]), "points[1].devices"),
        (lambda: fit([(1, 10), (2, float("nan"))]), "points[1].throughput"),
        (lambda: fit([(1, 10), (2, 19)], models=["linear"]), "model"),
        (lambda: fit([(1, 10), (2, 19)], at=[0]), "at"),
        (lambda: fit([(1, 10), "x"]), "points[1]"),  # type: ignore[list-item]
    ],
)
def test_bad_input_names_the_field(call: object, field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        call()  # type: ignore[operator]
    assert caught.value.field == field


def test_an_interval_cut_at_zero_is_said() -> None:
    # A USL fitted past its peak, predicted far out: the 95 % interval reaches below 0, and a throughput cannot.
    cut = fit([(1, 100), (2, 150), (4, 170), (8, 160)], at=[8, 64, 1024], models=["usl"])
    floored = [p.devices for p in cut.best.predictions if p.floored]
    assert floored
    for p in cut.best.predictions:
        assert p.low >= 0
        assert p.floored == (p.low == 0 and p.throughput - (p.high - p.throughput) < 0)
    said = [w for w in cut.warnings if "reaches below 0" in w]
    assert said == [
        f"at {', '.join(map(str, floored))} devices the 95% interval reaches below 0 and is cut there: "
        "the measurements bound that throughput from above only"
    ]
    kept = fit([(1, 367.29), (4, 1449.48), (8, 2887.65), (16, 5716.79)], at=[32])  # DLPerf's V100s
    assert not any(p.floored for p in kept.best.predictions)
    assert not any("reaches below 0" in w for w in kept.warnings)
