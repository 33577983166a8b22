"""``dpscale measure`` and ``dpscale probe``: torchrun at each size, faults turned into clear errors.

Each run is ``torchrun`` (``python -m torch.distributed.run``) in a session of its own, so that
a timeout, Ctrl-C, SIGTERM or SIGHUP ends every process it started and removes the run's folder;
if the launcher is killed outright (SIGKILL), torchrun and the workers notice and end themselves
(see :mod:`dpscale.measure._lifeline`). The workers note when they have joined and how far they
got, which is how a failure names the rank that crashed, hung or never joined. Nothing is written
as complete unless every rank finished. Every input, the output path included, is checked before
any rank starts.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from dpscale._validate import WHOLE_NUMBER
from dpscale.errors import N_, InvalidInput, MissingInput, RunFailed
from dpscale.measure import _lifeline, records

__all__ = ["Cluster", "Terminated", "fit_alpha_beta", "measure", "probe"]

MAX_PARAMS = 1e9  # 4 GB of fp32 weights and as much again of gradients, on every rank
MAX_PROBE_BYTES = 2**30
MAX_RANKS_PER_NODE = 1024  # past any node; torchrun would start every one of them
MAX_NODES = 65536
MAX_BATCH = 65536  # samples per rank per step
MAX_STEPS = 100_000  # timed steps, warm-up steps, all-reduces per size
MAX_REPEATS = 1000
MAX_THREADS = 4096  # CPU threads per rank
MIN_TIMEOUT = 1.0  # seconds
MAX_TIMEOUT = 24 * 3600.0

RANGE = N_("a whole number from %(least)s to %(most)s")
RANKS = N_("a whole number of ranks per node, from 1 to %(most)s")
OUTPUT = N_("a file path")

# torchrun's failure summary: "rank      : 1 (local_rank: 1)" then "exitcode  : -15 (pid: ...)".
_EXITCODE = re.compile(r"^\s*rank\s*:\s*(\d+)[^\n]*\n\s*exitcode\s*:\s*(-?\d+)", re.M)
_TIMED_OUT = re.compile(r"^\[rank(\d+)\]:.*(?:Timed out|timed out|Timeout)", re.M)
# The last line of a traceback, "[rank1]: ValueError: ..." (or unprefixed before the rank joined).
_RAISED = re.compile(
    r"^(?:\[rank(\d+)\]:[ \t]*)?(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*(?:Error|Exception))(?::[ \t]*(.*))?$", re.M
)
_TORCHRUN_OWN = ("ChildFailedError",)  # torchrun's summary of the failure, not its cause
_SOURCE_PLACE = re.compile(r"^\[[^\]]*:\d+\]\s*")  # gloo's "[/path/pair.cc:537] " before its message
_HOST = r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9._-]*)"
_ENDPOINT = re.compile(rf"{_HOST}(?::(\d{{1,5}}))?")
_ADDRESS = re.compile(rf"{_HOST}|[0-9A-Fa-f:.]+")


def _clip(text: str, most: int = 80) -> str:
    """``text`` cut short for a message."""
    return text if len(text) <= most else text[: most - 1] + "…"


def _bounded(name: str, value: Any, least: int, most: int, accepted: str = RANGE) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
        raise InvalidInput(name, value, accepted, params={"least": least, "most": most})
    return value


def _address(name: str, value: Any, pattern: re.Pattern[str], accepted: str) -> None:
    text = value if isinstance(value, str) else None
    match = pattern.fullmatch(text) if text is not None and len(text) <= 255 else None
    port = match.groups()[0] if match is not None and match.groups() else None
    if match is None or (port is not None and not 1 <= int(port) <= 65535):
        raise InvalidInput(name, _clip(value) if isinstance(value, str) else value, accepted)


@dataclass(frozen=True)
class Cluster:
    """Where and how to run: ranks per node, torchrun's multi-node flags, backend, limits.

    Checked when made (InvalidInput): 1 to :data:`MAX_RANKS_PER_NODE` ranks per node, 1 to
    :data:`MAX_NODES` nodes with a node rank among them and a rendezvous endpoint when there are
    several, a known backend, a timeout from 1 s to 24 h and 1 to :data:`MAX_THREADS` threads.
    """

    nproc_per_node: int = 1
    nnodes: int = 1
    node_rank: int = 0
    rdzv_endpoint: str | None = None
    rdzv_id: str = "dpscale"
    local_addr: str | None = None  # this node's address, as the others reach it (torchrun's --local-addr)
    backend: str = "auto"
    timeout: float = 120.0
    threads: int | None = None
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _bounded("nproc", self.nproc_per_node, 1, MAX_RANKS_PER_NODE, RANKS)
        if isinstance(self.nnodes, bool) or not isinstance(self.nnodes, int) or self.nnodes < 1:
            raise InvalidInput("nnodes", self.nnodes, WHOLE_NUMBER, params={"minimum": 1})
        _bounded("nnodes", self.nnodes, 1, MAX_NODES)
        if self.nnodes > 1 and self.rdzv_endpoint is None:
            raise MissingInput("rdzv_endpoint", N_("host:port of node 0, with --nnodes above 1"))
        rank = self.node_rank
        if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < self.nnodes:
            raise InvalidInput("node_rank", rank, N_("a rank from 0 to %(last)s"), params={"last": self.nnodes - 1})
        if self.rdzv_endpoint is not None:
            _address("rdzv_endpoint", self.rdzv_endpoint, _ENDPOINT, N_("host:port of node 0, such as 10.0.0.1:29500"))
        if self.local_addr is not None:
            _address("local_addr", self.local_addr, _ADDRESS, N_("a host name or an IP address, such as 10.0.0.2"))
        if self.backend not in ("auto", "gloo", "nccl"):
            raise InvalidInput("backend", self.backend, N_("auto, gloo or nccl"))
        if self.threads is not None:
            _bounded("threads", self.threads, 1, MAX_THREADS)
        timeout = self.timeout
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not MIN_TIMEOUT <= timeout <= MAX_TIMEOUT
        ):
            raise InvalidInput(
                "timeout",
                timeout,
                N_("a duration from %(least)s s to %(most)s h"),
                params={"least": f"{MIN_TIMEOUT:g}", "most": f"{MAX_TIMEOUT / 3600:g}"},
            )

    @property
    def world_size(self) -> int:
        return self.nproc_per_node * self.nnodes

    def resolved_backend(self) -> str:
        import torch

        if self.backend == "nccl" and not torch.cuda.is_available():
            raise InvalidInput("backend", "nccl", "gloo on a machine without a CUDA GPU (NCCL needs one)")
        if self.backend == "nccl" and self.nproc_per_node > torch.cuda.device_count():
            raise InvalidInput(
                "nproc",
                self.nproc_per_node,
                N_("at most %(gpus)s ranks per node, one per GPU"),
                params={"gpus": torch.cuda.device_count()},
            )
        if self.backend == "auto":
            return "nccl" if torch.cuda.is_available() and self.nproc_per_node <= torch.cuda.device_count() else "gloo"
        return self.backend

    def threads_per_rank(self) -> int:
        cores = os.cpu_count() or 1
        if self.threads is not None:
            return self.threads
        if self.nproc_per_node > cores:
            warnings.warn(
                f"{self.nproc_per_node} ranks on {cores} cores: ranks share cores, slowing them and the measurement",
                RuntimeWarning,
                stacklevel=3,
            )
        return max(1, cores // self.nproc_per_node)


def _torchrun(cluster: Cluster, logs: Path) -> list[str]:
    # torchrun's own files (a folder per run, which it leaves behind) go in the run's folder.
    argv = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        f"--nproc-per-node={cluster.nproc_per_node}",
        f"--log-dir={logs}",
    ]
    if cluster.nnodes == 1 and cluster.rdzv_endpoint is None:
        return [*argv, "--standalone"]
    local = [f"--local-addr={cluster.local_addr}"] if cluster.local_addr else []
    return [
        *argv,
        *local,
        f"--nnodes={cluster.nnodes}",
        f"--node-rank={cluster.node_rank}",
        "--rdzv-backend=c10d",
        f"--rdzv-endpoint={cluster.rdzv_endpoint}",
        f"--rdzv-id={cluster.rdzv_id}",
        # Node 0 hosts the rendezvous store at the endpoint (its own address), whatever its host name says.
        f"--rdzv-conf=join_timeout={int(cluster.timeout)},is_host={'true' if cluster.node_rank == 0 else 'false'}",
    ]


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
        return _signal_name(self.signum)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


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


def _progress(status: Path, world: int) -> tuple[list[int], dict[int, int]]:
    joined = [r for r in range(world) if (status / f"joined-{r}").exists()]
    steps = {
        r: int((status / f"step-{r}").read_text() or 0) if (status / f"step-{r}").exists() else 0 for r in range(world)
    }
    return joined, steps


def _causes(text: str) -> tuple[dict[int, str], str | None]:
    """The exception each rank ended with, in a sentence, and the last one no rank prefixed."""
    ranked: dict[int, str] = {}
    loose = None
    for rank, name, message in _RAISED.findall(text):
        if name in _TORCHRUN_OWN:
            continue
        said = _SOURCE_PLACE.sub("", message.strip())
        said = re.split(r"(?<=[a-z0-9)])\. ", said, maxsplit=1)[0].rstrip(".")  # its first sentence
        cause = _clip(said if said and name == "RuntimeError" else f"{name}: {said}" if said else name, 160)
        if rank:
            ranked[int(rank)] = cause
        else:
            loose = cause
    return ranked, loose


def _diagnose(what: str, status: Path, world: int, log: Path, code: int | None, timed_out: bool, timeout: float) -> str:
    """Which rank failed and why, in sentences, from the workers' notes and torchrun's log.

    Torchrun's own words (its summary, tracebacks, the URL of its docs) stay out: from them come
    only each rank's exit status, the first to fail ("Root Cause") and the exception it raised.
    """
    joined, steps = _progress(status, world)
    absent = [r for r in range(world) if r not in joined]
    parts = [f"{what} on {world} rank{'s' if world > 1 else ''} did not complete"]
    text = log.read_text(errors="replace") if log.exists() else ""
    failed = {int(rank): int(code_) for rank, code_ in _EXITCODE.findall(text)}
    root_at = text.find("Root Cause")
    first = _EXITCODE.search(text, root_at) if root_at >= 0 else None
    root = int(first.group(1)) if first else None
    ranked, loose = _causes(text)
    waited = {int(r) for r in _TIMED_OUT.findall(text)}
    if root is not None and root not in ranked and loose is not None:
        ranked[root] = loose  # raised before the rank had joined, so before its lines were prefixed
        if re.search(r"timed out|timeout", loose, re.I):
            waited.add(root)
    hung = [r for r in sorted(failed) if failed[r] < 0 and waited and r not in waited]
    culprits = hung + [r for r in [root] if r in failed and r not in hung]
    for rank in culprits + [r for r in sorted(failed) if r not in culprits]:
        code_ = failed[rank]
        if rank in absent and code_ < 0:
            continue  # said below: it never joined
        if rank in hung:
            parts.append(f"rank {rank} stopped responding and was ended ({_signal_name(-code_)})")
        elif code_ >= 0:
            why = "timed out waiting for the others" if rank in waited else ranked.get(rank)
            parts.append(f"rank {rank} exited with status {code_}" + (f" ({why})" if why else ""))
        elif culprits and rank not in culprits:
            parts.append(f"rank {rank} was then stopped by torchrun")
        else:
            why = ranked.get(rank)
            parts.append(f"rank {rank} was ended by {_signal_name(-code_)}" + (f" ({why})" if why else ""))
    if absent and len(absent) < world:
        parts.append(f"rank{'s' if len(absent) > 1 else ''} {', '.join(map(str, absent))} never joined")
    elif absent:
        parts.append("no rank joined the process group (rendezvous did not form)")
    elif steps and min(steps.values()) < max(steps.values()):
        low = min(steps.values())
        stuck = [r for r, s in steps.items() if s == low]
        parts.append(f"rank{'s' if len(stuck) > 1 else ''} {', '.join(map(str, stuck))} stopped after {low} steps")
    if timed_out:
        parts.append(f"stopped after the {timeout:g} s timeout")
    elif code is not None and code != 0 and not failed:
        parts.append(f"torchrun exited with status {code}" + (f" ({loose})" if loose else ""))
    return ": ".join(parts[:1]) + (": " + "; ".join(parts[1:]) if len(parts) > 1 else "")


def _run(job: str, cluster: Cluster, options: list[str]) -> dict[str, Any]:
    """One torchrun of ``job``; rank 0's result (``{}`` on the other nodes). Raises RunFailed, Terminated."""
    backend = cluster.resolved_backend()
    threads = cluster.threads_per_rank()
    with _ended_by_signals(), tempfile.TemporaryDirectory(prefix="dpscale-", ignore_cleanup_errors=True) as tmp:
        work = Path(tmp)
        status = work / "status"
        status.mkdir()
        result = work / "result.json"
        argv = [
            *_torchrun(cluster, work / "torchrun"),
            "-m",
            "dpscale.measure.worker",
            job,
            f"--backend={backend}",
            f"--timeout={cluster.timeout}",
            f"--result={result}",
            f"--status={status}",
            *options,
        ]
        env = {**os.environ, "OMP_NUM_THREADS": str(threads), "DPSCALE_THREADS": str(threads), **cluster.env}
        env.setdefault("LOGLEVEL", "ERROR")
        env.update({_lifeline.LAUNCHER_PID: str(os.getpid()), _lifeline.RUN_DIR: str(work)})
        log = work / "torchrun.log"
        deadline = time.monotonic() + 2 * cluster.timeout + 30
        timed_out = False
        with _session(argv, env, log, status) as proc:
            while proc.poll() is None:
                if time.monotonic() > deadline:
                    timed_out = True
                    _kill(proc)
                    break
                time.sleep(0.05)
            code = proc.returncode
            if timed_out or code != 0 or (cluster.node_rank == 0 and not result.exists()):
                raise RunFailed(_diagnose(job, status, cluster.world_size, log, code, timed_out, cluster.timeout))
        if not result.exists():  # another node's rank 0 writes the result
            return {}
        data: dict[str, Any] = json.loads(result.read_text(encoding="utf-8"))
        return data


def _output(name: str, out: str | os.PathLike[str]) -> Path:
    """``out`` checked before any rank starts: a file that can be written, in a folder that is or can be made.

    A folder, a file one may not write, or a path through a file or an unwritable folder would
    otherwise fail only once the measurement is done, losing it.
    """
    text = out if isinstance(out, str) else os.fspath(out) if isinstance(out, os.PathLike) else None
    if not isinstance(text, str) or not text.strip() or "\0" in text:
        raise InvalidInput(name, _clip(text) if isinstance(text, str) else out, OUTPUT)
    shown = _clip(text)
    path = Path(text)
    if path.is_dir():
        raise InvalidInput(name, shown, N_("a file path, not a folder"))
    if path.exists():
        if not os.access(path, os.W_OK):
            raise InvalidInput(name, shown, N_("a file you can write to"))
        return path
    folder = path.parent
    while not folder.exists() and folder != folder.parent:  # the folders that are missing are made
        folder = folder.parent
    if not folder.is_dir():
        raise InvalidInput(
            name, shown, N_("a path through folders (%(part)s is a file)"), params={"part": _clip(str(folder))}
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InvalidInput(
            name,
            shown,
            N_("a file in a folder you can write to (not %(folder)s)"),
            params={"folder": _clip(str(folder))},
        )
    return path


def _unwritten(name: str, out: str | os.PathLike[str], exc: OSError) -> InvalidInput:
    """The output could not be written after all (the disk filled up, the folder went away)."""
    return InvalidInput(
        name,
        _clip(os.fspath(out)),
        N_("a file that can be written (%(reason)s)"),
        params={"reason": exc.strerror or type(exc).__name__},
    )


def _measured_before(devices: list[int], out: str | os.PathLike[str] | None) -> str:
    """What a failed measurement leaves: the records of the sizes done before it, if any."""
    if not devices or out is None:
        return "no record written"
    several = len(devices) > 1
    sizes = ", ".join(map(str, devices[:-1])) + f" and {devices[-1]}" if several else str(devices[0])
    what = f"the record{'s' if several else ''} for {sizes} rank{'' if devices == [1] else 's'}"
    where = _clip(os.fspath(out))
    return f"no record written at this size; {what}, measured before, {'are' if several else 'is'} in {where}"


def measure(
    sizes: Sequence[int],
    *,
    workload: str = "mlp",
    params: float = 1e6,
    batch: int = 32,
    steps: int = 20,
    warmup: int = 5,
    repeats: int = 3,
    cluster: Cluster | None = None,
    out: str | Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Run the synthetic workload at each size (ranks per node; ``cluster.nnodes`` nodes), ``repeats`` times.

    Returns one record per size: cluster throughput with a 95 % confidence interval over the
    repeats, per-rank throughput, step-time statistics, and E against the 1-rank run when one was
    measured. Records are appended to ``out`` as JSON lines.
    """
    base = cluster or Cluster()
    for name, value, least, most in (
        ("steps", steps, 1, MAX_STEPS),
        ("warmup", warmup, 0, MAX_STEPS),
        ("repeats", repeats, 1, MAX_REPEATS),
        ("batch", batch, 1, MAX_BATCH),
    ):
        _bounded(name, value, least, most)
    if isinstance(params, bool) or not (isinstance(params, int | float) and 1e3 <= params <= MAX_PARAMS):
        raise InvalidInput(
            "params",
            params,
            N_("from 1k to %(most)s (every rank holds the model and its gradients)"),
            params={"most": f"{MAX_PARAMS:.0e}"},
        )
    listed = list(sizes) if isinstance(sizes, Sequence) and not isinstance(sizes, str) else None
    if not listed or any(
        isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_RANKS_PER_NODE for n in listed
    ):
        raise InvalidInput(
            "nproc",
            listed if listed is not None and len(str(listed)) <= 80 else _clip(str(sizes)),
            N_("one or more rank counts per node, each from 1 to %(most)s"),
            params={"most": MAX_RANKS_PER_NODE},
        )
    if out is not None and base.node_rank == 0:
        _output("out", out)
    from dpscale.measure.workloads import KINDS  # torch, which the runs need anyway

    if workload not in KINDS:
        shown = _clip(workload) if isinstance(workload, str) else workload
        raise InvalidInput("workload", shown, N_("one of %(choices)s"), params={"choices": ", ".join(KINDS)})
    if base.threads is None:
        # A "device" on a CPU is a fixed share of the cores: the same at every size, so that the
        # 1-rank run is one device, not the whole machine.
        base = Cluster(**{**base.__dict__, "threads": max(1, (os.cpu_count() or 1) // max(sizes))})
        if max(sizes) > (os.cpu_count() or 1):
            warnings.warn(
                f"{max(sizes)} ranks on {os.cpu_count()} cores: ranks share cores, slowing them and the measurement",
                RuntimeWarning,
                stacklevel=2,
            )
    total = len(set(sizes)) * repeats
    done = 0
    recorded: list[int] = []  # the sizes whose record is written, for the message if a later one fails
    out_records: list[dict[str, Any]] = []
    single: float | None = None
    single_ci: tuple[float, float] | None = None
    for n in sorted(set(sizes)):
        cluster_n = Cluster(**{**base.__dict__, "nproc_per_node": n})
        runs = []
        options = [
            f"--workload={workload}",
            f"--params={params}",
            f"--batch={batch}",
            f"--steps={steps}",
            f"--warmup={warmup}",
        ]
        for _ in range(repeats):
            try:
                runs.append(_run("train", cluster_n, options))
            except RunFailed as exc:
                raise RunFailed(f"{exc}; {_measured_before(recorded, out)}") from None
            done += 1
            if progress is not None:
                progress(done, total)
        if not runs[0]:
            continue  # not rank 0's node: nothing to record here
        world = runs[0]["world_size"]
        throughputs = []
        per_rank: list[list[float]] = [[] for _ in range(world)]
        all_steps: list[float] = []
        for run in runs:
            rank_times = run["step_times"]
            # Every step ends with the all-reduce, so ranks move together; the slowest sets the pace.
            step = [max(ts[i] for ts in rank_times) for i in range(len(rank_times[0]))]
            all_steps += step
            throughputs.append(world * batch * len(step) / sum(step))
            for r, ts in enumerate(rank_times):
                per_rank[r].append(batch * len(ts) / sum(ts))
        mean, low, high = records.t_interval(throughputs)
        low = max(low, 0.0) if _is_finite(low) else low  # a throughput is never negative
        record: dict[str, Any] = {
            "devices": world,
            "throughput": mean,
            "throughput_ci": [_finite(low), _finite(high)],
            "per_rank_throughput": [sum(r) / len(r) for r in per_rank],
            "nodes": runs[0]["nodes"],
            "backend": runs[0]["backend"],
            "device_type": runs[0]["device_type"],
            "device_name": runs[0]["device_name"],
            "torch": runs[0]["torch"],
            "threads_per_rank": runs[0]["threads_per_rank"],
            "workload": workload,
            "params": runs[0]["params"],
            "batch": batch,
            "steps": steps,
            "warmup": warmup,
            "repeats": repeats,
            "step_time": records.summarize(all_steps),
            "complete": True,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        if world == 1:
            single, single_ci = mean, (low, high)
        if single is not None:
            record["efficiency"] = mean / (world * single)
            if single_ci is not None and all(map(_is_finite, (*single_ci, low, high))) and single_ci[0] > 0:
                record["efficiency_ci"] = [low / (world * single_ci[1]), high / (world * single_ci[0])]
        if out is not None:
            try:
                records.append(out, record)
            except OSError as exc:
                raise _unwritten("out", out, exc) from None
            recorded.append(world)
        out_records.append(record)
    return out_records


def _is_finite(x: float) -> bool:
    return x == x and x not in (float("inf"), float("-inf"))


def _finite(x: float) -> float | None:
    return x if _is_finite(x) else None


def fit_alpha_beta(sizes: Sequence[dict[str, float]], world: int) -> dict[str, float]:
    """α and β of a ring all-reduce, t = 2(n−1)·α + 2(n−1)/n · S·β, from (bytes, seconds).

    Latency from the smallest messages (the median of the three smallest, where bytes cost
    nothing), bandwidth from the largest (its time less that latency): two ends of the curve, each
    measured where it dominates, rather than one least-squares line that noise at small sizes can
    tilt below zero.
    """
    ordered = sorted(sizes, key=lambda p: p["bytes"])
    steps = 2 * (world - 1)
    small = sorted(p["seconds"] for p in ordered[:3])
    a = small[len(small) // 2]
    largest = ordered[-1]
    transfer = max(largest["seconds"] - a, largest["seconds"] / 2)  # never below half the measured time
    beta = transfer / (steps / world * largest["bytes"])
    return {"latency": a / steps, "bandwidth": 1 / beta}


def probe(
    cluster: Cluster | None = None,
    *,
    max_bytes: int = 2**26,
    reps: int = 10,
    warmup: int = 2,
    out: str | Path | None = None,
) -> dict[str, Any]:
    """All-reduce times from 8 bytes to ``max_bytes``, nccl-tests' algbw and busbw, and the fitted α, β.

    Across several nodes with several ranks each, each tier is probed on its own (the ranks of a
    node among themselves, then one rank per node) and gets its own α and β. Writes a network
    profile for ``dpscale predict --network`` to ``out``.
    """
    c = cluster or Cluster(nproc_per_node=2)
    if isinstance(max_bytes, bool) or not (isinstance(max_bytes, int) and 8 <= max_bytes <= MAX_PROBE_BYTES):
        raise InvalidInput(
            "max_bytes", max_bytes, N_("from 8 bytes to %(most)s MiB"), params={"most": MAX_PROBE_BYTES // 2**20}
        )
    _bounded("reps", reps, 1, MAX_STEPS)
    _bounded("warmup", warmup, 0, MAX_STEPS)
    if c.world_size < 2:
        raise InvalidInput("nproc", c.world_size, N_("at least 2 ranks in all: an all-reduce needs company"))
    if out is not None and c.node_rank == 0:
        _output("out", out)
    try:
        data = _run("probe", c, [f"--max-bytes={max_bytes}", f"--reps={reps}", f"--warmup={warmup}"])
    except RunFailed as exc:
        raise RunFailed(f"{exc}; no profile written") from None
    if not data:
        return {}
    world = data["world_size"]
    rows = []
    for p in data["sizes"]:
        algbw = p["bytes"] / p["seconds"]
        rows.append({**p, "algbw": algbw, "busbw": algbw * 2 * (world - 1) / world})

    def tier(sizes: list[dict[str, float]], ranks: int) -> dict[str, float]:
        fitted = fit_alpha_beta(sizes, ranks)
        return {"bandwidth": fitted["bandwidth"], "latency": fitted["latency"], "efficiency": 1.0}

    if data["nodes"] == 1:
        intra, inter = tier(data["sizes"], world), None
    elif "intra_sizes" in data:  # several ranks per node: each tier measured on its own
        local = data["local_world_size"]
        intra, inter = tier(data["intra_sizes"], local), tier(data["inter_sizes"], data["nodes"])
    else:  # one rank per node: the network is all there is
        intra, inter = None, tier(data["sizes"], world)
    profile = {
        "world_size": world,
        "nodes": data["nodes"],
        "devices_per_node": c.nproc_per_node,
        "backend": data["backend"],
        "device_type": data["device_type"],
        "torch": data["torch"],
        "intra": intra,
        "inter": inter,
        "sizes": rows,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if out is not None:
        try:
            Path(out).parent.mkdir(parents=True, exist_ok=True)
            Path(out).write_text(json.dumps(profile, indent=1, allow_nan=False), encoding="utf-8")
        except OSError as exc:
            raise _unwritten("out", out, exc) from None
    return profile
