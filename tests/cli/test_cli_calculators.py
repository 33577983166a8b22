"""`dpscale batch`, `dpscale bubble` and `dpscale plan`, through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import NBSP, NNBSP, run


def test_batch_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "batch", "32", "4", "64", "-L", "2048", "--base-lr", "0.1", "--base-batch", "256")
    assert (code, err) == (0, "")
    assert "8,192" in out
    assert "16,777,216" in out
    assert "3.2" in out


def test_batch_solves_accumulation_and_devices(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "batch", "32", "1", "64", "--target", "10000")
    assert code == 0
    assert "Target 10,000: the nearest whole number gives 10,240, 240 above it." in out
    code, out, _ = run(capsys, "batch", "32", "--target", "1000", "--solve", "devices", "--json")
    payload = json.loads(out)
    assert (payload["devices"], payload["global_batch"], payload["difference"]) == (32, 1024, 24)


def test_batch_in_french(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "batch", "32", "4", "64", "--lang", "fr")
    assert code == 0
    assert f"8{NNBSP}192" in out
    assert "Lot global" in out


def test_bubble_table_json_and_plot(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "bubble", "4", "8", "--time", "120 ms")
    assert code == 0
    assert "27.27%" in out
    assert "1.32 sec" in out
    code, out, err = run(capsys, "bubble", "4", "8", "--schedule", "gpipe", "--json", "--plot", str(tmp_path / "s.svg"))
    assert code == 0
    assert json.loads(out)["bubble_fraction"] == pytest.approx(3 / 11)
    assert "<svg" in (tmp_path / "s.svg").read_text(encoding="utf-8")
    assert "chart written" in err


def test_bubble_finds_micro_batches(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "bubble", "8", "--max-bubble", "5%", "--schedule", "interleaved", "--chunks", "2", "--json"
    )
    assert code == 0
    payload = json.loads(out)
    assert payload["micro_batches"] % 8 == 0
    assert payload["bubble_fraction"] <= 0.05


def test_plan_and_deadline(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "plan",
        "--work",
        "1.28e9",
        "--per-device",
        "2000",
        "-e",
        "90%",
        "-d",
        "64",
        "--price",
        "2.5",
        "--watts",
        "700",
    )
    assert code == 0
    assert "3 hr 5 min" in out
    assert "$493.83" in out
    assert "138.3 kWh" in out
    code, out, _ = run(
        capsys, "plan", "--work", "1.28e9", "--per-device", "2000", "-e", "90%", "--deadline", "36h", "--json"
    )
    payload = json.loads(out)
    assert payload["plan"]["devices"] == 6
    assert payload["plan"]["seconds"] <= 36 * 3600


def test_plan_in_french(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "plan", "--work", "1,28e9", "--per-device", "2 000", "-e", "90 %", "--deadline", "1,5 j", "--lang", "fr"
    )
    assert code == 0
    assert f"1{NNBSP}j 12{NNBSP}h" in out or f"1{NBSP}j 12{NBSP}h" in out


@pytest.mark.parametrize(
    ("argv", "field"),
    [
        (["batch", "0"], "micro_batch"),
        (["batch", "32", "--target", "1000", "--solve", "stages"], "solve"),
        (["batch", "32", "--base-lr", "0.1"], "base_batch"),
        (["bubble", "4"], "micro_batches"),
        (["bubble", "4", "8", "--schedule", "zigzag"], "schedule"),
        (["bubble", "4", "8", "--time", "120"], "time"),
        (["plan", "--work", "1e9", "--per-device", "2000", "-e", "0.9"], "devices"),
        (["plan", "--work", "1e9", "--per-device", "2000", "-e", "0.9", "--deadline", "soon"], "deadline"),
        (["plan", "--work", "-1", "--per-device", "2000", "-e", "0.9", "-d", "8"], "work"),
        (
            ["plan", "--work", "1e9", "--per-device", "2000", "-e", "0.9", "-d", "8", "--currency", "dollars"],
            "currency",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], field: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.startswith(f"error: {field}: ")
    assert err.count("\n") == 1


PREDICT = ["predict", "--devices", "8,64", "--per-device", "938", "--batch", "256", "--params", "25.6M"]


def test_predict_table_and_levers(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *PREDICT, "--intra", "nvlink3", "--inter", "ib-hdr", "--nics", "4")
    assert (code, err) == (0, "")
    assert "95.9% (89–100)" in out  # E and its interval, as the page shows them
    assert "Levers at 64 devices, best first" in out
    assert "balance the load: no step-time variation" in out


def test_predict_table_is_whole_in_a_pipe(capsys: pytest.CaptureFixture[str]) -> None:
    # Nine columns are wider than the 80 Rich assumes when output is not a terminal: the table is
    # printed at its natural width, never with numbers cut to "15.19…".
    devices = "8,16,64,256,1024,4096"
    code, out, _ = run(capsys, *PREDICT[:2], devices, *PREDICT[3:], "--intra", "nvlink3", "--inter", "ib-hdr")
    assert code == 0
    assert "…" not in out
    header = next(line for line in out.splitlines() if "Bound by" in line)
    assert len(header.rstrip()) > 80
    assert all(word in header for word in ("Devices", "Compute", "Comm.", "Wait", "Bound by"))
    assert "4,096" in out
    assert "stragglers" in out


def test_predict_with_an_input_pipeline(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *PREDICT, "--intra", "nvlink3", "--input-rate", "6,000")
    assert (code, err) == (0, "")
    header = next(line for line in out.splitlines() if "Bound by" in line)
    assert "Input" in header
    assert "68.4 ms" in out  # 8·256/6000 − 256/938 s at 8 and at 64 devices
    assert "Input: waiting for the node's input pipeline, shared by its devices." in out
    assert out.index("double the input pipeline's throughput") < out.index("balance the load")
    code, out, err = run(capsys, *PREDICT, "--intra", "nvlink3", "--input-rate", "500")
    assert (code, out) == (2, "")
    assert err.startswith("error: input_rate: got '500'; expected at least the per-device throughput")


def test_predict_json_with_numbers_and_units(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        *PREDICT,
        "--intra-bw",
        "300GB/s",
        "--inter-bw",
        "100Gb/s",
        "--inter-latency",
        "10us",
        "--algorithm",
        "ring",
        "--no-overlap",
        "--bucket",
        "25MB",
        "--jitter",
        "0",
        "--json",
    )
    assert code == 0
    payload = json.loads(out)
    rows = payload["predictions"]
    assert [r["devices"] for r in rows] == [8, 64]
    assert rows[0]["step_time"]["straggler_wait"] == 0
    assert rows[1]["step_time"]["exposed_communication"] == pytest.approx(rows[1]["step_time"]["communication"])
    assert payload["assumptions"]["inter"]["bandwidth"] == 12.5e9
    assert payload["assumptions"]["buckets"] == 5  # 102.4 MB in 25 MB buckets
    assert {lever["name"] for lever in payload["levers"]} >= {"overlap", "batch"}


def test_predict_range_in_french(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run(
        capsys,
        "predict",
        "-d",
        "1..1024",
        "-v",
        "938",
        "-b",
        "256",
        "-p",
        "25,6M",
        "--intra",
        "nvlink3",
        "--inter",
        "ib-hdr",
        "--no-levers",
        "--lang",
        "fr",
    )
    assert code == 0
    assert f"1{NNBSP}024" in out
    assert "100 %" in out.replace(NBSP, " ")


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ([], "intra_bw"),
        (["--intra", "nvlink9"], "intra"),
        (["--intra-bw", "300"], "intra_bw"),
        (["--intra", "nvlink3", "--intra-bw", "300GB/s"], "intra_bw"),
        (["--intra", "nvlink3", "--algorithm", "butterfly"], "algorithm"),
        (["--intra", "nvlink3", "--jitter", "150%"], "jitter"),
        (["--intra", "nvlink3", "--bucket", "25"], "bucket"),
        (["--intra", "nvlink3", "--inter-latency", "5us"], "inter_bw"),
    ],
)
def test_predict_bad_input(capsys: pytest.CaptureFixture[str], extra: list[str], field: str) -> None:
    code, _out, err = run(capsys, *PREDICT, *extra)
    assert code == 2
    assert err.startswith(f"error: {field}: ")
    assert err.count("\n") == 1


FP32 = "devices,throughput\n1,367.29\n4,1449.48\n8,2887.65\n16,5716.79\n"


def test_fit_table_predictions_and_plot(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    runs = tmp_path / "runs.csv"
    runs.write_text(FP32, encoding="utf-8")
    code, out, _err = run(capsys, "fit", str(runs), "--at", "32,64", "--plot", str(tmp_path / "fit.svg"))
    assert code == 0
    assert "Chosen model: amdahl" in out
    assert "Predicted by amdahl" in out
    assert "11,209" in out
    assert "<svg" in (tmp_path / "fit.svg").read_text(encoding="utf-8")


def test_fit_json_and_one_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    runs = tmp_path / "runs.csv"
    runs.write_text(FP32, encoding="utf-8")
    code, out, _ = run(capsys, "fit", str(runs), "--model", "usl", "--at", "32", "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["chosen"] == "usl"
    assert [m["model"] for m in payload["models"]] == ["usl"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("gpus,samples\n1,2\n", "found gpus, samples"),
        ("devices,throughput\n1,abc\n2,3\n", "line 2, column throughput"),
        ("", "devices,throughput header"),
        ("devices,throughput\n4,100\n", "two or more cluster sizes"),
    ],
)
def test_fit_bad_files(capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, expected: str) -> None:
    runs = tmp_path / "runs.csv"
    runs.write_text(content, encoding="utf-8")
    code, _out, err = run(capsys, "fit", str(runs))
    assert code == 2
    assert expected in err
    assert err.count("\n") == 1


# The commands that read a file the user names: a measurement file, a network profile, a profiler trace.
READERS = {
    "explain": ["explain"],
    "fit": ["fit"],
    "plan --fit": ["plan", "--work", "1e9", "-d", "8", "--fit"],
    "predict --network": ["predict", "-d", "2", "-v", "1000", "-b", "16", "-p", "1M", "--network"],
}
HOSTILE = {
    "one 4 MB line": b"devices,throughput\n1," + b"9" * (4 * 2**20) + b"\n",
    "nested 50 000 deep": b'{"devices": ' + b"[" * 50_000 + b"\n",
    "5000 digits": b'{"devices": ' + b"1" * 5000 + b', "throughput": 5}\n',
    "binary": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    "latin-1": b"devices,throughput\n1,2\n2,3\xe9\n",
}


@pytest.mark.parametrize("content", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize("command", READERS.values(), ids=READERS.keys())
def test_hostile_files_are_one_short_line_naming_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: list[str], content: bytes
) -> None:
    path = tmp_path / "runs.data"
    path.write_bytes(content)
    code, out, err = run(capsys, *command, str(path))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert path.name in err  # a long path is cut in its middle: the file's name stays
    assert len(err) < 300, err[:300]


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
@pytest.mark.parametrize("command", READERS.values(), ids=READERS.keys())
def test_dev_zero_is_refused_in_one_line(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    code, out, err = run(capsys, *command, "/dev/zero")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert "/dev/zero" in err
    assert len(err) < 300, err[:300]


def test_plan_with_a_fitted_curve(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    runs = tmp_path / "runs.csv"
    runs.write_text(FP32, encoding="utf-8")
    code, out, _ = run(capsys, "plan", "--work", "1e9", "--fit", str(runs), "--deadline", "2h", "--json")
    assert code == 0
    payload = json.loads(out)
    efficiencies = [o["efficiency"] for o in payload["options"]]
    assert efficiencies == sorted(efficiencies, reverse=True)  # E falls with size, as fitted
    assert efficiencies[0] < 1
    code, _, err = run(capsys, "plan", "--work", "1e9", "-e", "0.9", "--fit", str(runs), "-d", "8")
    assert code == 2
    assert err.startswith("error: efficiency: ")


def test_fit_with_too_few_points_shows_no_nan(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    runs = tmp_path / "runs.csv"
    runs.write_text("devices,throughput\n1,100\n2,190\n", encoding="utf-8")
    code, out, _ = run(capsys, "fit", str(runs), "--at", "4")
    assert code == 0
    assert "NaN" not in out
    assert "—" in out  # no interval to show


def test_predict_overflowing_inputs_are_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "predict", "-d", "8", "-v", "1e-300", "-b", "1e300", "-p", "1M", "--intra", "nvlink3")
    assert code == 2
    assert err.startswith("error: per_device: got '1e-300'; expected a value from 10⁻⁶ to 10¹²")  # as typed
    assert err.count("\n") == 1


def test_plan_epochs_past_their_bound_name_epochs(capsys: pytest.CaptureFixture[str]) -> None:
    # Within the definition's bounds the work (1e27) stays finite; past them, the input at fault is named.
    code, _, err = run(capsys, "plan", "--work", "1e18", "--epochs", "1e300", "-v", "1", "-e", "1", "-d", "1")
    assert code == 2
    assert err.startswith("error: epochs: ")


def test_huge_batches_are_written_short(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "batch", "1e9", "1e9", "1e9")
    assert (code, err) == (0, "")
    assert "1E27" in out  # 28 digits and more are written in scientific notation, never a traceback


@pytest.mark.parametrize(
    ("option", "typed", "said"),
    [
        (["--inter", "ib-ndr", "--inter-bw", "100Mb/s"], "100Mb/s", "inter_bw: got '100Mb/s'"),
        (["--intra", "nvlink3", "--input-rate", "50"], "50", "input_rate: got '50'"),
    ],
)
def test_a_refusal_quotes_what_was_typed_not_the_number_read(
    capsys: pytest.CaptureFixture[str], option: list[str], typed: str, said: str
) -> None:
    code, _, err = run(capsys, "predict", "-d", "8,64", "-v", "100", "-b", "32", "-p", "25M", *option)
    assert code == 2
    assert err.startswith(f"error: {said};"), err
