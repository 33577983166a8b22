"""How a run's processes end with the ``dpscale`` process that started them, however it ends.

``dpscale`` (the launcher) starts torchrun, which starts one worker per rank, each in a session of
its own. Ctrl-C, SIGTERM and SIGHUP are caught by the launcher, which ends them all and removes the
run's folder. SIGKILL cannot be caught, so the processes below notice it themselves:

- on Linux, the kernel sends torchrun SIGKILL when the launcher dies (``PR_SET_PDEATHSIG``);
- each worker watches its parent (torchrun), the launcher and the run's folder, and leaves when
  any of them is gone; a worker that finds the launcher gone removes the run's folder first.

No torch here: the launcher imports this module.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["LAUNCHER_PID", "RUN_DIR", "alive", "dies_with_parent", "runs_in", "watch"]

LAUNCHER_PID = "DPSCALE_LAUNCHER_PID"  # the launcher's pid, for the workers
RUN_DIR = "DPSCALE_RUN_DIR"  # the run's folder, which the launcher removes when the run ends
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
POLL_S = 0.2  # how often a worker looks; a worker outlives its launcher by about this much


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet waited for, does not)."""
    if not os.path.isdir("/proc/self"):  # no /proc (macOS): ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    state = stat.rpartition(")")[2].split()[:1]  # "pid (name) S ...": the name may hold spaces
    return state not in (["Z"], ["X"])


def runs_in(pid: int, status: Path) -> bool:
    """Whether ``pid`` is a worker of the run whose status folder is ``status`` (not a reused pid)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return f"--status={status}".encode() in argv and alive(pid)


def dies_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the kernel SIGKILL the child when this process dies (Linux only).

    The child is torchrun; its workers then see their parent gone (see :func:`watch`). The libc
    function is found here, in the parent: the child only calls it.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    parent = os.getpid()
    kill = int(signal.SIGKILL)

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, kill, 0, 0, 0)
        if os.getppid() != parent:  # the launcher died before the line above could cover it
            os._exit(1)

    return preexec


def watch() -> None:
    """In a worker: leave (exit status 1) once torchrun, the launcher or the run's folder is gone.

    A daemon thread looks every :data:`POLL_S` seconds; the launcher's pid and the folder come
    from the environment (:data:`LAUNCHER_PID`, :data:`RUN_DIR`), and a worker started by hand
    without them watches its parent only. Where the launcher is gone, nobody else will remove the
    run's folder, so the worker removes it before it leaves.
    """
    parent = os.getppid()
    launcher = int(os.environ.get(LAUNCHER_PID, "0") or 0)
    run_dir = os.environ.get(RUN_DIR) or None

    def look() -> None:
        while True:
            orphaned = launcher > 0 and not alive(launcher)
            if orphaned or os.getppid() != parent or (run_dir is not None and not os.path.isdir(run_dir)):
                if orphaned and run_dir is not None:
                    shutil.rmtree(run_dir, ignore_errors=True)
                os._exit(1)
            time.sleep(POLL_S)

    threading.Thread(target=look, name="dpscale-lifeline", daemon=True).start()
