"""``dpscale measure`` and ``dpscale probe``: every input checked, torchrun at each size, records written.

Every input, the output path included, is checked before any rank starts. Each run is supervised
by :mod:`dpscale.measure.supervise` (a session of its own, ended whole by a timeout or a signal;
a failure named by :mod:`dpscale.measure.diagnosis`); the runs of a size are summed up by
:mod:`dpscale.measure.summary`, a probe's times by :mod:`dpscale.measure.alphabeta`. Nothing is
written as complete unless every rank finished.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dpscale.errors import N_, InvalidInput, RunFailed
from dpscale.measure import summary, supervise
from dpscale.measure.alphabeta import fit_alpha_beta, network_profile
from dpscale.measure.launch import MAX_RANKS_PER_NODE, Launch, bounded, clip
from dpscale.measure.supervise import Terminated
from dpscale.records import Measurement, append, finite_or_none, timestamp

__all__ = [
    "MAX_BATCH",
    "MAX_PARAMS",
    "MAX_PROBE_BYTES",
    "MAX_REPEATS",
    "MAX_STEPS",
    "Launch",
    "Terminated",
    "fit_alpha_beta",
    "measure",
    "probe",
]


MAX_PARAMS = 1e9  # 4 GB of fp32 weights and as much again of gradients, on every rank
MAX_PROBE_BYTES = 2**30
MAX_BATCH = 65536  # samples per rank per step
MAX_STEPS = 100_000  # timed steps, warm-up steps, all-reduces per size
MAX_REPEATS = 1000

_OUTPUT = N_("a file path")


def _output(name: str, out: str | os.PathLike[str]) -> Path:
    """``out`` checked before any rank starts: a file that can be written, in a folder that is or can be made.

    A folder, a file one may not write, or a path through a file or an unwritable folder would
    otherwise fail only once the measurement is done, losing it.
    """
    text = out if isinstance(out, str) else os.fspath(out) if isinstance(out, os.PathLike) else None
    if not isinstance(text, str) or not text.strip() or "\0" in text:
        raise InvalidInput(name, clip(text) if isinstance(text, str) else out, _OUTPUT)
    shown = clip(text)
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
            name, shown, N_("a path through folders (%(part)s is a file)"), params={"part": clip(str(folder))}
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InvalidInput(
            name,
            shown,
            N_("a file in a folder you can write to (not %(folder)s)"),
            params={"folder": clip(str(folder))},
        )
    return path


def _unwritten(name: str, out: str | os.PathLike[str], exc: OSError) -> InvalidInput:
    """The output could not be written after all (the disk filled up, the folder went away)."""
    return InvalidInput(
        name,
        clip(os.fspath(out)),
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
    where = clip(os.fspath(out))
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
    sharding: str = "ddp",
    cluster: Launch | None = None,
    out: str | Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Run the synthetic workload at each size (ranks per node; ``cluster.nnodes`` nodes), ``repeats`` times.

    Returns one record per size, as its JSON object (:meth:`dpscale.records.Measurement.to_dict`):
    cluster throughput with a 95 % confidence interval over the repeats, per-rank throughput,
    step-time statistics, and E against the 1-rank run when one was measured. Records are
    appended to ``out`` as JSON lines. ``sharding`` runs the workload under DDP or PyTorch's FSDP
    (``zero2``, ``zero3``, ``hybrid``, or FSDP's own names); each record says which, with the
    most memory a rank held.
    """
    base = cluster or Launch()
    sharding = _measured_sharding(sharding)
    for name, value, least, most in (
        ("steps", steps, 1, MAX_STEPS),
        ("warmup", warmup, 0, MAX_STEPS),
        ("repeats", repeats, 1, MAX_REPEATS),
        ("batch", batch, 1, MAX_BATCH),
    ):
        bounded(name, value, least, most)
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
            listed if listed is not None and len(str(listed)) <= 80 else clip(str(sizes)),
            N_("one or more rank counts per node, each from 1 to %(most)s"),
            params={"most": MAX_RANKS_PER_NODE},
        )
    if out is not None and base.node_rank == 0:
        _output("out", out)
    from dpscale.measure.workloads import KINDS  # torch, which the runs need anyway

    if workload not in KINDS:
        shown = clip(workload) if isinstance(workload, str) else workload
        raise InvalidInput("workload", shown, N_("one of %(choices)s"), params={"choices": ", ".join(KINDS)})
    base = base.settled(max(sizes))  # the same threads at every size, from the CPUs this process may use
    options = [
        f"--workload={workload}",
        f"--params={params}",
        f"--batch={batch}",
        f"--steps={steps}",
        f"--warmup={warmup}",
        f"--sharding={sharding}",
    ]
    total = len(set(sizes)) * repeats
    done = 0
    recorded: list[int] = []  # the sizes whose record is written, for the message if a later one fails
    found: list[Measurement] = []
    single: summary.Repeats | None = None
    for n in sorted(set(sizes)):
        launch = dataclasses.replace(base, nproc_per_node=n)
        runs = []
        for _ in range(repeats):
            try:
                runs.append(supervise.run("train", launch, options))
            except RunFailed as exc:
                raise RunFailed(f"{exc}; {_measured_before(recorded, out)}") from None
            done += 1
            if progress is not None:
                progress(done, total)
        if not runs[0]:
            continue  # not rank 0's node: nothing to record here
        measured = summary.repeats([run["step_times"] for run in runs], batch)
        if measured.devices == 1:
            single = measured
        e, e_ci = (None, None) if single is None else summary.efficiency(measured, single)
        first = runs[0]
        peaks = [peak for run in runs for peak in run.get("peak_memory", ())]
        record = Measurement(
            devices=measured.devices,
            throughput=measured.throughput,
            throughput_ci=(finite_or_none(measured.low), finite_or_none(measured.high)),
            per_rank_throughput=measured.per_rank,
            nodes=first["nodes"],
            backend=first["backend"],
            device_type=first["device_type"],
            device_name=first["device_name"],
            torch=first["torch"],
            threads_per_rank=first["threads_per_rank"],
            cpus_usable=first.get("cpus_usable"),
            workload=workload,
            params=first["params"],
            batch=batch,
            steps=steps,
            warmup=warmup,
            repeats=repeats,
            step_time=measured.step_time,
            complete=True,
            time=timestamp(),
            efficiency=e,
            efficiency_ci=e_ci,
            sharding=first.get("sharding", sharding),
            peak_memory=max(peaks) if peaks else None,
        )
        if out is not None:
            try:
                append(out, record)
            except OSError as exc:
                raise _unwritten("out", out, exc) from None
            recorded.append(record.devices)
        found.append(record)
    return [record.to_dict() for record in found]


MEASURED_SHARDINGS = ("ddp", "zero2", "zero3", "hybrid")  # what PyTorch's DDP and FSDP run (FSDP has no ZeRO-1)


def _measured_sharding(value: object) -> str:
    from dpscale.predict.defaults import SHARDING_SYNONYMS

    name = value.strip().lower() if isinstance(value, str) else value
    name = dict(SHARDING_SYNONYMS).get(name, name) if isinstance(name, str) else name
    if name not in MEASURED_SHARDINGS:
        shown = clip(value) if isinstance(value, str) else value
        accepted = ", ".join(MEASURED_SHARDINGS)
        raise InvalidInput(
            "sharding", shown, N_("one of %(choices)s (FSDP runs no ZeRO-1)"), params={"choices": accepted}
        )
    return str(name)


def probe(
    cluster: Launch | None = None,
    *,
    max_bytes: int = 2**26,
    reps: int = 10,
    warmup: int = 2,
    out: str | Path | None = None,
) -> dict[str, Any]:
    """All-reduce times from 8 bytes to ``max_bytes``, nccl-tests' algbw and busbw, and the fitted α, β.

    Across several nodes with several ranks each, each tier is probed on its own (the ranks of a
    node among themselves, then one rank per node) and gets its own α and β. Writes a network
    profile for ``dpscale predict --network`` to ``out`` and returns it as its JSON object
    (:meth:`dpscale.records.NetworkProfile.to_dict`; ``{}`` on the other nodes).
    """
    c = cluster or Launch(nproc_per_node=2)
    if isinstance(max_bytes, bool) or not (isinstance(max_bytes, int) and 8 <= max_bytes <= MAX_PROBE_BYTES):
        raise InvalidInput(
            "max_bytes", max_bytes, N_("from 8 bytes to %(most)s MiB"), params={"most": MAX_PROBE_BYTES // 2**20}
        )
    bounded("reps", reps, 1, MAX_STEPS)
    bounded("warmup", warmup, 0, MAX_STEPS)
    if c.world_size < 2:
        raise InvalidInput("nproc", c.world_size, N_("at least 2 ranks in all: an all-reduce needs company"))
    if out is not None and c.node_rank == 0:
        _output("out", out)
    c = c.settled()
    try:
        data = supervise.run("probe", c, [f"--max-bytes={max_bytes}", f"--reps={reps}", f"--warmup={warmup}"])
    except RunFailed as exc:
        raise RunFailed(f"{exc}; no profile written") from None
    if not data:
        return {}
    profile = network_profile(data, c.nproc_per_node).to_dict()
    if out is not None:
        try:
            Path(out).parent.mkdir(parents=True, exist_ok=True)
            Path(out).write_text(json.dumps(profile, indent=1, allow_nan=False), encoding="utf-8")
        except OSError as exc:
            raise _unwritten("out", out, exc) from None
    return profile
