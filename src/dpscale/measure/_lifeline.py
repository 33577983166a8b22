"""How a run's processes end with the ``dpscale`` process that started them, however it ends.

``dpscale`` (the launcher) starts torchrun, which starts one worker per rank, each in a session of
its own. Ctrl-C, SIGTERM and SIGHUP are caught by the launcher, which ends them all and removes the
run's folder. SIGKILL cannot be caught, so the processes below notice it themselves:

- on Linux, the kernel sends torchrun SIGKILL when the launcher dies (``PR_SET_PDEATHSIG``);
- each worker watches its parent (torchrun), the launcher and the run's folder, and leaves when
  any of them is gone; a worker that finds the launcher gone removes the run's folder first;
- killed before any worker started (in its first second), nobody is left to remove the folder:
  the launcher holds a lock on a file in it (:data:`OWNER`, ``flock``, which the kernel releases
  with the process however it ends), and the next run removes the ``dpscale-*`` folders whose
  lock nobody holds (:func:`remove_leftovers`). A folder without that file is not one a launcher
  made, and is left alone.

No torch here: the launcher imports this module.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = [
    "LAUNCHER_PID",
    "OWNER",
    "PREFIX",
    "RUN_DIR",
    "alive",
    "dies_with_parent",
    "owned",
    "remove_leftovers",
    "runs_in",
    "watch",
]

LAUNCHER_PID = "DPSCALE_LAUNCHER_PID"  # the launcher's pid, for the workers
RUN_DIR = "DPSCALE_RUN_DIR"  # the run's folder, which the launcher removes when the run ends
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
POLL_S = 0.2  # how often a worker looks; a worker outlives its launcher by about this much
PREFIX = "dpscale-"  # a run's folder, in the temporary directory
OWNER = "launcher.lock"  # in a run's folder: locked by its launcher for as long as that runs


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


@contextlib.contextmanager
def owned(folder: Path) -> Iterator[None]:
    """While the block runs, ``folder`` is this process's: its :data:`OWNER` file is locked (``flock``).

    The file is locked before it takes its name, so that no other run ever finds it unlocked while
    this one lives. Where there is no ``flock`` (Windows), nothing is marked: nothing is removed.
    """
    try:
        import fcntl
    except ImportError:
        yield
        return
    draft = folder / f"{OWNER}.{os.getpid()}"
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))  # for a person looking: the lock is what counts
        os.replace(draft, folder / OWNER)
        yield
    finally:
        os.close(fd)  # the lock with it; the kernel does the same if the process is killed


def remove_leftovers(temp: Path) -> list[Path]:
    """Remove the run folders in ``temp`` whose launcher is gone; the folders removed.

    A run folder is a ``dpscale-*`` folder (not a link) of this user's, holding an :data:`OWNER`
    file that nobody has locked: its launcher was killed before anything else could remove it.
    Anything else is left as it is, a folder whose launcher still runs above all.
    """
    try:
        import fcntl
    except ImportError:
        return []
    removed: list[Path] = []
    try:
        entries = list(os.scandir(temp))
    except OSError:
        return []
    for entry in entries:
        if not entry.name.startswith(PREFIX):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue
            fd = os.open(os.path.join(entry.path, OWNER), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:  # no such file: not a launcher's folder (or one just made, not yet marked)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held (BlockingIOError): its launcher runs
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed
