"""Where each rank's step time goes, and what the run says about the job at other sizes.

For each rank r and profiler step j (a window of the step's length ``T``), with C the time the
rank computes and M the time a collective is in flight (unions of intervals, see
:mod:`dpscale.explain.rank_trace`):

    compute                 = |C ∩ step|
    exposed communication   = |(M − C) ∩ step|    a collective in flight while nothing computes
    other                   = T − compute − exposed   (idle, data loading, host overhead)
    overlap                 = |M ∩ C| / |M|       the share of communication hidden behind compute
    work                    = compute + other     what the rank would take without communicating
    wait                    = max over ranks of work − work   waiting for the slowest rank

The three parts sum to the step time exactly. The slowest rank is the one whose work is the
longest on average; its exposed communication is the transfer no compute hid (it waits for
nobody). The efficiency the run implies is Σ work / Σ step time over ranks and steps: the share
of the devices' time not lost to communication or to waiting (predict's E with T_step(1) = work).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dpscale._display import ShowsAsTable
from dpscale.errors import N_, InvalidInput
from dpscale.explain.intervals import difference, lengths_in, pairs
from dpscale.explain.rank_trace import NO_STEPS, RankTimeline
from dpscale.messages import Message

__all__ = ["Calibration", "Explanation", "Lever", "RankBreakdown", "Spread", "explain_timelines"]

_US = 1e-6  # trace times are µs; results are seconds


@dataclass(frozen=True, slots=True)
class Spread:
    """A quantity per step: its mean, standard deviation, least and largest value (seconds)."""

    mean: float
    sd: float
    low: float
    high: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        return cls(
            statistics.fmean(values), statistics.pstdev(values) if len(values) > 1 else 0.0, min(values), max(values)
        )

    def to_dict(self) -> dict[str, float]:
        return {"mean": self.mean, "sd": self.sd, "min": self.low, "max": self.high}


@dataclass(frozen=True, slots=True)
class RankBreakdown:
    """One rank's steps: step time, compute, exposed communication and other (they sum to the step time).

    ``communication`` is the time a collective was in flight, hidden or not; ``wait`` the time
    the rank waited for the slowest one; ``overlap`` the share of communication hidden behind
    compute (None without communication). ``skipped`` events of its file could not be read.
    """

    rank: int
    file: str
    steps: int
    step_time: Spread
    compute: Spread
    exposed_communication: Spread
    other: Spread
    communication: Spread
    wait: Spread
    overlap: float | None
    device: str
    skipped: int

    @property
    def work(self) -> float:
        """The rank's mean step without communicating, compute + other: its step alone on one device (seconds)."""
        return self.compute.mean + self.other.mean

    @property
    def exposed_wait(self) -> float:
        """The mean wait for the slowest rank, as part of the exposed communication: never more than it (seconds)."""
        return min(self.wait.mean, self.exposed_communication.mean)

    def to_dict(self) -> dict[str, Any]:
        parts = ("step_time", "compute", "exposed_communication", "other", "communication", "wait")
        return {
            "rank": self.rank,
            "file": self.file,
            "steps": self.steps,
            **{name: getattr(self, name).mean for name in parts},
            "overlap": self.overlap,
            "device": self.device,
            "skipped_events": self.skipped,
            "spread": {name: getattr(self, name).to_dict() for name in parts},
        }


@dataclass(frozen=True, slots=True)
class Calibration:
    """What the traces measured, for ``dpscale predict`` to use in place of its defaults (per step, seconds).

    - ``devices``: the ranks read.
    - ``compute_time``: mean time a rank computes (operators on a CPU, kernels on a GPU).
    - ``other_time``: mean time a rank neither computes nor communicates (host, input, idle).
    - ``single_device_step``: ``compute_time + other_time``, the step one device would take
      alone: predict's T_c (T_step(1)), from which a per-device throughput is batch / this.
    - ``communication_time``: time a collective is in flight on the slowest rank, hidden or not:
      predict's T_comm at ``devices``.
    - ``exposed_communication``: the slowest rank's communication that no compute hid: predict's
      T_exposed (the slowest rank waits for nobody, so this is transfer, not waiting).
    - ``overlap``: the slowest rank's share of communication hidden behind compute, from 0 to 1;
      None without communication.
    - ``collective_bytes``: payload bytes per step of the collectives whose size the trace gives
      (NCCL kernels, ``record_param_comms``); None when it gives none (gloo).
    - ``bandwidth``: ``collective_bytes / communication_time``, bytes/s: the achieved algorithm
      bandwidth (nccl-tests' algbw, over every collective of the step); None without sizes.
    - ``straggler_wait``: mean over steps of the slowest rank's work minus the ranks' mean work:
      predict's T_wait at ``devices``.
    - ``step_time_cv``: coefficient of variation of a rank's work (compute + other) over every
      rank and step: predict's jitter.
    """

    devices: int
    compute_time: float
    other_time: float
    single_device_step: float
    communication_time: float
    exposed_communication: float
    overlap: float | None
    collective_bytes: float | None
    bandwidth: float | None
    straggler_wait: float
    step_time_cv: float

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(frozen=True, slots=True)
class Lever:
    """What removing one measured term would save per step (seconds), and the speed-up that gives."""

    name: str
    description: str
    saving: float
    speedup: float | None  # None where the term is the whole step

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "saving": self.saving, "speedup": self.speedup}


LEVERS = {
    "balance": N_("balance the work across ranks: the others wait for the slowest"),
    "communication": N_("hide or speed up the communication no compute hides (overlap, bandwidth, fewer bytes)"),
    "host": N_("cut the time no operator runs: input pipeline, host overhead, idle"),
}


@dataclass(frozen=True, slots=True)
class Explanation(ShowsAsTable):
    """Each rank's breakdown, the slowest rank, the efficiency the run implies, the calibration and the levers."""

    ranks: tuple[RankBreakdown, ...]
    step_numbers: tuple[int, ...]
    slowest_rank: int
    step_time: float
    efficiency: float
    calibration: Calibration
    levers: tuple[Lever, ...]
    notes: tuple[Message, ...]

    @property
    def bottleneck(self) -> str:
        """The lever that saves the most ("compute" when none saves anything)."""
        return self.levers[0].name if self.levers else "compute"

    @property
    def work_range(self) -> tuple[float, float]:
        """The least and the largest of the ranks' work (:attr:`RankBreakdown.work`): a step alone, by rank (s)."""
        works = [r.work for r in self.ranks]
        return min(works), max(works)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ranks": [rank.to_dict() for rank in self.ranks],
            "slowest_rank": self.slowest_rank,
            "steps": list(self.step_numbers),
            "step_time": self.step_time,
            "efficiency": self.efficiency,
            "bottleneck": self.bottleneck,
            "calibration": self.calibration.to_dict(),
            "levers": [lever.to_dict() for lever in self.levers],
            "notes": [str(note) for note in self.notes],
        }


@dataclass(frozen=True, slots=True)
class _Steps:
    step: list[float]
    compute: list[float]
    exposed: list[float]
    communication: list[float]
    sizes: list[float]

    @property
    def work(self) -> list[float]:
        return [t - e for t, e in zip(self.step, self.exposed, strict=True)]


def _split(timeline: RankTimeline) -> _Steps:
    windows = [(start, end) for _, start, end in timeline.steps]
    exposed = difference(timeline.communication, timeline.compute)
    sizes = [0.0] * len(windows)
    starts = [start for start, _ in windows]
    j = 0
    for when, size in pairs(timeline.sizes):  # each collective counts in the step it starts in
        while j + 1 < len(starts) and starts[j + 1] <= when:
            j += 1
        if windows[j][0] <= when < windows[j][1]:
            sizes[j] += size
    return _Steps(
        [(end - start) * _US for start, end in windows],
        [t * _US for t in lengths_in(timeline.compute, windows)],
        [t * _US for t in lengths_in(exposed, windows)],
        [t * _US for t in lengths_in(timeline.communication, windows)],
        sizes,
    )


def explain_timelines(timelines: Sequence[RankTimeline]) -> Explanation:
    """The :class:`Explanation` of one run's ranks, each read by :func:`dpscale.explain.read_trace`.

    Raises InvalidInput naming the file when two files are the same rank or the ranks' profiler
    steps differ.
    """
    if not timelines:
        raise InvalidInput("trace", "", N_("one or more trace files, or a folder of them"))
    for t in timelines:
        if not t.steps:
            raise InvalidInput("trace", t.file, NO_STEPS)
    notes: list[Message] = []
    given = [t.rank for t in timelines]
    ranks = [r for r in given if r is not None]
    if len(set(ranks)) != len(timelines):
        seen: dict[int | None, str] = {}
        for t in timelines:
            if t.rank is not None and t.rank in seen:
                raise InvalidInput(
                    "trace",
                    t.file,
                    N_("the trace of another rank (rank %(rank)s is also %(other)s)"),
                    params={"rank": t.rank, "other": seen[t.rank]},
                )
            seen[t.rank] = t.file
        notes.append(Message.of("The traces do not say their ranks: ranks are numbered in the files' order."))
        ranks = list(range(len(timelines)))
    order = sorted(range(len(timelines)), key=ranks.__getitem__)  # shown by rank, whatever the files' names
    timelines, ranks = [timelines[i] for i in order], [ranks[i] for i in order]
    first = timelines[0]
    numbers = tuple(n for n, _, _ in first.steps)
    for t in timelines[1:]:
        theirs = tuple(n for n, _, _ in t.steps)
        if theirs != numbers:
            raise InvalidInput(
                "trace",
                t.file,
                N_("the same profiler steps on every rank: %(file)s has %(steps)s, this file %(theirs)s"),
                params={"file": first.file, "steps": _steps_text(numbers), "theirs": _steps_text(theirs)},
            )
    worlds = {t.world_size for t in timelines if t.world_size is not None}
    if len(worlds) == 1 and (world := worlds.pop()) != len(timelines):
        notes.append(Message.of("Read %(read)s of the run's %(world)s ranks.", read=len(timelines), world=world))
    for t in timelines:
        if t.skipped:
            notes.append(
                Message.of(
                    "%(file)s: %(count)s events could not be read and were left out.", file=t.file, count=t.skipped
                )
            )
    split = [_split(t) for t in timelines]
    works = [s.work for s in split]
    most = [max(column) for column in zip(*works, strict=True)]
    slowest = max(range(len(split)), key=lambda i: (statistics.fmean(works[i]), -i))
    breakdowns = []
    for rank, t, s, work in zip(ranks, timelines, split, works, strict=True):
        communication = sum(s.communication)
        hidden = communication - sum(s.exposed)
        breakdowns.append(
            RankBreakdown(
                rank=rank,
                file=t.file,
                steps=len(s.step),
                step_time=Spread.of(s.step),
                compute=Spread.of(s.compute),
                exposed_communication=Spread.of(s.exposed),
                other=Spread.of([max(0.0, w - c) for w, c in zip(work, s.compute, strict=True)]),
                communication=Spread.of(s.communication),
                wait=Spread.of([m - w for m, w in zip(most, work, strict=True)]),
                overlap=min(1.0, max(0.0, hidden / communication)) if communication > 0 else None,
                device="gpu" if t.device else "cpu",
                skipped=t.skipped,
            )
        )
    total_step = sum(sum(s.step) for s in split)
    efficiency = sum(sum(w) for w in works) / total_step if total_step > 0 else 1.0
    calibration = _calibration(breakdowns, split, slowest, works, most)
    step_time = statistics.fmean(b.step_time.mean for b in breakdowns)
    levers = _levers(calibration, breakdowns[slowest], step_time)
    return Explanation(
        tuple(breakdowns), numbers, breakdowns[slowest].rank, step_time, efficiency, calibration, levers, tuple(notes)
    )


def _calibration(
    ranks: list[RankBreakdown], split: list[_Steps], slowest: int, works: list[list[float]], most: list[float]
) -> Calibration:
    pooled = [w for work in works for w in work]
    mean_work = statistics.fmean(pooled)
    cv = statistics.pstdev(pooled) / mean_work if len(pooled) > 1 and mean_work > 0 else 0.0
    slow = ranks[slowest]
    sizes = split[slowest].sizes
    per_step = statistics.fmean(sizes)
    collective_bytes = per_step if per_step > 0 else None
    communication = slow.communication.mean
    bandwidth = collective_bytes / communication if collective_bytes is not None and communication > 0 else None
    mean_of_ranks = [statistics.fmean(column) for column in zip(*works, strict=True)]
    compute = statistics.fmean(r.compute.mean for r in ranks)
    other = statistics.fmean(r.other.mean for r in ranks)
    return Calibration(
        devices=len(ranks),
        compute_time=compute,
        other_time=other,
        single_device_step=compute + other,
        communication_time=communication,
        exposed_communication=slow.exposed_communication.mean,
        overlap=slow.overlap,
        collective_bytes=collective_bytes,
        bandwidth=bandwidth if bandwidth is None or math.isfinite(bandwidth) else None,
        straggler_wait=statistics.fmean(m - w for m, w in zip(most, mean_of_ranks, strict=True)),
        step_time_cv=cv,
    )


def _levers(calibration: Calibration, slowest: RankBreakdown, step_time: float) -> tuple[Lever, ...]:
    savings = {
        "balance": calibration.straggler_wait,
        "communication": slowest.exposed_communication.mean,
        "host": slowest.other.mean,
    }
    found = [
        Lever(name, LEVERS[name], saving, step_time / (step_time - saving) if step_time > saving else None)
        for name, saving in savings.items()
        if saving > 0
    ]
    return tuple(sorted(found, key=lambda lever: lever.saving, reverse=True))


def _steps_text(numbers: Sequence[int]) -> Message:
    if not numbers:
        return Message.of("no steps")
    if len(numbers) == 1:
        return Message.of("step %(number)s", number=numbers[0])
    if list(numbers) == list(range(numbers[0], numbers[0] + len(numbers))):
        return Message.of("steps %(first)s–%(last)s", first=numbers[0], last=numbers[-1])
    listed = ", ".join(map(str, numbers[:8])) + (", …" if len(numbers) > 8 else "")
    return Message.of("steps %(numbers)s", numbers=listed)
