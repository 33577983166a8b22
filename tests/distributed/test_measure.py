"""dpscale measure, probe and Meter on real 2-process gloo groups, with faults injected."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dpscale import InvalidInput, RunFailed
from dpscale.fit import fit, read_points
from dpscale.measure.launcher import Launch, measure, probe
from tests.distributed.conftest import processes_mentioning, workers_left
from tests.gloo_exit import SCRIPT_ENDING

pytestmark = pytest.mark.distributed
SMALL = {"workload": "mlp", "params": 2e5, "batch": 16, "steps": 5, "warmup": 1, "repeats": 2}
BIN = Path(sys.executable).parent


def test_measure_one_and_two_ranks_writes_records_fit_reads(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    ticks: list[tuple[int, int]] = []
    found = measure([1, 2], out=out, progress=lambda done, total: ticks.append((done, total)), **SMALL)  # type: ignore[arg-type]
    assert [r.devices for r in found] == [1, 2]
    assert ticks[-1] == (4, 4)
    for record in found:
        assert record.complete is True
        assert record.backend == "gloo"
        assert record.torch
        assert record.params is not None
        assert record.params > 1e5
        assert record.throughput > 0
        assert len(record.per_rank_throughput) == record.devices
        low, high = record.throughput_ci or (None, None)
        assert low is not None
        assert high is not None
        assert low <= record.throughput <= high
    assert found[0].efficiency == 1.0
    assert found[1].efficiency is not None
    assert 0 < found[1].efficiency < 2
    assert [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] == [r.to_dict() for r in found]
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    assert [p.devices for p in read_points(out)] == [1, 2]
    assert fit(read_points(out)).chosen
    assert workers_left() == []


def test_probe_writes_a_profile_predict_reads(tmp_path: Path) -> None:
    out = tmp_path / "network.json"
    found = probe(Launch(nproc_per_node=2), max_bytes=2**16, reps=3, out=out)
    assert found is not None
    profile = found.to_dict()
    assert json.loads(out.read_text(encoding="utf-8")) == profile
    assert profile["world_size"] == 2
    sizes = [row["bytes"] for row in profile["sizes"]]
    assert sizes == sorted(sizes)
    assert sizes[0] == 8
    for row in profile["sizes"]:
        assert row["busbw"] == pytest.approx(row["algbw"])  # 2(n−1)/n = 1 for two ranks
    assert profile["intra"]["bandwidth"] > 0
    done = subprocess.run(
        [
            str(BIN / "dpscale"),
            "predict",
            "-d",
            "1,2",
            "-v",
            "1000",
            "-b",
            "16",
            "-p",
            "200k",
            "--network",
            str(out),
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["assumptions"]["intra"]["bandwidth"] == pytest.approx(profile["intra"]["bandwidth"])


def test_a_crashed_rank_is_named_and_nothing_is_recorded(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    cluster = Launch(timeout=20, env={"DPSCALE_FAULT": "crash:1:2"})
    start = time.monotonic()
    with pytest.raises(RunFailed) as caught:
        measure([2], cluster=cluster, out=out, **{**SMALL, "repeats": 1})  # type: ignore[arg-type]
    assert time.monotonic() - start < 60
    message = str(caught.value)
    assert "rank 1 exited with status 3; rank 0 was then stopped by torchrun" in message
    assert message.endswith("; no record written")
    for noise in ("error_file", "<N/A>", "https://", "Traceback", "traceback", "ChildFailedError"):
        assert noise not in message  # torchrun's own words
    assert not out.exists()
    assert workers_left() == []


def test_a_failure_after_a_recorded_size_says_that_record_is_kept(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    cluster = Launch(timeout=20, env={"DPSCALE_FAULT": "crash:1:1"})  # rank 1 exists at 2 ranks only
    with pytest.raises(RunFailed) as caught:
        measure([1, 2], cluster=cluster, out=out, **{**SMALL, "repeats": 1})  # type: ignore[arg-type]
    message = str(caught.value)
    assert message.startswith("train on 2 ranks did not complete: rank 1 exited with status 3")
    assert message.endswith(f"; no record written at this size; the record for 1 rank, measured before, is in {out}")
    assert [json.loads(line)["devices"] for line in out.read_text(encoding="utf-8").splitlines()] == [1]


def test_a_rank_that_never_joins(tmp_path: Path) -> None:
    cluster = Launch(timeout=5, env={"DPSCALE_FAULT": "absent:1"})
    start = time.monotonic()
    with pytest.raises(RunFailed) as caught:
        measure([2], cluster=cluster, out=tmp_path / "runs.jsonl", **{**SMALL, "repeats": 1})  # type: ignore[arg-type]
    assert time.monotonic() - start < 60
    assert "rank 1 never joined" in str(caught.value) or "rendezvous did not form" in str(caught.value)
    assert workers_left() == []


def test_a_hung_rank_is_stopped_by_the_timeout(tmp_path: Path) -> None:
    cluster = Launch(timeout=5, env={"DPSCALE_FAULT": "hang:1:2"})
    start = time.monotonic()
    with pytest.raises(RunFailed) as caught:
        measure([2], cluster=cluster, out=tmp_path / "runs.jsonl", **{**SMALL, "repeats": 1})  # type: ignore[arg-type]
    assert time.monotonic() - start < 60
    message = str(caught.value)
    assert "rank 1" in message
    assert workers_left() == []


def test_nccl_without_a_gpu_is_refused() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: NCCL is available")  # the CI machine has none
    with pytest.raises(InvalidInput, match="NCCL needs one"):
        measure([1], cluster=Launch(backend="nccl"), **SMALL)  # type: ignore[arg-type]


def _two_ranks(script: Path) -> None:
    """Run ``script`` as a 2-rank torchrun job (one thread each); it must succeed."""
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2", str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    # What a rank printed before it died (gloo's reason for an abort) comes before torchrun's summary.
    assert done.returncode == 0, done.stderr[:3000] + "\n...\n" + done.stderr[-1500:]


def test_meter_in_a_real_two_rank_loop(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    out = tmp_path / "meter.jsonl"
    script.write_text(
        textwrap.dedent(
            f"""
            import os, sys, torch, torch.distributed as dist
            from torch import nn
            from dpscale import Meter
            dist.init_process_group("gloo")
            model = nn.parallel.DistributedDataParallel(nn.Linear(64, 64))
            opt = torch.optim.SGD(model.parameters(), lr=0.01)
            x = torch.randn(8, 64)
            with Meter({str(out)!r}, batch=8, warmup=2, workload="linear") as meter:
                for _ in range(12):
                    with meter.step():
                        opt.zero_grad()
                        model(x).sum().backward()
                        opt.step()
            dist.destroy_process_group()
            """
        )
        + SCRIPT_ENDING,
        encoding="utf-8",
    )
    _two_ranks(script)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 1  # rank 0 alone writes
    record = records[0]
    assert record["devices"] == 2
    assert record["steps"] == 10
    assert record["complete"] is True
    assert record["workload"] == "linear"
    assert len(record["per_rank_throughput"]) == 2


def test_meter_watching_ddp_records_where_the_step_goes(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    out = tmp_path / "meter.jsonl"
    script.write_text(
        textwrap.dedent(
            f"""
            import os, sys, torch, torch.distributed as dist
            from torch import nn
            from dpscale import Meter
            dist.init_process_group("gloo")
            opt = None
            x = torch.randn(16, 512)
            with Meter({str(out)!r}, batch=16, warmup=2) as meter:
                layers = nn.Sequential(*[nn.Linear(512, 512) for _ in range(4)])
                model = meter.watch(nn.parallel.DistributedDataParallel(layers, bucket_cap_mb=1))
                opt = torch.optim.SGD(model.parameters(), lr=0.01)
                for _ in range(10):
                    with meter.step():
                        opt.zero_grad()
                        model(x).sum().backward()
                        opt.step()
            dist.destroy_process_group()
            """
        )
        + SCRIPT_ENDING,
        encoding="utf-8",
    )
    _two_ranks(script)
    record = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert record["steps"] == 8
    # four 1 MB buckets in flight every step, some of it after the last gradient is made
    assert record["communication_time"] > 0
    assert 0 < record["exposed_communication"] <= record["communication_time"]
    assert record["communication_time"] < record["step_time"]["mean"]


def test_cli_measure_json_and_failure_exit(tmp_path: Path) -> None:
    argv = [str(BIN / "dpscale"), "measure", "--nproc", "1", "--params", "200k", "--steps", "3", "--warmup", "1"]
    done = subprocess.run(
        [*argv, "--repeats", "1", "--out", str(tmp_path / "r.jsonl"), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["devices"] == 1
    failed = subprocess.run(
        [*argv, "--nproc", "2", "--repeats", "1", "--out", str(tmp_path / "f.jsonl"), "--timeout", "20s"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "DPSCALE_FAULT": "crash:0:1"},
    )
    assert failed.returncode == 1
    assert failed.stderr.startswith("error: train on 2 ranks did not complete")
    assert "Traceback" not in failed.stderr
    bad = subprocess.run([*argv, "--backend", "mpi"], capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: backend: got 'mpi'")


def wait_for_both_ranks(proc: subprocess.Popen[str], temp: Path) -> None:
    """Until the run under ``temp`` (its TMPDIR) has both ranks joined: then a signal meets it running."""
    deadline = time.monotonic() + 180
    while len(list(temp.glob("dpscale-*/status/joined-*"))) < 2 and proc.poll() is None:
        assert time.monotonic() < deadline, "the ranks never joined"
        time.sleep(0.1)
    assert proc.poll() is None, proc.communicate()


def test_ctrl_c_stops_every_process(tmp_path: Path) -> None:
    # Signalled once this run's two ranks have joined (its own folder, under its own TMPDIR), not as
    # soon as any worker exists: a worker left by another test, or a run that ends first, would
    # otherwise decide the outcome.
    temp = tmp_path / "temp"
    temp.mkdir()
    proc = subprocess.Popen(
        [str(BIN / "dpscale"), *LONG["measure"], "--threads", "1", "--out", str(tmp_path / "r.jsonl")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(temp)},
        # Ctrl-C as a terminal sends it: a suite started in the background by a script inherits
        # SIGINT ignored, and an ignored signal stays ignored across exec.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        wait_for_both_ranks(proc, temp)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()  # its pipes closed, not left to the garbage collector
    assert proc.returncode == 130
    assert "interrupted" in err
    deadline = time.monotonic() + 30
    while processes_mentioning(str(temp)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert processes_mentioning(str(temp)) == []
    assert not (tmp_path / "r.jsonl").exists()


LONG = {
    # Long enough to be running when the signal comes: the test waits for both ranks to join, then signals.
    "measure": ["measure", "--nproc", "2", "--params", "200k", "--steps", "100000", "--repeats", "1"],
    "probe": ["probe", "--nproc", "2", "--max-bytes", "8B", "--reps", "100000"],
}


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="reads the process table in /proc")
@pytest.mark.parametrize(
    ("command", "sig", "status"),
    [
        ("measure", signal.SIGTERM, 143),
        ("measure", signal.SIGHUP, 129),
        ("measure", signal.SIGKILL, -9),
        ("probe", signal.SIGTERM, 143),
        ("probe", signal.SIGKILL, -9),
    ],
)
def test_a_signal_ends_every_process_and_removes_the_run_folder(
    tmp_path: Path, command: str, sig: signal.Signals, status: int
) -> None:
    temp = tmp_path / "temp"  # the run's folder goes here, and every process of the run names it
    temp.mkdir()
    proc = subprocess.Popen(
        [str(BIN / "dpscale"), *LONG[command], "--threads", "1", "--out", str(tmp_path / "out")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(temp)},
    )
    try:
        wait_for_both_ranks(proc, temp)
        assert len(processes_mentioning(str(temp))) >= 3  # torchrun and two workers
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == status
    if sig != signal.SIGKILL:
        assert f"dpscale: stopped by {sig.name}; every process of the run was ended" in err
        assert "Traceback" not in err
    deadline = time.monotonic() + 60  # SIGKILL: torchrun dies with dpscale, the workers see it and leave
    while (processes_mentioning(str(temp)) or list(temp.glob("dpscale-*"))) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_mentioning(str(temp)) == []
    assert list(temp.glob("dpscale-*")) == []  # the run's folder, torchrun's files in it
    assert list(temp.glob("torchelastic_*")) == []
    assert not (tmp_path / "out").exists()
