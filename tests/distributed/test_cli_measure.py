"""The measure and probe commands in-process (the runs themselves are real torchrun jobs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import run

pytestmark = pytest.mark.distributed
QUICK = ["--params", "200k", "--steps", "3", "--warmup", "1", "--repeats", "2", "--threads", "1"]


def test_measure_table_and_records(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    out = tmp_path / "runs.jsonl"
    code, printed, err = run(capsys, "measure", "--nproc", "1,2", *QUICK, "--out", str(out))
    assert code == 0, err
    assert "Measured (records added to" in printed
    assert "100%" in printed  # E of the 1-rank run
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2


def test_probe_table_profile_and_predict(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    profile = tmp_path / "network.json"
    code, printed, err = run(
        capsys, "probe", "--nproc", "2", "--max-bytes", "64KiB", "--reps", "3", "--out", str(profile)
    )
    assert code == 0, err
    assert "All-reduce over 2 ranks" in printed
    assert "profile written to" in printed
    code, printed, err = run(
        capsys, "probe", "--nproc", "2", "--max-bytes", "1KiB", "--reps", "2", "--json", "--out", str(profile)
    )
    assert json.loads(printed)["world_size"] == 2
    code, printed, err = run(
        capsys, "predict", "-d", "1,2", "-v", "1000", "-b", "16", "-p", "200k", "--network", str(profile), "--no-levers"
    )
    assert code == 0, err
    assert "Bound by" in printed


@pytest.mark.parametrize(
    ("argv", "field"),
    [
        (["measure", "--workload", "resnet"], "workload"),
        (["measure", "--params", "7B"], "params"),
        (["probe", "--max-bytes", "8GiB"], "max_bytes"),
        (["measure", "--nproc", "0"], "nproc"),
        (["measure", "--timeout", "soon"], "timeout"),
        (["measure", "--nnodes", "2"], "rdzv_endpoint"),
        (["measure", "--nnodes", "2", "--node-rank", "2", "--rdzv-endpoint", "10.0.0.1:29500"], "node_rank"),
        (["measure", "--threads", "0"], "threads"),
        (["probe", "--nproc", "1"], "nproc"),
        (["probe", "--max-bytes", "4B"], "max_bytes"),
        (["probe", "--backend", "mpi"], "backend"),
        (["measure", "--nproc", "1,2000"], "nproc"),
        (["probe", "--nproc", "1e6"], "nproc"),
        (["measure", "--batch", "1e15"], "batch"),
        (["measure", "--steps", "1e9"], "steps"),
        (["measure", "--warmup", "1e9"], "warmup"),
        (["measure", "--repeats", "1e6"], "repeats"),
        (["measure", "--timeout", "1e300s"], "timeout"),
        (["probe", "--timeout", "0.01s"], "timeout"),
        (["probe", "--reps", "1e9"], "reps"),
        (["measure", "--threads", "1e9"], "threads"),
        (["measure", "--nnodes", "0"], "nnodes"),
        (["probe", "--nnodes", "2", "--rdzv-endpoint", "node0:99999"], "rdzv_endpoint"),
    ],
)
def test_bad_input(capsys: pytest.CaptureFixture[str], argv: list[str], field: str, no_rank: None) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert err.startswith(f"error: {field}: ")
    assert err.count("\n") == 1


@pytest.fixture
def no_rank(monkeypatch: pytest.MonkeyPatch) -> None:
    from dpscale.measure import supervise

    def started(*args: object) -> None:
        raise AssertionError("a rank was started")

    monkeypatch.setattr(supervise, "run", started)


@pytest.mark.usefixtures("no_rank")
def test_a_bound_is_told_with_the_value_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = run(capsys, "measure", "--timeout", "1e300s")
    assert err == "error: timeout: got '1e300s'; expected a duration from 1 s to 24 h\n"
    _, _, err = run(capsys, "measure", "--nproc", "1,2,4096")
    assert err == "error: nproc: got '1,2,4096'; expected a whole number of ranks per node, from 1 to 1024\n"
    _, _, err = run(capsys, "probe", "--max-bytes", "8GiB")
    assert err == "error: max_bytes: got '8GiB'; expected from 8 bytes to 1024 MiB\n"


@pytest.mark.usefixtures("no_rank")
@pytest.mark.parametrize("command", ["measure", "probe"])
def test_an_output_that_cannot_be_written_is_refused_before_any_rank(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    code, _, err = run(capsys, command, "--out", str(tmp_path))
    assert code == 2
    assert err.startswith("error: out: got ")
    assert err.endswith("expected a file path, not a folder\n")
    (tmp_path / "file").write_text("")
    code, _, err = run(capsys, command, "--out", str(tmp_path / "file" / "runs.jsonl"))
    assert code == 2
    assert "file is a file)" in err


def test_network_profile_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    base = ["predict", "-d", "2", "-v", "1000", "-b", "16", "-p", "1M", "--network"]
    code, _, err = run(capsys, *base, str(tmp_path / "missing.json"))
    assert code == 2
    assert "a profile written by dpscale probe" in err
    bad = tmp_path / "bad.json"
    bad.write_text('{"intra": {"bandwidth": "fast"}}', encoding="utf-8")
    code, _, err = run(capsys, *base, str(bad))
    assert code == 2
    assert "intra tier has bandwidth and latency" in err
    empty = tmp_path / "empty.json"
    empty.write_text("{}", encoding="utf-8")
    code, _, err = run(capsys, *base, str(empty))
    assert "an intra or inter tier" in err
    across = tmp_path / "across.json"
    across.write_text(
        json.dumps({"inter": {"bandwidth": 1e9, "latency": 1e-5}, "devices_per_node": 1}), encoding="utf-8"
    )
    code, printed, err = run(capsys, *base, str(across), "--json", "--no-levers")
    assert code == 0, err
    said = json.loads(printed)["assumptions"]
    # the node's own links, which the profile did not measure, are assumed free as its fit assumed them, and said so
    assert said["sources"] == {"intra": "assumed", "inter": "probe"}
    assert said["inter"]["bandwidth"] == 1e9


def test_meter_without_a_process_group(tmp_path: Path) -> None:
    import dpscale

    out = tmp_path / "m.jsonl"
    with dpscale.Meter(out, batch=4, warmup=1, run="solo") as meter:
        for _ in range(4):
            with meter.step():
                sum(range(1000))
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["devices"] == 1
    assert record["steps"] == 3
    assert record["run"] == "solo"
    assert record["complete"] is True
    assert meter.close() is None  # closing twice writes nothing more


def test_meter_marks_an_interrupted_loop_incomplete(tmp_path: Path) -> None:
    import dpscale

    out = tmp_path / "m.jsonl"

    def broken_loop() -> None:
        with dpscale.Meter(out, batch=4, warmup=0) as meter:
            with meter.step():
                pass
            raise RuntimeError("the loop broke")

    with pytest.raises(RuntimeError, match="the loop broke"):
        broken_loop()
    assert json.loads(out.read_text(encoding="utf-8"))["complete"] is False


def test_meter_in_a_one_rank_gloo_group(tmp_path: Path) -> None:
    import torch.distributed as dist

    import dpscale

    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        meter = dpscale.Meter(tmp_path / "m.jsonl", batch=2, warmup=0)
        for _ in range(3):
            with meter.step():
                pass
        record = meter.close()
    finally:
        dist.destroy_process_group()
    assert record is not None
    assert record["backend"] == "gloo"
    assert record["devices"] == 1
