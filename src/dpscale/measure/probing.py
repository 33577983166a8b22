"""``dpscale probe``: all-reduce times over message sizes, and the α and β they imply, as a network profile.

Its inputs are checked into a plan (:func:`plan_probe`), the output path included, before any
rank starts; one supervised torchrun (:mod:`dpscale.measure.supervise`) times the all-reduces,
:mod:`dpscale.measure.alphabeta` fits each tier's α and β, and the typed profile
(:class:`~dpscale.records.NetworkProfile`) is written for ``dpscale predict --network``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dpscale.errors import N_, InvalidInput, RunFailed
from dpscale.measure import supervise
from dpscale.measure.alphabeta import network_profile
from dpscale.measure.launch import MAX_STEPS, Launch, bounded, clip, writable
from dpscale.records import NetworkProfile, unwritten, write_profile

__all__ = ["MAX_PROBE_BYTES", "ProbePlan", "plan_probe", "probe", "run_probe"]

MAX_PROBE_BYTES = 2**30


@dataclass(frozen=True, slots=True)
class ProbePlan:
    """A probe checked and ready to run: where and how, the message sizes' bound and repeats, where it is written."""

    launch: Launch
    max_bytes: int
    reps: int
    warmup: int
    out: str | Path | None  # the network profile written, as given (None: returned only)

    def worker_options(self) -> list[str]:
        return [f"--max-bytes={self.max_bytes}", f"--reps={self.reps}", f"--warmup={self.warmup}"]


def probe(
    cluster: Launch | None = None,
    *,
    max_bytes: int = 2**26,
    reps: int = 10,
    warmup: int = 2,
    out: str | Path | None = None,
) -> NetworkProfile | None:
    """All-reduce times from 8 bytes to ``max_bytes``, nccl-tests' algbw and busbw, and the fitted α, β.

    Across several nodes with several ranks each, each tier is probed on its own (the ranks of a
    node among themselves, then one rank per node) and gets its own α and β. Writes a network
    profile for ``dpscale predict --network`` to ``out`` and returns it (None on the other nodes).
    """
    return run_probe(plan_probe(cluster, max_bytes=max_bytes, reps=reps, warmup=warmup, out=out))


def plan_probe(
    cluster: Launch | None = None,
    *,
    max_bytes: int = 2**26,
    reps: int = 10,
    warmup: int = 2,
    out: str | Path | None = None,
) -> ProbePlan:
    """:func:`probe`'s inputs checked (InvalidInput names the first that is not fine), before any rank starts."""
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
        writable("out", out)
    out = out if c.node_rank == 0 else None  # node 0 writes the profile
    return ProbePlan(launch=c.settled(), max_bytes=max_bytes, reps=reps, warmup=warmup, out=out)


def run_probe(plan: ProbePlan) -> NetworkProfile | None:
    """The probe of ``plan`` run, its α and β fitted, its profile written to ``plan.out`` (None on the other nodes)."""
    try:
        data = supervise.run("probe", plan.launch, plan.worker_options())
    except RunFailed as exc:
        raise RunFailed(f"{exc}; no profile written") from None
    if not data:
        return None
    profile = network_profile(data, plan.launch.nproc_per_node)
    if plan.out is not None:
        try:
            write_profile(plan.out, profile)
        except OSError as exc:
            raise unwritten("out", clip(os.fspath(plan.out)), exc) from None
    return profile
