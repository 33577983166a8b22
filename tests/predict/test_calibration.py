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
from dpscale.predict.definition import PREDICT
from dpscale.predict.measured import jitter_from
from dpscale.predict.model import Cluster, Reference, Workload, predict
from dpscale.predict.wording import calibration_line
from tests.conftest import assert_close
from tests.predict.test_sharding import COUNTS, clusters, workloads

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
    for name, found in fitted.items():  # one size sets the compute speed and says nothing of the unknowns
        assert found["learned"] == "prior"
        assert_close(found["value"], uncertainty.PRIORS[name].median, rel=1e-9)
        assert found["posterior"] == {
            "median": found["value"],
            "low": found["prior"]["low"],
            "high": found["prior"]["high"],
        }
    # the same estimate as the model relative to that measurement: one set of values for both
    plain = predict([8, 64, 512], BERT, DGX_A100, reference=Reference(8, 3600.0))
    assert np.allclose(p.efficiency, plain.efficiency, rtol=1e-9)
    assert np.allclose(p.efficiency_interval, plain.efficiency_interval, rtol=1e-9)


def test_several_measurements_are_given_back() -> None:
    # cv, the share and the interference all lower E as nodes are added: together they give the series
    # back within half a measurement's spread (1.5 %), and what the series cannot tell apart is said so.
    measured = synthetic(cv=0.10, share=0.5)
    fit = calibrate(measured, BERT, DGX_A100)
    for m, back in zip(measured, fit.given_back, strict=True):
        assert_close(back, m.throughput, rel=0.015)
    learned = {found.name: found for found in fit.learned}
    assert {found.status for found in fit.learned} <= {"fitted", "prior", "joint"}
    assert any(found.status != "prior" for found in fit.learned)
    for found in fit.learned:
        if found.status == "prior":  # kept: its median as well as its range
            assert_close(found.median, found.prior.median, rel=1e-9)
        if found.status == "joint":
            assert all(learned[other].status == "joint" for other in found.joint_with)


def test_within_one_node_the_variation_is_found() -> None:
    node = Cluster(presets.link("intra", "nvlink3"), 64)  # no network: cv and ρ
    truth = replace(node, jitter=0.10, interference=0.3)
    sizes = [1, 2, 8, 64]
    measured = [
        Reference(n, float(a)) for n, a in zip(sizes, predict(sizes, BERT, truth).actual_throughput, strict=True)
    ]
    fit = calibrate(measured, BERT, node)
    assert fit.names == ("jitter", "interference")
    jitter = fit.to_dict()["fitted"]["jitter"]
    assert jitter["learned"] in ("fitted", "joint")
    assert jitter["low"] < 0.10 < jitter["high"]  # the truth in the posterior's 90 % range
    assert fit.values["jitter"] > 0.06  # moved most of the way from the prior's 2 %
    for m, back in zip(measured, fit.given_back, strict=True):
        assert_close(back, m.throughput, rel=0.015)  # each size given back within half a spread


def test_measurements_narrow_the_interval() -> None:
    one = predict_calibrated([1024], BERT, DGX_A100, synthetic(0.05, 0.6, [8]))
    four = predict_calibrated([1024], BERT, DGX_A100, synthetic(0.05, 0.6))
    low1, high1 = one.efficiency_interval
    low4, high4 = four.efficiency_interval
    # what four sizes cannot tell apart keeps its prior's range: narrower by a fifth at least, not more
    assert float(high4[0] - low4[0]) < 0.8 * float(high1[0] - low1[0])


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
    printed = " ".join(capsys.readouterr().out.split())  # as read, whatever the terminal's width
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


# -- measurements checked against the rest, and what a calibration learned ----------------------------

COMMON = ["predict", "-d", "8,64", "-b", "256", "-p", "25.6M", "--intra", "nvlink3", "--inter", "ib-hdr"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    from dpscale.cli import main

    with pytest.raises(SystemExit) as exited:
        main([*COMMON, *argv])
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), out, err


def test_a_throughput_above_what_the_devices_allow_is_refused_naming_both(capsys: pytest.CaptureFixture[str]) -> None:
    # 62 000 samples/s on 8 devices is 8.3 times d·v at 938: before, taken silently as E = 92.9 % (2–100).
    code, out, err = run(capsys, "--per-device", "938", "--measured", "8:62000")
    assert (code, out) == (2, "")
    assert err.startswith(
        "error: measured: got '8:62000'; expected at most what 8 devices at the per-device throughput 938"
    )
    assert "d·v = 7504" in err
    with pytest.raises(InvalidInput) as caught:
        predict_calibrated([8], Workload(938, 256, 25.6e6), DGX_A100, [Reference(8, 62000)], speed_known=True)
    assert caught.value.field == "measured"


def test_a_throughput_a_little_above_d_v_is_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--per-device", "938", "--measured", "8:7600", "--json")
    assert code == 0
    warnings = json.loads(out)["warnings"]
    assert warnings[0].startswith("The measurement 8:7600 is above what 8 devices at the per-device throughput 938")
    code, table, said = run(capsys, "--per-device", "938", "--measured", "8:7600", "--no-levers")
    assert "warning" not in table  # on standard error: what a pipe keeps is the table
    assert "warning: The measurement 8:7600 is above" in " ".join(said.split())


def test_measurements_that_contradict_the_rest_are_warned_of(capsys: pytest.CaptureFixture[str]) -> None:
    # 64 devices at 1.22 times the efficiency of 8, over one HDR card a node: the fit runs into the
    # priors' bounds and cannot give 64 back; said in the JSON and the table, not taken silently.
    argv = ["--measured", "8:3700; 64:36000", "-b", "32", "-p", "330M"]
    code, out, _ = run(capsys, *argv, "--json")
    assert code == 0
    warnings = json.loads(out)["warnings"]
    assert any("at the bounds of what they may be" in w and "8:3700, 64:36000" in w for w in warnings)
    assert any("gives back the measurement 64:36000" in w for w in warnings)
    _, table, said = run(capsys, *argv, "--no-levers")
    assert "warning" not in table
    assert " ".join(said.split()).count("warning:") == len(warnings)
    fine = predict_calibrated([8, 64], BERT, DGX_A100, synthetic(0.03, 0.7, [8, 64]))
    assert fine.warnings == ()


def test_two_measured_sizes_are_given_back() -> None:
    # The README's example: before, 64 came back at 95.5 % where 98.2 % was measured.
    cluster = Cluster(presets.link("intra", "nvlink3"), 8, presets.link("inter", "ib-hdr", nics=8))
    measured = [Reference(8, 4553.0), Reference(64, 35774.0)]
    p = predict_calibrated([1, 4, 8, 64, 512], Workload(500.0, 256, 330e6), cluster, measured)
    assert_close(float(p.actual_throughput[2]), 4553.0, rel=1e-9)
    assert_close(float(p.actual_throughput[3]), 35774.0, rel=0.015)  # within half a measurement's spread
    low, high = p.efficiency_interval
    measured_e = 35774.0 / 64 / (4553.0 / 8)
    assert float(low[3]) < measured_e < float(high[3])
    assert np.all(p.efficiency[:2] > 1)  # below the measured size: more per device, and the range reaches up
    assert np.all(high[:2] > p.efficiency[:2])
    assert np.all(low[:2] < p.efficiency[:2])
    assert p.warnings == ()


def test_the_calibration_says_each_unknowns_prior_and_posterior() -> None:
    node = Cluster(presets.link("intra", "nvlink3"), 64)
    truth = replace(node, jitter=0.06, interference=0.5)
    sizes = [1, 2, 8, 64]
    measured = [
        Reference(n, float(a)) for n, a in zip(sizes, predict(sizes, BERT, truth).actual_throughput, strict=True)
    ]
    p = predict_calibrated([8, 64], BERT, node, measured)
    fitted = p.assumptions["calibration"]["fitted"]
    assert set(fitted) == {"jitter", "interference"}
    for name, found in fitted.items():
        assert found["prior"] == uncertainty.PRIORS[name].to_dict()
        posterior = found["posterior"]
        assert posterior["low"] < posterior["median"] < posterior["high"]
    # cv and ρ both slow every size but one: the sizes tell their joint effect, not each
    assert fitted["jitter"]["learned"] == fitted["interference"]["learned"] == "joint"
    assert fitted["jitter"]["joint_with"] == ["interference"]
    line = calibration_line(p, "en")
    assert line is not None
    assert "step-time variation" in line
    assert "not told apart from interference" in line
    assert dict(p.sources)["straggler_wait"] == "fitted"
    assert dict(p.sources)["compute"] == "fitted"


def test_what_the_measurements_say_nothing_of_keeps_its_prior_median_and_all() -> None:
    # Two sizes across nodes: the network's share and ρ move together; cv is not told apart at all.
    truth = uncertainty.apply(DGX_A100, {"jitter": 0.04, "network_share": 0.5, "interference": 0.3})
    measured = [
        Reference(n, float(a)) for n, a in zip([8, 64], predict([8, 64], BERT, truth).actual_throughput, strict=True)
    ]
    fit = calibrate(measured, BERT, DGX_A100)
    learned = {found.name: found for found in fit.learned}
    assert learned["jitter"].status == "prior"
    assert learned["jitter"].median == pytest.approx(uncertainty.PRIORS["jitter"].median, rel=1e-9)
    assert (learned["jitter"].low, learned["jitter"].high) == (
        learned["jitter"].prior.low,
        learned["jitter"].prior.high,
    )
    line = calibration_line(predict_calibrated([64], BERT, DGX_A100, measured), "en")
    assert line is not None
    assert "kept at their priors, of which the measurements say nothing: step-time variation 2%" in line
