"""The launcher's checks and diagnosis, without starting a rank.

Every input, the output path included, is refused before any rank starts (``_run`` is replaced by
one that fails the test), and a failed run is told from torchrun's log in clean sentences.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest

from dpscale import InvalidInput, MissingInput, RunFailed
from dpscale.measure import diagnosis, launch, launcher, supervise
from dpscale.measure.launch import writable
from dpscale.measure.launcher import Launch, measure, probe
from dpscale.records import Measurement, NetworkProfile

pytestmark = pytest.mark.distributed
SMALL: dict[str, Any] = {"workload": "mlp", "params": 2e5, "batch": 16, "steps": 5, "warmup": 1, "repeats": 1}

# torchrun's log when rank 1 exits with status 3 at its second step (torch 2.13, trimmed).
CRASH = """\
[rank0]: Traceback (most recent call last):
[rank0]:   File "<frozen runpy>", line 198, in _run_module_as_main
[rank0]:     loss_fn(net(x), y).backward()
[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:537] Read error \
[127.0.0.1]:44265: Connection reset by peer. This is typically caused by a remote worker hanging or bugs in the \
application. Check the logs of the remote worker before reporting an error. GLHF!
W1203 17:51:07.811000 5927 torch/distributed/elastic/multiprocessing/api.py:1028] Sending process 5931 closing \
signal SIGTERM
E1203 17:51:07.876000 5927 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: 3) local_rank: 1 \
(pid: 5932) of binary: /usr/bin/python
Traceback (most recent call last):
  File "/usr/lib/python3.11/site-packages/torch/distributed/launcher/api.py", line 383, in launch_agent
    raise ChildFailedError(
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
dpscale.measure.worker FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2026-12-03_17:51:07
  host      : localhost
  rank      : 0 (local_rank: 0)
  exitcode  : -15 (pid: 5931)  (SIGTERM)
  error_file: <N/A>
  traceback : Signal 15 (SIGTERM) received by PID 5931
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-12-03_17:51:07
  host      : localhost
  rank      : 1 (local_rank: 1)
  exitcode  : 3 (pid: 5932)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================
"""

TORCHRUN_NOISE = ("error_file", "<N/A>", "https://", "Traceback", "traceback", "ChildFailedError", "pair.cc", "GLHF")


def _log(tmp_path: Path, text: str, joined: tuple[int, ...] = (0, 1)) -> tuple[Path, Path]:
    status = tmp_path / "status"
    status.mkdir()
    for rank in joined:
        (status / f"joined-{rank}").write_text("0")
    log = tmp_path / "torchrun.log"
    log.write_text(text)
    return status, log


def test_a_crash_is_told_in_clean_sentences_root_cause_first(tmp_path: Path) -> None:
    status, log = _log(tmp_path, CRASH)
    message = diagnosis.diagnose("train", status, 2, log, 1, False, 20)
    assert message == (
        "train on 2 ranks did not complete: rank 1 exited with status 3; rank 0 was then stopped by torchrun"
    )


def test_the_exception_a_rank_raised_is_its_cause(tmp_path: Path) -> None:
    raised = CRASH.replace("[rank0]: RuntimeError", "[rank1]: ValueError: the batch is empty. More words.\n[rank0]: X")
    status, log = _log(tmp_path, raised)
    message = diagnosis.diagnose("train", status, 2, log, 1, False, 20)
    assert "rank 1 exited with status 3 (ValueError: the batch is empty)" in message
    assert not any(noise in message for noise in TORCHRUN_NOISE), message


def test_a_hung_rank_is_named_before_the_one_that_waited_for_it(tmp_path: Path) -> None:
    hung = (
        CRASH.replace("Read error [127.0.0.1]:44265: Connection reset by peer", "Timed out waiting 5000ms for recv")
        .replace("rank      : 0 (local_rank: 0)", "rank      : X")
        .replace("rank      : 1 (local_rank: 1)", "rank      : 0 (local_rank: 0)")
        .replace("rank      : X", "rank      : 1 (local_rank: 1)")
        .replace("exitcode  : 3 (pid: 5932)", "exitcode  : 1 (pid: 5932)")
    )
    status, log = _log(tmp_path, hung)
    message = diagnosis.diagnose("train", status, 2, log, 1, False, 5)
    assert message == (
        "train on 2 ranks did not complete: rank 1 stopped responding and was ended (SIGTERM); "
        "rank 0 exited with status 1 (timed out waiting for the others)"
    )


def test_a_rank_that_never_joined_is_not_said_to_have_been_stopped(tmp_path: Path) -> None:
    absent = (
        CRASH.replace("[rank0]: RuntimeError: [/__w", "torch.distributed.DistStoreError: wait timeout after 5000ms\n[")
        .replace("rank      : 0 (local_rank: 0)", "rank      : X")
        .replace("rank      : 1 (local_rank: 1)", "rank      : 0 (local_rank: 0)")
        .replace("rank      : X", "rank      : 1 (local_rank: 1)")
        .replace("exitcode  : 3 (pid: 5932)", "exitcode  : 1 (pid: 5932)")
    )
    status, log = _log(tmp_path, absent, joined=(0,))
    message = diagnosis.diagnose("train", status, 2, log, 1, False, 5)
    assert message == (
        "train on 2 ranks did not complete: rank 0 exited with status 1 (timed out waiting for the others); "
        "rank 1 never joined"
    )


def test_another_nodes_ranks_are_not_said_to_be_absent(tmp_path: Path) -> None:
    # Node 1 of 2, two ranks each: its status folder sees ranks 2 and 3 only, never 0 and 1.
    status, log = _log(tmp_path, "", joined=(2,))
    message = diagnosis.diagnose("probe", status, 4, log, 1, False, 5, range(2, 4))
    assert message == "probe on 4 ranks did not complete: rank 3 never joined; torchrun exited with status 1"
    (tmp_path / "none").mkdir()
    status, log = _log(tmp_path / "none", "", joined=())
    message = diagnosis.diagnose("probe", status, 4, log, 1, False, 5, range(2, 4))
    assert "no rank of this node joined the process group" in message


def test_torchrun_failing_alone_is_told_by_its_exception(tmp_path: Path) -> None:
    text = (
        "Traceback (most recent call last):\n  File x\ntorch.distributed.elastic.rendezvous.RendezvousTimeoutError:\n"
    )
    status, log = _log(tmp_path, text, joined=())
    message = diagnosis.diagnose("probe", status, 2, log, 1, False, 5)
    assert message == (
        "probe on 2 ranks did not complete: no rank joined the process group (rendezvous did not form); "
        "torchrun exited with status 1 (RendezvousTimeoutError)"
    )


@pytest.fixture
def no_rank(monkeypatch: pytest.MonkeyPatch) -> None:
    def started(*args: object) -> dict[str, Any]:
        raise AssertionError("a rank was started")

    monkeypatch.setattr(supervise, "run", started)


@pytest.mark.usefixtures("no_rank")
@pytest.mark.parametrize(
    ("changes", "field", "accepted"),
    [
        ({"batch": 10**15}, "batch", "from 1 to 65536"),
        ({"batch": 0}, "batch", "from 1 to 65536"),
        ({"steps": 10**9}, "steps", "from 1 to 100000"),
        ({"warmup": -1}, "warmup", "from 0 to 100000"),
        ({"repeats": 10**6}, "repeats", "from 1 to 1000"),
        ({"params": 1e300}, "params", "from 1k to 1e+09"),
        ({"params": float("nan")}, "params", "from 1k to 1e+09"),
        ({"workload": "resnet"}, "workload", "one of mlp, cnn, transformer"),
    ],
)
def test_measure_refuses_out_of_range_values(changes: dict[str, Any], field: str, accepted: str) -> None:
    with pytest.raises(InvalidInput, match=re.escape(accepted)) as caught:
        measure([1], **{**SMALL, **changes})
    assert caught.value.field == field


@pytest.mark.usefixtures("no_rank")
def test_measure_refuses_more_ranks_per_node_than_the_bound() -> None:
    with pytest.raises(InvalidInput, match="from 1 to 1024") as caught:
        measure([1, 10**6], **SMALL)
    assert caught.value.field == "nproc"
    for sizes in ([], 4, "12", [1] * 1000 + [0]):
        with pytest.raises(InvalidInput, match="from 1 to 1024"):
            measure(sizes, **SMALL)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "field", "accepted"),
    [
        ({"nproc_per_node": 10**6}, "nproc", "ranks per node, from 1 to 1024"),
        ({"nproc_per_node": 0}, "nproc", "ranks per node, from 1 to 1024"),
        ({"timeout": 1e300}, "timeout", "from 1 s to 24 h"),
        ({"timeout": float("nan")}, "timeout", "from 1 s to 24 h"),
        ({"timeout": 0.01}, "timeout", "from 1 s to 24 h"),
        ({"threads": 10**9}, "threads", "from 1 to 4096"),
        ({"nnodes": 0}, "nnodes", "a whole number of at least 1"),
        ({"nnodes": 10**9, "rdzv_endpoint": "h:1"}, "nnodes", "from 1 to 65536"),
        ({"nnodes": 2, "node_rank": 2, "rdzv_endpoint": "10.0.0.1:29500"}, "node_rank", "a rank from 0 to 1"),
        ({"nnodes": 2, "rdzv_endpoint": "10.0.0.1:70000"}, "rdzv_endpoint", "host:port of node 0"),
        ({"nnodes": 2, "rdzv_endpoint": "a b"}, "rdzv_endpoint", "host:port of node 0"),
        ({"local_addr": "x;rm"}, "local_addr", "a host name or an IP address"),
        ({"backend": "mpi"}, "backend", "auto, gloo or nccl"),
    ],
)
def test_a_cluster_is_checked_when_made(changes: dict[str, Any], field: str, accepted: str) -> None:
    with pytest.raises(InvalidInput, match=accepted) as caught:
        Launch(**changes)
    assert caught.value.field == field


def test_several_nodes_need_the_rendezvous() -> None:
    with pytest.raises(MissingInput, match="host:port of node 0, with --nnodes above 1"):
        Launch(nnodes=2)
    assert Launch(nnodes=2, node_rank=1, rdzv_endpoint="[::1]:29500", local_addr="fe80::1").world_size == 2


@pytest.mark.parametrize(
    ("endpoint", "given"),
    [("10.0.0.1:29500", "10.0.0.1:29500"), ("node0", "node0:29400"), ("[::1]", "[::1]:29400"), ("[::1]:7", "[::1]:7")],
)
def test_torchrun_keeps_each_nodes_rank(tmp_path: Path, endpoint: str, given: str) -> None:
    # The static rendezvous: node 1 stays node 1 (c10d's would renumber the nodes by host name
    # and process id); it needs a port, torchrun's default where the endpoint gives none.
    argv = Launch(nnodes=2, node_rank=1, rdzv_endpoint=endpoint).torchrun(tmp_path)
    assert {"--nnodes=2", "--node-rank=1", "--rdzv-backend=static", f"--rdzv-endpoint={given}"} <= set(argv)


@pytest.mark.usefixtures("no_rank")
def test_probe_refuses_out_of_range_values() -> None:
    for changes, field in (({"max_bytes": 2**40}, "max_bytes"), ({"reps": 10**9}, "reps"), ({"warmup": -1}, "warmup")):
        with pytest.raises(InvalidInput) as caught:
            probe(Launch(nproc_per_node=2), **changes)
        assert caught.value.field == field


@pytest.mark.usefixtures("no_rank")
@pytest.mark.parametrize("run", ["measure", "probe"])
def test_an_output_that_cannot_be_written_is_refused_before_any_rank_starts(tmp_path: Path, run: str) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("")

    def start(out: Path | str) -> object:
        if run == "measure":
            return measure([1], out=out, **SMALL)
        return probe(Launch(nproc_per_node=2), max_bytes=64, reps=1, out=out)

    for out, accepted in (
        (tmp_path, "not a folder"),
        (a_file / "runs.jsonl", "a-file is a file"),
        (a_file / "deeper" / "runs.jsonl", "a-file is a file"),
        ("", "a file path"),
    ):
        with pytest.raises(InvalidInput, match=accepted) as caught:
            start(out)
        assert caught.value.field == "out"


@pytest.mark.usefixtures("no_rank")
@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root may write anywhere")
def test_an_output_in_a_folder_one_may_not_write_is_refused(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        with pytest.raises(InvalidInput, match="a folder you can write to"):
            measure([1], out=locked / "new" / "runs.jsonl", **SMALL)
    finally:
        locked.chmod(stat.S_IRWXU)


def test_an_output_whose_folders_are_missing_is_accepted(tmp_path: Path) -> None:
    assert writable("out", tmp_path / "new" / "deeper" / "runs.jsonl") == tmp_path / "new/deeper/runs.jsonl"
    assert not (tmp_path / "new").exists()  # made when the record is written, not before


@pytest.mark.usefixtures("no_rank")
def test_an_output_one_may_not_write_is_refused_even_as_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    existing = tmp_path / "runs.jsonl"
    existing.write_text("")
    monkeypatch.setattr(os, "access", lambda *args, **kwargs: False)  # as a read-only file system answers
    with pytest.raises(InvalidInput, match="a file you can write to"):
        measure([1], out=existing, **SMALL)
    with pytest.raises(InvalidInput, match="a folder you can write to"):
        probe(Launch(nproc_per_node=2), out=tmp_path / "network.json")


@pytest.fixture
def fake_torchrun(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, list[str]]]:
    """torchrun replaced by rank 0's results made up from the launch: each call noted (job, ranks per node, options)."""
    calls: list[tuple[str, int, list[str]]] = []
    monkeypatch.setattr(launch, "usable_cpus", lambda: 64)  # no warning that ranks share cores

    def run(job: str, where: Launch, options: list[str]) -> dict[str, Any]:
        calls.append((job, where.nproc_per_node, options))
        if where.node_rank != 0:
            return {}
        world = where.world_size
        said = {"world_size": world, "nodes": where.nnodes, "backend": "gloo", "device_type": "cpu"}
        said |= {"device_name": "cpu", "torch": "2", "threads_per_rank": where.threads, "cpus_usable": 64}
        if job == "probe":
            sizes = [{"bytes": 8 * 4**i, "seconds": 1e-5 + 8 * 4**i / 1e9} for i in range(6)]
            return {**said, "sizes": sizes}
        steps = [[0.1 * world**0.1 + 0.001 * (r + i % 3) for i in range(5)] for r in range(world)]
        return {**said, "params": 200_003.0, "step_times": steps, "peak_memory": [1e6] * world, "sharding": "ddp"}

    monkeypatch.setattr(supervise, "run", run)
    return calls


def test_a_measurement_is_planned_then_run_size_by_size_into_typed_records(
    tmp_path: Path, fake_torchrun: list[tuple[str, int, list[str]]]
) -> None:
    out = tmp_path / "runs.jsonl"
    plan = launcher.plan_measure([2, 1, 2], cluster=Launch(threads=1), out=out, **{**SMALL, "repeats": 2})
    assert (plan.sizes, plan.runs, plan.launch.threads) == ((1, 2), 4, 1)
    assert not out.exists()  # checked, not yet written
    ticks: list[tuple[int, int]] = []
    found = launcher.run_measurement(plan, lambda done, total: ticks.append((done, total)))
    assert ticks == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert [(job, n) for job, n, _ in fake_torchrun] == [("train", 1), ("train", 1), ("train", 2), ("train", 2)]
    assert fake_torchrun[0][2] == plan.worker_options()
    assert all(isinstance(record, Measurement) for record in found)
    assert [(r.devices, r.repeats, r.workload, r.params) for r in found] == [
        (1, 2, "mlp", 200_003.0),
        (2, 2, "mlp", 200_003.0),
    ]
    assert found[0].efficiency == 1.0  # against itself
    assert found[1].efficiency is not None
    assert 0 < found[1].efficiency < 1
    written = [Measurement.from_dict(json.loads(line)) for line in out.read_text(encoding="utf-8").splitlines()]
    assert written == list(found)


def test_a_failed_size_says_which_records_its_predecessors_left(
    tmp_path: Path, fake_torchrun: list[tuple[str, int, list[str]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    made_up = supervise.run

    def fails_at_four(job: str, where: Launch, options: list[str]) -> dict[str, Any]:
        if where.nproc_per_node == 4:
            raise RunFailed("train on 4 ranks did not complete")
        return made_up(job, where, options)

    monkeypatch.setattr(supervise, "run", fails_at_four)
    out = tmp_path / "runs.jsonl"
    with pytest.raises(RunFailed) as caught:
        measure([1, 2, 4], cluster=Launch(threads=1), out=out, **SMALL)
    assert str(caught.value) == (
        "train on 4 ranks did not complete; no record written at this size; "
        f"the records for 1 and 2 ranks, measured before, are in {out}"
    )
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2


def test_only_node_0_records_and_its_records_are_returned(
    tmp_path: Path, fake_torchrun: list[tuple[str, int, list[str]]]
) -> None:
    other = Launch(nnodes=2, node_rank=1, rdzv_endpoint="node0:29500", threads=1)
    assert measure([1], cluster=other, out=tmp_path / "runs.jsonl", **SMALL) == ()
    assert (
        probe(Launch(nproc_per_node=2, nnodes=2, node_rank=1, rdzv_endpoint="node0:29500"), out=tmp_path / "n.json")
        is None
    )
    assert list(tmp_path.iterdir()) == []  # node 0 writes


def test_a_probe_is_planned_run_and_written_as_a_typed_profile(
    tmp_path: Path, fake_torchrun: list[tuple[str, int, list[str]]]
) -> None:
    out = tmp_path / "deeper" / "network.json"
    plan = launcher.plan_probe(Launch(nproc_per_node=2), max_bytes=2**16, reps=3, out=out)
    assert plan.worker_options() == ["--max-bytes=65536", "--reps=3", "--warmup=2"]
    profile = launcher.run_probe(plan)
    assert isinstance(profile, NetworkProfile)
    assert profile.world_size == 2
    assert profile.intra is not None
    assert profile.inter is None
    assert json.loads(out.read_text(encoding="utf-8")) == profile.to_dict()
