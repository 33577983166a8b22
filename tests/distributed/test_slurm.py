"""dpscale under srun, its tasks played by local processes: Slurm's variables set by hand, gloo on loopback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.distributed.conftest import workers_left

pytestmark = pytest.mark.distributed


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def srun_task(
    procid: int, ntasks: int, nnodes: int, nodeid: int, localid: int, nodelist: str, port: int
) -> dict[str, str]:
    """The environment srun gives one task (torchrun's variables absent)."""
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR")}
    return {
        **env,
        "SLURM_JOB_ID": "4242",
        "SLURM_STEP_ID": "0",
        "SLURM_PROCID": str(procid),
        "SLURM_NTASKS": str(ntasks),
        "SLURM_NNODES": str(nnodes),
        "SLURM_NODEID": str(nodeid),
        "SLURM_LOCALID": str(localid),
        "SLURM_JOB_NODELIST": nodelist,
        "MASTER_PORT": str(port),
    }


def torchrun_of(launcher: subprocess.Popen[str]) -> int | None:
    """The pid of the torchrun a dpscale process started, once it runs."""
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            parent = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue  # ended while we looked
        if parent == launcher.pid and b"torch.distributed.run" in argv:
            return int(entry.name)
    return None


def on_two_nodes(argv: list[str]) -> dict[int, tuple[int, str, str]]:
    """``srun -N2 --ntasks-per-node=1 dpscale …`` played by two local processes: each node's exit status, out, err.

    No --nnodes, --node-rank or --rdzv-endpoint: Slurm's variables place them; node 0 is the
    list's first host, 127.0.0.1, as both "nodes" are this machine. Node 1 starts first, and node
    0 only once node 1's torchrun runs: a rendezvous that numbered the nodes by host name (here
    the same) then process id, as torchrun's c10d one does, would make node 1 node 0, and node 0
    would fail with "rank 0 never joined" (a real cluster whose host names sort otherwise than
    Slurm's list would too). Slurm's node 0 must hold rank 0.
    """
    port = free_port()
    tasks: dict[int, subprocess.Popen[str]] = {}
    failsafe = time.monotonic() + 120  # only if node 1 never starts torchrun: node 0 then starts anyway
    for node in (1, 0):
        task = subprocess.Popen(
            [sys.executable, "-m", "dpscale", *argv],
            env=srun_task(node, 2, 2, node, 0, "127.0.0.[1-2]", port),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        tasks[node] = task
        while torchrun_of(task) is None and task.poll() is None and time.monotonic() < failsafe:
            time.sleep(0.05)
    done = {node: task.communicate(timeout=300) for node, task in tasks.items()}
    return {node: (tasks[node].returncode, *done[node]) for node in (0, 1)}


def test_probe_across_two_nodes_placed_by_slurm(tmp_path: Path) -> None:
    out = tmp_path / "network.json"
    argv = ["probe", "--nproc", "1", "--max-bytes", "256B", "--reps", "2", "--backend", "gloo"]
    argv += ["--timeout", "120s", "--threads", "1", "--out", str(out), "--json"]
    nodes = on_two_nodes(argv)
    assert [nodes[0][0], nodes[1][0]] == [0, 0], [nodes[0][2], nodes[1][2]]
    profile = json.loads(nodes[0][1])
    assert (profile["world_size"], profile["nodes"], profile["devices_per_node"]) == (2, 2, 1)
    assert profile["inter"] is not None
    assert json.loads(out.read_text(encoding="utf-8")) == profile
    # `srun … --json > p.json` gathers every node's stdout into one file: node 1 adds nothing to
    # node 0's document, and says on stderr, under its own number, who wrote it.
    assert nodes[1][1] == ""
    assert "node 1: done; node 0 wrote the profile and prints the JSON" in nodes[1][2]
    assert "node 0" not in nodes[1][2].replace("node 0 wrote", "")
    assert workers_left() == []


def test_measure_across_two_nodes_says_each_nodes_number(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    argv = ["measure", "--nproc", "1", "--params", "200k", "--steps", "2", "--warmup", "0", "--repeats", "1"]
    argv += ["--backend", "gloo", "--threads", "1", "--out", str(out)]
    for as_json in (False, True):
        nodes = on_two_nodes([*argv, "--json"] if as_json else argv)
        assert [nodes[0][0], nodes[1][0]] == [0, 0], [nodes[0][2], nodes[1][2]]
        assert nodes[1][1] == ""  # not even an empty line: node 0's output is the whole document
        said = "node 1: done; node 0 wrote the records" + (" and prints the JSON" if as_json else "")
        assert said in nodes[1][2]
    record = json.loads(nodes[0][1])
    assert (record["devices"], record["nodes"], record["threads_per_rank"]) == (2, 2, 1)
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2  # one record a run, from node 0
    assert workers_left() == []


def test_workers_started_by_srun_take_their_ranks_from_slurm(tmp_path: Path) -> None:
    # srun --ntasks 2 python -m dpscale.measure.worker ...: rank, world size, local rank and the
    # rendezvous come from SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID and the host list.
    status = tmp_path / "status"
    status.mkdir()
    result = tmp_path / "result.json"
    port = free_port()
    argv = [sys.executable, "-m", "dpscale.measure.worker", "probe", "--backend", "gloo", "--max-bytes", "64"]
    argv += ["--reps", "1", "--warmup", "0", "--timeout", "60", f"--result={result}", f"--status={status}"]
    tasks = [
        subprocess.Popen(argv, env=srun_task(rank, 2, 1, 0, rank, "localhost", port), stderr=subprocess.PIPE, text=True)
        for rank in (0, 1)
    ]
    errors = [task.communicate(timeout=180)[1] for task in tasks]
    assert [task.returncode for task in tasks] == [0, 0], errors
    data = json.loads(result.read_text(encoding="utf-8"))
    assert (data["world_size"], data["nodes"]) == (2, 1)
    assert sorted(p.name for p in status.glob("joined-*")) == ["joined-0", "joined-1"]


@pytest.mark.parametrize(
    ("status", "result", "said"),
    [
        ("nodir", "result.json", "--status: got 'nodir'; expected an existing folder"),
        (".", "missing/result.json", "--result: got 'missing/result.json'; expected a file in an existing folder"),
        (".", ".", "--result: got '.'; expected a file path, not a folder"),
    ],
)
def test_the_worker_refuses_a_bad_path_in_one_line(tmp_path: Path, status: str, result: str, said: str) -> None:
    # The worker is internal (dpscale measure and probe start it), but srun can start it by hand:
    # a path it cannot use is told before the rank waits for any other, not as a traceback.
    argv = [sys.executable, "-m", "dpscale.measure.worker", "probe", "--backend", "gloo", "--timeout", "60"]
    argv += [f"--status={status}", f"--result={result}"]
    env = srun_task(0, 2, 1, 0, 0, "localhost", free_port())
    done = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("dpscale.measure.worker: ")
    assert said in done.stderr
    assert "run them instead" in done.stderr  # it says it is internal
    assert list(tmp_path.iterdir()) == []  # nothing noted: the rank never started


def test_the_worker_refuses_slurm_variables_out_of_place_in_one_line(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "dpscale.measure.worker", "probe", f"--status={tmp_path}"]
    argv += [f"--result={tmp_path / 'result.json'}"]
    env = {**srun_task(0, 2, 1, 0, 0, "localhost", free_port()), "SLURM_PROCID": "7"}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1, done.stderr
    assert "SLURM_PROCID: got '7'; expected a whole number from 0 to 1" in done.stderr
