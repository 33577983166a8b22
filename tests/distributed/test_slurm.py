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


def test_probe_across_two_nodes_placed_by_slurm(tmp_path: Path) -> None:
    # srun --nodes 2 --ntasks-per-node 1 dpscale probe: no --nnodes, --node-rank or --rdzv-endpoint;
    # node 0 is the list's first host, 127.0.0.1, as both "nodes" are this machine.
    # Node 1 starts first, and node 0 only once node 1's torchrun runs: a rendezvous that numbered
    # the nodes by host name (here the same) then process id, as torchrun's c10d one does, would
    # make node 1 node 0, and node 0 would fail with "rank 0 never joined" (a real cluster whose
    # host names sort otherwise than Slurm's list would too). Slurm's node 0 must hold rank 0.
    out = tmp_path / "network.json"
    port = free_port()
    argv = [sys.executable, "-m", "dpscale", "probe", "--nproc", "1", "--max-bytes", "256B", "--reps", "2"]
    argv += ["--backend", "gloo", "--timeout", "120s", "--threads", "1", "--out", str(out), "--json"]
    tasks: dict[int, subprocess.Popen[str]] = {}
    failsafe = time.monotonic() + 120  # only if node 1 never starts torchrun: node 0 then starts anyway
    for node in (1, 0):
        task = subprocess.Popen(
            argv,
            env=srun_task(node, 2, 2, node, 0, "127.0.0.[1-2]", port),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        tasks[node] = task
        while torchrun_of(task) is None and task.poll() is None and time.monotonic() < failsafe:
            time.sleep(0.05)
    done = {node: task.communicate(timeout=300) for node, task in tasks.items()}
    assert [tasks[0].returncode, tasks[1].returncode] == [0, 0], [done[0][1], done[1][1]]
    profile = json.loads(done[0][0])
    assert (profile["world_size"], profile["nodes"], profile["devices_per_node"]) == (2, 2, 1)
    assert profile["inter"] is not None
    assert json.loads(out.read_text(encoding="utf-8")) == profile
    assert json.loads(done[1][0]) == {}  # node 1 writes nothing
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
