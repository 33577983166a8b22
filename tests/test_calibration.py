"""Calibrating the prediction on measurements (dpscale.predict.calibration) and its interval."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given

from dpscale import InvalidInput
from dpscale.predict import presets, uncertainty
from dpscale.predict.calibration import calibrate, predict_calibrated
from dpscale.predict.inputs import PREDICT
from dpscale.predict.measured import jitter_from
from dpscale.predict.model import Cluster, Reference, Workload, predict
from tests.conftest import assert_close
from tests.test_sharding import COUNTS, clusters, workloads

DGX_A100 = Cluster(presets.link("intra", "nvlink3"), 8, presets.link("inter", "ib-hdr", nics=8))
BERT = Workload(500.0, 32, 330e6)  # BERT-large, fp32 gradients, 32 sequences per device
SIZES = [8, 16, 64, 256]


def synthetic(cv: float, share: float, sizes: list[int] = SIZES, interference: float = 0.3) -> list[Reference]:
    """What the model itself says at those sizes for a cluster of known cv, share and interference."""
    truth = uncertainty.apply(DGX_A100, {"jitter": cv, "network_share": share, "interference": interference})
    p = predict(sizes, BERT, truth)
    return [Reference(n, float(a)) for n, a in zip(sizes, p.actual_throughput, strict=True)]


def test_one_measurement_is_given_back_and_the_priors_stay() -> None:
    p = predict_calibrated([8, 64, 512], BERT, DGX_A100, [Reference(8, 3600.0)])
    assert_close(float(p.actual_throughput[0]), 3600.0, rel=1e-9)
    fitted = p.assumptions["calibration"]["fitted"]
    assert_close(fitted["jitter"]["value"], uncertainty.PRIORS["jitter"].median, rel=1e-9)
    assert_close(fitted["network_share"]["value"], uncertainty.PRIORS["network_share"].median, rel=1e-9)
    # across nodes, stragglers and the network cost more than the α-β model with 2 % says
    plain = predict([8, 512], BERT, DGX_A100, reference=Reference(8, 3600.0))
    assert p.efficiency[2] < float(plain.efficiency[1]) - 0.02


def test_several_measurements_are_given_back() -> None:
    # cv, the share and the interference all lower E as nodes are added: together they give the series back,
    # within half a measurement's spread (3 %): a ring's bus bandwidth no longer falls with the node count, so
    # the series says less of the share and the priors keep a part of their say (1.3 % at 256 devices).
    measured = synthetic(cv=0.10, share=0.5)
    fit = calibrate(measured, BERT, DGX_A100)
    for m, back in zip(measured, fit.given_back, strict=True):
        assert_close(back, m.throughput, rel=0.015)
    assert fit.values["jitter"] > uncertainty.PRIORS["jitter"].median  # moved towards the truth


def test_within_one_node_the_variation_is_found() -> None:
    node = Cluster(presets.link("intra", "nvlink3"), 64)  # no network: cv alone
    truth = replace(node, jitter=0.10, interference=0.3)
    sizes = [1, 2, 8, 64]
    measured = [
        Reference(n, float(a)) for n, a in zip(sizes, predict(sizes, BERT, truth).actual_throughput, strict=True)
    ]
    fit = calibrate(measured, BERT, node)
    assert fit.names == ("jitter", "interference")
    assert abs(fit.values["jitter"] - 0.10) < 0.01


def test_measurements_narrow_the_interval() -> None:
    one = predict_calibrated([1024], BERT, DGX_A100, synthetic(0.05, 0.6, [8]))
    four = predict_calibrated([1024], BERT, DGX_A100, synthetic(0.05, 0.6))
    low1, high1 = one.efficiency_interval
    low4, high4 = four.efficiency_interval
    assert float(high4[0] - low4[0]) < 0.7 * float(high1[0] - low1[0])


def test_every_prediction_carries_its_interval() -> None:
    p = predict([1, 8, 64, 512], BERT, DGX_A100)
    low, high = p.efficiency_interval
    assert np.all(low <= p.efficiency)
    assert np.all(p.efficiency <= high)
    assert np.all(low > 0)
    row = p.to_dict()["predictions"][3]
    assert row["efficiency_interval"][0] <= row["efficiency"] <= row["efficiency_interval"][1]
    a_low, a_high = row["actual_throughput_interval"]
    assert a_low <= row["actual_throughput"] <= a_high
    assert_close(a_low / row["actual_throughput"], row["efficiency_interval"][0] / row["efficiency"], rel=1e-9)


def test_a_known_variation_is_not_fitted_and_narrows_the_interval() -> None:
    measured = synthetic(0.05, 0.6, [8])
    free = predict_calibrated([512], BERT, DGX_A100, measured)
    known = predict_calibrated([512], BERT, replace(DGX_A100, jitter=0.05), measured, jitter_known=True)
    assert "jitter" not in known.assumptions["calibration"]["fitted"]
    width = [float(h[0] - lo[0]) for lo, h in (free.efficiency_interval, known.efficiency_interval)]
    assert width[1] < width[0]


def test_with_one_device_known_every_measurement_is_a_residual() -> None:
    measured = synthetic(0.08, 0.6, [8, 64])
    p = predict_calibrated([8, 64], BERT, DGX_A100, measured, speed_known=True)
    assert p.reference_devices is None  # E against one device, as measured
    assert_close(float(p.actual_throughput[1]), measured[1].throughput, rel=0.02)


def test_a_measurement_the_network_cannot_allow_is_refused() -> None:
    with pytest.raises(InvalidInput, match="measured"):
        predict_calibrated([64], replace(BERT, params=1e13), DGX_A100, [Reference(8, 3600.0), Reference(64, 1e9)])


def test_the_definition_takes_several_measurements_and_both_throughputs() -> None:
    from dpscale.reading import read_input

    item = PREDICT.get("measured")
    assert item is not None
    pairs = read_input(item, "8:7500; 64:52000", "en")
    assert pairs == ((8, 7500.0), (64, 52000.0))
    assert read_input(item, "8:7 500 ; 64:52 000", "fr") == pairs
    request = PREDICT.build(
        {"devices": [8, 64, 512], "measured": pairs, "batch": 32.0, "params": 330e6, "intra": "nvlink3"}
    )
    assert not request.speed_known
    assert len(request.measured) == 2
    with pytest.raises(InvalidInput, match="measured"):
        read_input(item, "8:7500; 64", "en")


def test_the_cli_takes_measured_repeated_and_a_runs_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dpscale.cli import main

    runs = tmp_path / "runs.jsonl"
    runs.write_text(
        "\n".join(
            json.dumps({"devices": n, "throughput": a, "complete": True, "step_time": step})
            for n, a, step in [
                (1, 500.0, {"median": 0.064, "mean": 0.065, "p10": 0.06, "p90": 0.07, "cv": 0.04}),
                (8, 3700.0, {"median": 0.07, "mean": 0.071, "p10": 0.066, "p90": 0.076, "cv": 0.03}),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    common = ["predict", "-d", "8,64", "-b", "32", "-p", "330M", "--intra", "nvlink3", "--inter", "ib-hdr", "--json"]
    rows = []
    for extra in (
        ["--measured", "8:3700", "--measured", "64:26000"],
        ["--measured", "8:3700; 64:26000"],
        ["--measured", str(runs), "--jitter-from", str(runs)],
    ):
        with pytest.raises(SystemExit) as exited:
            main([*common, *extra])
        assert exited.value.code in (0, None)
        rows.append(json.loads(capsys.readouterr().out))
    assert rows[0]["predictions"] == rows[1]["predictions"]
    assert rows[0]["assumptions"]["calibration"]["measured"] == [[8, 3700.0], [64, 26000.0]]
    from_file = rows[2]["assumptions"]
    assert from_file["calibration"]["measured"] == [[1, 500.0], [8, 3700.0]]
    assert from_file["jitter"] == 0.04  # the one-rank record's variation
    assert "jitter" not in from_file["calibration"]["fitted"]


def test_jitter_from_records_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "runs.jsonl"
    bad.write_text('{"devices": 2, "throughput": 10}\n', encoding="utf-8")
    with pytest.raises(InvalidInput, match="step"):
        jitter_from(bad)
    with pytest.raises(InvalidInput):
        jitter_from(tmp_path / "missing.jsonl")


@pytest.mark.parametrize(
    "pairs",
    [
        [(1, 1e-6), (10**9, 1e21)],
        [(10**9, 1e300), (1, 1e-300)],
        [(8, 1e300)],
        [(4, 1e308), (8, 1.0)],
        [(1, 1.0), (2, 1.0), (3, 1.0), (4, 1e6)],
    ],
)
def test_measurements_past_reason_end_in_an_error_or_finite_numbers(pairs: list[tuple[int, float]]) -> None:
    try:
        p = predict_calibrated([8, 64], BERT, DGX_A100, [Reference(n, a) for n, a in pairs])
    except InvalidInput as exc:
        refused = exc.field
    else:
        refused = None
    if refused is not None:
        assert refused == "measured"
        return
    row = json.loads(json.dumps(p.to_dict(), allow_nan=False))["predictions"][1]
    assert 0 < row["efficiency_interval"][0] <= row["efficiency"] <= row["efficiency_interval"][1]


@given(workloads, clusters)
def test_the_interval_holds_the_prediction_and_stays_above_zero(workload: Workload, cluster: Cluster) -> None:
    try:
        p = predict(COUNTS, workload, cluster)
    except InvalidInput:
        return  # past floating point: refused by name, as test_sharding checks
    low, high = p.efficiency_interval
    assert np.all(low > 0)
    assert np.all(low <= p.efficiency)
    assert np.all(p.efficiency <= high)
    assert np.all(np.isfinite(high))


def test_the_table_says_what_the_calibration_found(capsys: pytest.CaptureFixture[str]) -> None:
    from dpscale.cli import main

    argv = ["predict", "-d", "8,64", "-b", "32", "-p", "330M", "--intra", "nvlink3", "--inter", "ib-hdr"]
    with pytest.raises(SystemExit):
        main([*argv, "--measured", "8:3700; 64:26000", "--no-levers", "--lang", "fr"])
    printed = capsys.readouterr().out
    assert "Calibré sur 2 mesures" in printed
    assert "variation du temps d'étape" in printed
    assert "%) (" not in printed  # E and its interval: 100 % (95–105)


@given(workloads, clusters)
def test_the_interval_stays_within_0_and_1_and_is_1_at_the_reference(workload: Workload, cluster: Cluster) -> None:
    # E ≤ 1 at and above the measured size (unless the model itself says more: a faster algorithm
    # past a node): the interval may close in on 1, never pass it; at the measured size E is the
    # reference divided by itself, and so is its interval.
    try:
        at_8 = float(predict([8], workload, cluster).actual_throughput[0])
        p = predict_calibrated(COUNTS, workload, cluster, [Reference(8, at_8)])
    except InvalidInput:
        return  # past floating point: refused by name
    low, high = p.efficiency_interval
    above = COUNTS >= 8
    ceiling = np.maximum(p.efficiency, 1.0) + 1e-9  # E at the reference is 1 within the calibration's root-finding
    assert np.all(high[above] <= ceiling[above])
    assert np.all(low > 0)
    assert np.all((low <= p.efficiency) & (p.efficiency <= high))
    assert_close(float(low[3]), 1.0, rel=1e-9)
    assert_close(float(high[3]), 1.0, rel=1e-9)
    unmeasured = predict(COUNTS, workload, cluster)  # relative to one device's compute: 1 there
    assert np.all(unmeasured.efficiency_interval[1] <= np.maximum(unmeasured.efficiency, 1.0))
    assert float(unmeasured.efficiency_interval[0][0]) == float(unmeasured.efficiency[0]) == 1.0


def test_the_readme_calibration_is_exact_at_its_measured_size_and_below_100_percent_above() -> None:
    # Before the interval was bounded this printed 100% (95–105) and 95.5% (90–101).
    cluster = Cluster(presets.link("intra", "nvlink3"), 8, presets.link("inter", "ib-hdr", nics=8))
    workload = Workload(500.0, 256, 330e6)
    p = predict_calibrated([8, 64, 512], workload, cluster, [Reference(8, 4553.0), Reference(64, 35774.0)])
    low, high = p.efficiency_interval
    assert_close(float(low[0]), 1.0, rel=1e-9)
    assert_close(float(high[0]), 1.0, rel=1e-9)
    a_low, a_high = p.actual_throughput_interval
    assert_close(float(a_low[0]), 4553.0, rel=1e-9)
    assert_close(float(a_high[0]), 4553.0, rel=1e-9)
    assert float(high[1]) < 1.0
    assert float(high[2]) < 1.0
    assert float(low[1]) < float(p.efficiency[1]) < float(high[1])  # still an interval away from the reference
