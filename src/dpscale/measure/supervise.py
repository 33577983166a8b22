"""Supervising torchrun: one run in a session of its own, ended whole by a timeout or a signal.

Each run is ``torchrun`` (``python -m torch.distributed.run``) in a session of its own, so that
a timeout, Ctrl-C, SIGTERM or SIGHUP ends every process it started and removes the run's folder;
if the launcher is killed outright (SIGKILL), torchrun and the workers notice and end themselves,
and a folder nobody could remove is removed by the next run (see :mod:`dpscale.measure._lifeline`).
A run that fails is told by :func:`dpscale.measure.diagnosis.diagnose`.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

from dpscale.errors import RunFailed
from dpscale.measure import _lifeline
from dpscale.measure.diagnosis import diagnose, signal_name
from dpscale.measure.launch import Launch

__all__ = ["Terminated", "run"]


class Terminated(SystemExit):
    """SIGTERM or SIGHUP arrived during a run: its processes were ended and its folder removed.

    A :class:`SystemExit` with status 128 + the signal's number, as the signal itself would have
    ended the process, but only once the run is cleaned up; ``signum`` is the signal.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal_name(self.signum)


@contextlib.contextmanager
def _ended_by_signals() -> Iterator[None]:
    """While a run lasts, SIGTERM and SIGHUP raise :class:`Terminated` where they would end the process.

    Only signals left at their default (which kills at once, leaving torchrun and the workers
    running and the run's folder behind); a handler of the program's own, or an ignored SIGHUP
    (``nohup``), is left alone. The first signal raises; those after it, while the run is being
    cleaned up, are let go. Outside the main thread Python cannot catch signals: nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        if not caught:
            caught.append(signum)
            raise Terminated(signum)

    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextlib.contextmanager
def _session(argv: list[str], env: dict[str, str], log: Path, status: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        proc = subprocess.Popen(  # the preexec function only calls prctl: safe beside threads
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            preexec_fn=_lifeline.dies_with_parent(),
        )
        try:
            yield proc
        finally:
            if proc.poll() is None:
                _kill(proc)
            _end_workers(status)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """End torchrun and its session; torchrun ends the workers it started (each in a session of its own)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


def _end_workers(status: Path) -> None:
    """SIGKILL the workers still running once torchrun is gone (each noted its pid in ``status``).

    Torchrun ends them itself unless it had to be killed; then they would leave on their own
    (see :mod:`dpscale.measure._lifeline`), but only after the run's folder is removed, which
    they might still be writing to.
    """
    for note in status.glob("pid-*"):
        try:
            pid = int(note.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if _lifeline.runs_in(pid, status):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def run(job: str, launch: Launch, options: list[str]) -> dict[str, Any]:
    """One torchrun of ``job``; rank 0's result (``{}`` on the other nodes). Raises RunFailed, Terminated."""
    backend = launch.resolved_backend()
    threads = launch.threads_per_rank()
    _lifeline.remove_leftovers(Path(tempfile.gettempdir()))  # of runs whose launcher was killed outright
    with (
        _ended_by_signals(),
        tempfile.TemporaryDirectory(prefix=_lifeline.PREFIX, ignore_cleanup_errors=True) as tmp,
        _lifeline.owned(Path(tmp)),
    ):
        work = Path(tmp)
        status = work / "status"
        status.mkdir()
        result = work / "result.json"
        argv = [
            *launch.torchrun(work / "torchrun"),  # torchrun leaves a folder per run: in the run's folder
            "-m",
            "dpscale.measure.worker",
            job,
            f"--backend={backend}",
            f"--timeout={launch.timeout}",
            f"--result={result}",
            f"--status={status}",
            *options,
        ]
        env = {**os.environ, "OMP_NUM_THREADS": str(threads), "DPSCALE_THREADS": str(threads), **launch.env}
        env.setdefault("LOGLEVEL", "ERROR")
        env.update({_lifeline.LAUNCHER_PID: str(os.getpid()), _lifeline.RUN_DIR: str(work)})
        log = work / "torchrun.log"
        deadline = time.monotonic() + 2 * launch.timeout + 30
        timed_out = False
        with _session(argv, env, log, status) as proc:
            while proc.poll() is None:
                if time.monotonic() > deadline:
                    timed_out = True
                    _kill(proc)
                    break
                time.sleep(0.05)
            code = proc.returncode
            if timed_out or code != 0 or (launch.node_rank == 0 and not result.exists()):
                here = range(launch.node_rank * launch.nproc_per_node, (launch.node_rank + 1) * launch.nproc_per_node)
                why = diagnose(job, status, launch.world_size, log, code, timed_out, launch.timeout, here)
                raise RunFailed(why)
        if not result.exists():  # another node's rank 0 writes the result
            return {}
        data: dict[str, Any] = json.loads(result.read_text(encoding="utf-8"))
        return data
