"""α and β of each collective and tier from nccl-tests runs, and the network profile they make.

The model is the one ``dpscale predict`` prices with (:mod:`dpscale.predict.collectives`): for
each algorithm NCCL may choose, a time a(n)·α + c(n)·S·β, and ``auto`` takes the fastest at each
size (``candidates`` for an all-reduce; ``gather_candidates`` for a reduce-scatter or an
all-gather, half of a ring or hierarchical all-reduce, as NCCL runs them on rings).

**NCCL's switch between algorithms with size** is left to the model, as it is when predicting:
the fit asks that the model's own choice at each size give back the measured time. Small
messages, where the time stays within 25 % of the smallest, fix α: for each such size the α at
which the fastest algorithm's time equals the measured one (a tree's 2·⌈log₂ n⌉ steps where the
model picks the tree), and α is their median. The sizes whose algbw is within 80 % of the best,
where bytes dominate, fix β by least squares on the relative error of t = a(n)·α + c(n)·S·β for
the algorithm the model picks there (a ring on one node, hierarchical across nodes). The two
are refined in turn. The mid sizes between them are where NCCL's protocols (LL, LL128, Simple)
change and where no two-parameter line holds; their error is reported, not fitted.

**Tiers**: a run on one host gives the intra-node link; a run across hosts gives the network
tier, fitted with the intra-node link from the one-host run of the same collective (or of
another) when one is given, else as if the node's own links cost nothing. Several runs of a
tier (4 and 8 GPUs, 2 and 4 nodes) are fitted together.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from dpscale.errors import N_, InvalidInput
from dpscale.nccltests.reading import COLLECTIVES, Log, Row
from dpscale.records import AllReduceTiming, NetworkProfile, ProbedLink, timestamp

__all__ = ["Check", "Imported", "import_logs", "model_time"]

LATENCY_SPAN = 1.25  # sizes whose time is within this factor of the smallest: latency-bound
PLATEAU = 0.8  # sizes whose algbw is at least this share of the best: bandwidth-bound
_A1, _A2, _B1, _B2 = 1e-5, 2e-5, 1e-10, 2e-10  # two unit links: the model is affine in α and in β
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
    """A network profile from nccl-tests runs, and how well it gives each run back."""

    profile: NetworkProfile
    checks: tuple[Check, ...]


def _priced(collective: str, ranks: int, links: dict[str, Any]) -> list[Any]:
    """The (a, c) terms of each algorithm the model may pick for ``collective``, as ``predict`` prices it."""
    from dpscale.predict.collectives import candidates, gather_candidates

    price = candidates if collective == "all_reduce" else gather_candidates
    return price(ranks, algorithm="auto", **links)


def _links(intra: Any, inter: Any, hosts: int, per_host: int) -> dict[str, Any]:
    return {"intra": intra} if hosts == 1 else {"intra": intra, "inter": inter, "per_node": per_host}


def _terms(collective: str, ranks: int, hosts: int, per_host: int, intra: Any) -> list[Terms]:
    """Each algorithm's a and c as affine functions of the fitted tier's α and β (intra known across hosts)."""
    from dpscale.predict.collectives import Link

    def priced(link: Any) -> list[Any]:
        links = _links(link, None, 1, per_host) if hosts == 1 else _links(intra, link, hosts, per_host)
        return _priced(collective, ranks, links)

    found: list[Terms] = []
    for (a1, c1), (a2, c2) in zip(priced(Link(1 / _B1, _A1)), priced(Link(1 / _B2, _A2)), strict=True):
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


def _fit(logs: Sequence[Log], intra: Any, per_host: int) -> ProbedLink:
    points = [
        _Point(row.bytes, row.seconds, terms)
        for log in logs
        for terms in [_terms(log.collective, log.ranks, log.hosts, per_host if log.hosts > 1 else log.ranks, intra)]
        for row in log.rows
    ]
    if len({p.size for p in points}) < 2:  # nccl-tests' default, -b 32M -e 32M, times one size
        raise InvalidInput(
            "import",
            ", ".join(PurePath(log.name).name for log in logs),
            N_("runs over several sizes (-b and -e apart, such as -b 8 -e 1G -f 2)"),
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
            ", ".join(PurePath(log.name).name for log in logs),
            N_("times that grow with the message size (the largest sizes must take longer than the smallest)"),
        )
    return ProbedLink(bandwidth=1 / beta, latency=alpha)


def model_time(collective: str, size: float, ranks: int, hosts: int, per_host: int, intra: Any, inter: Any) -> float:
    """The model's time for ``size`` bytes of ``collective`` over ``ranks`` ranks on ``hosts`` hosts of ``per_host``.

    Priced by the functions ``predict`` uses: :func:`~dpscale.predict.collectives.all_reduce_time`,
    ``reduce_scatter_time`` and ``all_gather_time``.
    """
    from dpscale.predict import collectives

    links = _links(intra, inter, hosts, per_host) if hosts > 1 else {"intra": intra or inter}
    timed = {
        "all_reduce": collectives.all_reduce_time,
        "reduce_scatter": collectives.reduce_scatter_time,
        "all_gather": collectives.all_gather_time,
    }[collective]
    return float(timed(size, ranks, **links))


def _link(probed: ProbedLink | None) -> Any:
    from dpscale.predict.collectives import Link

    return None if probed is None else Link(probed.bandwidth, probed.latency, probed.efficiency)


_FREE = (1e18, 0.0)  # a node's own links when no one-host run says what they cost


def import_logs(logs: Sequence[Log]) -> Imported:
    """The network profile of nccl-tests runs: α and β per collective and tier, and checks against each run."""
    from dpscale.predict.collectives import Link, algbw, busbw

    if not logs:
        raise InvalidInput("import", "", N_("one or more nccl-tests outputs"))
    across = [log for log in logs if log.hosts > 1]
    shapes = {log.devices_per_host for log in across}
    if len(shapes) > 1:
        raise InvalidInput(
            "import",
            ", ".join(f"{PurePath(log.name).name}: {log.devices_per_host}" for log in across)[:80],
            N_("runs across nodes with the same number of GPUs per node"),
        )
    per_host = shapes.pop() if shapes else max(log.ranks for log in logs)
    fitted: dict[str, dict[str, ProbedLink | None]] = {}
    for collective in COLLECTIVES:
        one = [log for log in logs if log.collective == collective and log.hosts == 1]
        if one:
            fitted[collective] = {"intra": _fit(one, None, per_host), "inter": None}
    known = next((fitted[c]["intra"] for c in COLLECTIVES if c in fitted), None)
    for collective in COLLECTIVES:
        many = [log for log in across if log.collective == collective]
        if not many:
            continue
        entry = fitted.setdefault(collective, {"intra": None, "inter": None})
        base = entry["intra"] or known
        intra = _link(base) if base is not None else Link(*_FREE)
        entry["inter"] = _fit(many, intra, per_host)
    checks = []
    for log in logs:
        entry = fitted[log.collective]
        base = entry["intra"] or known
        intra = _link(base) if base is not None else Link(*_FREE)
        inter = _link(entry["inter"])
        g = per_host if log.hosts > 1 else log.ranks
        ends = []
        for row in (max(log.rows, key=lambda r: r.bytes), min(log.rows, key=lambda r: r.bytes)):
            same = [r.seconds for r in log.rows if r.bytes == row.bytes]
            predicted = model_time(log.collective, row.bytes, log.ranks, log.hosts, g, intra, inter)
            ends.append((row.bytes, statistics.median(same), predicted))
        checks.append(Check(PurePath(log.name).name, log.collective, log.ranks, log.hosts, ends[0], ends[1]))
    main = next(fitted[c] for c in COLLECTIVES if c in fitted)
    widest = max(logs, key=lambda log: (log.collective == "all_reduce", log.ranks))
    sizes = _timings(widest.rows, widest.ranks, algbw, busbw) if widest.collective == "all_reduce" else ()
    profile = NetworkProfile(
        world_size=widest.ranks,
        nodes=widest.hosts,
        devices_per_node=per_host,
        backend="nccl",
        device_type="cuda",
        torch="",
        intra=main["intra"],
        inter=main["inter"],
        sizes=sizes,
        time=timestamp(),
        source="nccl-tests",
        device_name=next((log.device_name for log in logs if log.device_name), None),
        collectives={c: (v["intra"], v["inter"]) for c, v in fitted.items()},
    )
    return Imported(profile, tuple(checks))


def _timings(rows: Sequence[Row], ranks: int, algbw: Any, busbw: Any) -> tuple[AllReduceTiming, ...]:
    """One timing per size (the out-of-place run where there is one), with nccl-tests' algbw and busbw."""
    chosen: dict[int, Row] = {}
    for row in rows:
        if row.bytes not in chosen or (chosen[row.bytes].in_place and not row.in_place):
            chosen[row.bytes] = row
    return tuple(
        AllReduceTiming(r.bytes, r.seconds, float(algbw(r.bytes, r.seconds)), float(busbw(r.bytes, r.seconds, ranks)))
        for r in sorted(chosen.values(), key=lambda r: r.bytes)
    )
