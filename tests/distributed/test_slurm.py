"""dpscale under srun, its tasks played by local processes: Slurm's variables set by hand, gloo on loopback."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

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
