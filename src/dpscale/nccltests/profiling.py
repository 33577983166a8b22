"""α and β of each collective and tier from nccl-tests runs, and the network profile they make.

The model is the one ``dpscale predict`` prices with (:mod:`dpscale.collectives.costs`): for
each algorithm NCCL may choose, a time a(n)·α + c(n)·S·β, and ``auto`` takes the fastest at each
size (``candidates`` for an all-reduce: NCCL's ring and tree, whose channels cross each node
boundary once; ``gather_candidates`` for a reduce-scatter or an all-gather, which NCCL runs on
rings). α is counted by the steps of the algorithm the model picks at each size, per tier as
NCCL's tuning model counts them, in the fit as in ``predict``.

**NCCL's switch between algorithms with size** is left to the model, as it is when predicting:
the fit asks that the model's own choice at each size give back the measured time. Small
messages, where the time stays within 25 % of the smallest, fix α: for each such size the α at
which the fastest algorithm's time equals the measured one (a tree's 2·⌈log₂ N⌉ network steps
across nodes where the model picks the tree, a ring's 2(n−1) in a node), and α is their median.
The sizes whose algbw is within 80 % of the best, where bytes dominate, fix β by least squares on
the relative error of t = a(n)·α + c(n)·S·β for the algorithm the model picks there (a ring). The
two are refined in turn. The mid sizes between them are where NCCL's protocols (LL, LL128,
Simple) change and where no two-parameter line holds; their error is reported, not fitted:
``predict`` gives each run's own times back at its shape (:class:`~dpscale.records.MeasuredRun`).

**Tiers**: a run on one host gives the intra-node link; a run across hosts gives the network
tier (the node's whole network: a ring's bus bandwidth across nodes is the slower of it and one
GPU's links), fitted with the intra-node link from the one-host run of the same collective (or of
another) when one is given, else as if the node's own links cost nothing; ``predict`` then
assumes the same of them, or fits the network again to the runs with the node's links it is
given (:func:`fit_runs`). Several runs of a tier (4 and 8 GPUs, 2 and 4 nodes) are fitted
together.

**In-network reduction**: an all-reduce whose bus bandwidth is above the line rate of the GPU's
own NVLink was reduced in the switches (:mod:`dpscale.nccltests.reduction`); its tier is then
fitted with NCCL's in-network algorithms among those the model may pick
(:mod:`dpscale.collectives.innetwork`), said so in the profile (``"in_network": true``) and in a note.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from dpscale.errors import N_, InvalidInput
from dpscale.messages import Message
from dpscale.nccltests.logfiles import COLLECTIVES, Log
from dpscale.nccltests.reduction import reduced_tiers
from dpscale.records import AllReduceTiming, MeasuredRun, NetworkProfile, ProbedLink, timestamp

__all__ = ["FREE", "Check", "Imported", "as_link", "fit_runs", "import_logs", "model_time", "runs_of"]

LATENCY_SPAN = 1.25  # sizes whose time is within this factor of the smallest: latency-bound
PLATEAU = 0.8  # sizes whose algbw is at least this share of the best: bandwidth-bound
# Two unit links: the model is affine in α, and in β wherever the tier fitted is the slower one
# (a ring's bus bandwidth across nodes is the slower of the node's links and its network), so the
# unit bandwidths are far below any link's.
_A1, _A2, _B1, _B2 = 1e-5, 2e-5, 1e-6, 2e-6
FREE = (1e18, 0.0)  # bandwidth and latency of a node's own links when no one-host run says what they cost
Terms = tuple[float, float, float, float]  # a = pa + qa·α, c = pc + qc·β for the tier being fitted


@dataclass(frozen=True, slots=True)
class Check:
    """How well the fitted model gives back one run: its largest and smallest sizes, measured and predicted."""

    file: str
    collective: str
    ranks: int
    hosts: int
    largest: tuple[int, float, float]  # bytes, measured seconds, predicted seconds
    smallest: tuple[int, float, float]


@dataclass(frozen=True)
class Imported:
    """A network profile from nccl-tests runs, how well it gives each run back, and what the fit
    says of the runs for a user to be told (a tier found to reduce in its switches)."""

    profile: NetworkProfile
    checks: tuple[Check, ...]
    notes: tuple[Message, ...] = ()


def runs_of(logs: Sequence[Log]) -> tuple[MeasuredRun, ...]:
    """Each log as a profile keeps it: its shape and the median of its times at each size."""
    out = []
    for log in logs:
        times: dict[int, list[float]] = {}
        for row in log.rows:
            times.setdefault(row.bytes, []).append(row.seconds)
        per_host = log.devices_per_host if log.hosts > 1 else log.ranks
        sizes = tuple((size, float(statistics.median(found))) for size, found in sorted(times.items()))
        out.append(MeasuredRun(PurePath(log.name).name, log.collective, log.ranks, log.hosts, per_host, sizes))
    return tuple(out)


def _priced(collective: str, ranks: int, links: dict[str, Any]) -> list[Any]:
    """The (a, c) terms of each algorithm the model may pick for ``collective``, as ``predict`` prices it."""
    from dpscale.collectives.costs import candidates, gather_candidates

    price = candidates if collective == "all_reduce" else gather_candidates
    return price(ranks, algorithm="auto", **links)


def _links(intra: Any, inter: Any, hosts: int, per_host: int) -> dict[str, Any]:
    return {"intra": intra} if hosts == 1 else {"intra": intra, "inter": inter, "per_node": per_host}


def _terms(run: MeasuredRun, per_host: int, intra: Any, reduces: bool) -> list[Terms]:
    """Each algorithm's a and c as affine functions of the fitted tier's α and β (intra known across hosts);
    ``reduces``: the fitted tier's switches reduce (:mod:`dpscale.nccltests.reduction`)."""
    from dpscale.collectives.link import Link

    def priced(link: Any) -> list[Any]:
        g = run.ranks if run.hosts == 1 else per_host
        links = _links(link, None, 1, g) if run.hosts == 1 else _links(intra, link, run.hosts, g)
        return _priced(run.collective, run.ranks, links)

    found: list[Terms] = []
    units = (Link(1 / _B1, _A1, in_network=reduces), Link(1 / _B2, _A2, in_network=reduces))
    for (a1, c1), (a2, c2) in zip(priced(units[0]), priced(units[1]), strict=True):
        qa = (float(a2) - float(a1)) / (_A2 - _A1)
        qc = (float(c2) - float(c1)) / (_B2 - _B1)
        found.append((float(a1) - qa * _A1, qa, float(c1) - qc * _B1, qc))
    return found


def _at(terms: Sequence[Terms], size: float, alpha: float, beta: float) -> float:
    return min(pa + qa * alpha + (pc + qc * beta) * size for pa, qa, pc, qc in terms)


@dataclass(frozen=True, slots=True)
class _Point:
    size: float
    seconds: float
    terms: list[Terms]


def _alpha(points: Sequence[_Point], beta: float) -> float:
    """The median over latency-bound sizes of the α at which the model's fastest algorithm takes the measured time."""
    found = []
    for p in points:
        # The model's time min_k(...) grows with α: it reaches t where every algorithm's time has.
        need = [(p.seconds - pa - (pc + qc * beta) * p.size) / qa for pa, qa, pc, qc in p.terms if qa > 0]
        if need:
            found.append(max(need))
    return max(0.0, statistics.median(found)) if found else 0.0


def _beta(points: Sequence[_Point], alpha: float) -> float | None:
    """β by least squares on the relative error, for the algorithm the model picks at these sizes."""
    best: tuple[float, float] | None = None
    for k in range(len(points[0].terms)):
        num = den = 0.0
        for p in points:
            pa, qa, pc, qc = p.terms[k]
            fixed, per_beta = (pa + qa * alpha + pc * p.size) / p.seconds, qc * p.size / p.seconds
            num += per_beta * (1 - fixed)
            den += per_beta * per_beta
        if den <= 0 or num <= 0:
            continue
        beta = num / den
        miss = sum((_at(p.terms, p.size, alpha, beta) / p.seconds - 1) ** 2 for p in points)
        if best is None or miss < best[0]:
            best = (miss, beta)
    return None if best is None else best[1]


def _names(runs: Sequence[MeasuredRun]) -> str:
    return ", ".join(run.name for run in runs)


def _fit(runs: Sequence[MeasuredRun], intra: Any, per_host: int, reduces: bool = False) -> ProbedLink:
    points = [
        _Point(size, seconds, terms)
        for run in runs
        for terms in [_terms(run, per_host, intra, reduces)]
        for size, seconds in run.sizes
    ]
    if len({p.size for p in points}) < 2:  # nccl-tests' default, -b 32M -e 32M, times one size
        raise InvalidInput(
            "import", _names(runs), N_("runs over several sizes (-b and -e apart, such as -b 8 -e 1G -f 2)")
        )
    fastest = min(p.seconds for p in points)
    small = [p for p in points if p.seconds <= LATENCY_SPAN * fastest]
    best = max(p.size / p.seconds for p in points)
    large = [p for p in points if p.size / p.seconds >= PLATEAU * best]
    alpha, beta = _alpha(small, 0.0), None
    for _ in range(3):  # each end depends a little on the other
        beta = _beta(large, alpha)
        if beta is None:
            break
        alpha = _alpha(small, beta)
    if beta is None:
        raise InvalidInput(
            "import",
            _names(runs),
            N_("times that grow with the message size (the largest sizes must take longer than the smallest)"),
        )
    if intra is not None:
        # Across nodes a ring moves bytes at the slower of the node's links and its network: a run
        # faster than the node's links allow says the network is at least as fast as they are.
        beta = max(beta, 1 / (intra.bandwidth * intra.efficiency))
    return ProbedLink(bandwidth=1 / beta, latency=alpha, in_network=reduces)


def model_time(collective: str, size: float, ranks: int, hosts: int, per_host: int, intra: Any, inter: Any) -> float:
    """The model's time for ``size`` bytes of ``collective`` over ``ranks`` ranks on ``hosts`` hosts of ``per_host``.

    Priced by the functions ``predict`` uses: :func:`~dpscale.collectives.costs.all_reduce_time`,
    ``reduce_scatter_time`` and ``all_gather_time``.
    """
    from dpscale.collectives import costs

    links = _links(intra, inter, hosts, per_host) if hosts > 1 else {"intra": intra or inter}
    timed = {
        "all_reduce": costs.all_reduce_time,
        "reduce_scatter": costs.reduce_scatter_time,
        "all_gather": costs.all_gather_time,
    }[collective]
    return float(timed(size, ranks, **links))


def as_link(probed: ProbedLink | None) -> Any:
    """The :class:`~dpscale.collectives.link.Link` a profile's tier stands for (None for None)."""
    from dpscale.collectives.link import Link

    if probed is None:
        return None
    return Link(probed.bandwidth, probed.latency, probed.efficiency, in_network=probed.in_network)


Fitted = dict[str, tuple[ProbedLink | None, ProbedLink | None]]


def _per_host(runs: Sequence[MeasuredRun]) -> int:
    across = [run for run in runs if run.hosts > 1]
    shapes = {run.devices_per_host for run in across}
    if len(shapes) > 1:
        raise InvalidInput(
            "import",
            ", ".join(f"{run.name}: {run.devices_per_host}" for run in across)[:80],
            N_("runs across nodes with the same number of GPUs per node"),
        )
    return shapes.pop() if shapes else max(run.ranks for run in runs)


def fit_runs(runs: Sequence[MeasuredRun], intra: Any = None, reduced: Collection[str] = ()) -> Fitted:
    """Each collective's (intra, inter) tiers fitted to ``runs`` (None where no run measured a tier).

    With ``intra`` (a :class:`~dpscale.collectives.link.Link`), the node's links are taken as
    given for every collective, and each network tier is fitted with them: what ``predict`` does
    when it is told the node's links a profile did not measure, or other ones. ``reduced``: the
    tiers (``intra``, ``inter``) whose switches reduce, fitted so (:mod:`dpscale.nccltests.reduction`).
    """
    if not runs:
        raise InvalidInput("import", "", N_("one or more nccl-tests outputs"))
    per_host = _per_host(runs)
    fitted: dict[str, list[ProbedLink | None]] = {}
    for collective in COLLECTIVES:
        one = [run for run in runs if run.collective == collective and run.hosts == 1]
        if one and intra is None:
            fitted[collective] = [_fit(one, None, per_host, "intra" in reduced), None]
    known = next((fitted[c][0] for c in COLLECTIVES if c in fitted), None)
    for collective in COLLECTIVES:
        many = [run for run in runs if run.collective == collective and run.hosts > 1]
        if not many:
            continue
        entry = fitted.setdefault(collective, [None, None])
        base = entry[0] or known
        node = intra if intra is not None else as_link(base) if base is not None else _free()
        entry[1] = _fit(many, node, per_host, "inter" in reduced)
    return {name: (entry[0], entry[1]) for name, entry in fitted.items()}


def _free() -> Any:
    from dpscale.collectives.link import Link

    return Link(*FREE)


def import_logs(logs: Sequence[Log]) -> Imported:
    """The network profile of nccl-tests runs: α and β per collective and tier, and checks against each run."""
    from dpscale.collectives.costs import algbw, busbw

    if not logs:
        raise InvalidInput("import", "", N_("one or more nccl-tests outputs"))
    runs = runs_of(logs)
    per_host = _per_host(runs)
    reduced, notes = reduced_tiers(list(logs))
    fitted = fit_runs(runs, reduced=reduced)
    known = next((fitted[c][0] for c in COLLECTIVES if c in fitted and fitted[c][0] is not None), None)
    checks = []
    for log, run in zip(logs, runs, strict=True):
        own_intra, own_inter = fitted[run.collective]
        base = own_intra or known
        intra = as_link(base) if base is not None else _free()
        inter = as_link(own_inter)
        g = per_host if run.hosts > 1 else run.ranks
        ends = []
        for size, seconds in (run.sizes[-1], run.sizes[0]):
            predicted = model_time(run.collective, size, run.ranks, run.hosts, g, intra, inter)
            ends.append((size, seconds, predicted))
        checks.append(Check(run.name, log.collective, log.ranks, log.hosts, ends[0], ends[1]))
    main = next(fitted[c] for c in COLLECTIVES if c in fitted)
    widest = max(logs, key=lambda log: (log.collective == "all_reduce", log.ranks))
    sizes = _timings(widest, algbw, busbw) if widest.collective == "all_reduce" else ()
    profile = NetworkProfile(
        world_size=widest.ranks,
        nodes=widest.hosts,
        devices_per_node=per_host,
        backend="nccl",
        device_type="cuda",
        torch="",
        intra=main[0],
        inter=main[1],
        sizes=sizes,
        time=timestamp(),
        source="nccl-tests",
        device_name=next((log.device_name for log in logs if log.device_name), None),
        collectives=dict(fitted),
        runs=runs,
    )
    return Imported(profile, tuple(checks), notes)


def _timings(log: Log, algbw: Any, busbw: Any) -> tuple[AllReduceTiming, ...]:
    """One timing per size (the out-of-place run where there is one), with nccl-tests' algbw and busbw."""
    chosen: dict[int, Any] = {}
    for row in log.rows:
        if row.bytes not in chosen or (chosen[row.bytes].in_place and not row.in_place):
            chosen[row.bytes] = row
    return tuple(
        AllReduceTiming(
            r.bytes, r.seconds, float(algbw(r.bytes, r.seconds)), float(busbw(r.bytes, r.seconds, log.ranks))
        )
        for r in sorted(chosen.values(), key=lambda r: r.bytes)
    )
