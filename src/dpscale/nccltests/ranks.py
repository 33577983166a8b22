"""Which collective a run was, and how many ranks on how many hosts ran it, where its log does not say it outright."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import PurePath

from dpscale import _files
from dpscale.errors import N_, InvalidInput
from dpscale.nccltests.log import Row
from dpscale.nccltests.run import MAX_RANKS, _Ranks, _Run

__all__: list[str] = []  # the reader's own parts: dpscale.nccltests.logfiles reads with them

_CUT_LIST = N_(
    "a '# Using devices' list of every rank, or NCCL INFO lines with nranks and localRanks (listed: ranks %(listed)s)"
)
_NO_LIST = N_("a '# Using devices' list, or NCCL INFO lines with nranks, saying how many ranks ran")
_NO_HOSTS = N_("a '# Using devices' list, or NCCL INFO lines, saying on which hosts the %(ranks)s ranks ran")


def _spans(ranks: Sequence[int]) -> str:
    """Ranks as runs of consecutive numbers, for a message: ``0-3, 12-15``."""
    spans: list[list[int]] = []
    for rank in sorted(ranks):
        if spans and rank == spans[-1][1] + 1:
            spans[-1][1] = rank
        else:
            spans.append([rank, rank])
    return _files.excerpt(", ".join(f"{a}-{b}" if b > a else str(a) for a, b in spans))


def _other(run: _Run, gathered: int | None) -> str | None:
    """A collective dpscale does not read, where the table alone says so: a root, or in-place results never checked."""
    if run.rooted:
        if run.reduces():
            return "reduce"
        return "broadcast" if gathered in (None, 1) else "gather"
    if run.checked and run.unchecked == run.checked:  # nccl-tests checks no in-place alltoall or sendrecv
        return "alltoall" if gathered is not None and gathered > 1 else "sendrecv"
    return None


def _ratio(rows: Sequence[Row]) -> float | None:
    """busbw ÷ algbw at the sizes whose algbw, printed with two decimals, is precise to 1 % or better."""
    ratios = sorted(r.busbw / r.algbw for r in rows if r.algbw >= 0.5e9)
    return ratios[len(ratios) // 2] if ratios else None


def _close(ratio: float, factor: float) -> bool:
    return factor > 0 and abs(ratio / factor - 1) < 0.05


def _agrees(run: _Run, collective: str, n: int) -> bool:
    """Whether busbw ÷ algbw is the one ``collective`` over ``n`` ranks gives (or cannot tell)."""
    ratio = _ratio(run.rows)
    if ratio is None:
        return True
    return _close(ratio, 2 * (n - 1) / n if collective == "all_reduce" else (n - 1) / n)


def _collective(run: _Run, n: int) -> str | None:
    """Which collective ran, as the table says: busbw ÷ algbw (2(n−1)/n for all-reduce, (n−1)/n else), redop, counts."""
    ratio = _ratio(run.rows)
    gathered = run.gathered()
    if ratio is not None:
        if _close(ratio, 2 * (n - 1) / n):
            return "all_reduce"
        if run.redops == {"none"} or (not run.redops and _close(ratio, (n - 1) / n)):
            return "all_gather"
        if run.reduces() and _close(ratio, (n - 1) / n):
            return "reduce_scatter"
        if n > 2 and _close(ratio, 1.0) and gathered in (None, 1):
            return "sendrecv"
        return None
    if gathered is not None and gathered > 1:  # no size fast enough to tell by bandwidth: the counts
        return "reduce_scatter" if run.reduces() else "all_gather"
    if gathered == 1 and run.reduces():
        return "all_reduce"
    return None


def _precision(value: float) -> float:
    """How far a bandwidth in bytes/s may be from the one nccl-tests printed in GB/s in six characters."""
    return (0.005e9 if value < 999.995e9 else 0.05e9 if value < 9999.95e9 else 0.5e9) + value * 1e-9


def _ratio_span(rows: Sequence[Row], reduce: bool) -> tuple[float, float] | None:
    """The rank counts n whose busbw ÷ algbw, 2(n−1)/n (all-reduce) or (n−1)/n, fits every row as printed.

    None where no row's algbw is printed precisely enough to tell.
    """
    low, high = 2.0, float(MAX_RANKS)
    used = False
    for r in rows:
        if r.algbw < 1e9:
            continue
        a, b = _precision(r.algbw), _precision(r.busbw)
        least, most = (r.busbw - b) / (r.algbw + a), (r.busbw + b) / (r.algbw - a)
        top = 2.0 if reduce else 1.0  # n = top / (top − ratio)
        low = max(low, top / (top - least) if least < top else math.inf)
        high = min(high, top / (top - most) if most < top else math.inf)
        used = True
    return (low - 1e-9, high + 1e-9) if used else None


def _ratio_ranks(rows: Sequence[Row], reduce: bool) -> int | None:
    """The one rank count n whose busbw ÷ algbw fits every row as printed (see :func:`_ratio_span`)."""
    span = _ratio_span(rows, reduce)
    if span is None or span[1] - span[0] > 1.1:
        return None
    whole = [n for n in range(math.ceil(span[0]), math.floor(span[1]) + 1) if 2 <= n <= MAX_RANKS]
    return whole[0] if len(whole) == 1 else None


def _counted(run: _Run, collective: str | None) -> int | None:
    """The ranks' count NCCL's lines, the table's counts or its busbw ÷ algbw give, without the rank list."""
    gathered = run.gathered()
    strong = run.info.one("ranks") or (gathered if gathered is not None and gathered > 1 else None)
    if strong is not None:
        return strong
    if collective in ("reduce_scatter", "all_gather"):
        return _ratio_ranks(run.rows, reduce=False)
    if collective == "all_reduce" or gathered == 1:
        return _ratio_ranks(run.rows, reduce=True)
    return None


def _world(name: str, run: _Run, collective: str | None) -> tuple[int, int, int, bool]:
    """Ranks, hosts and ranks per host of the run; True where they were inferred (the list cut or missing)."""
    ranks = run.ranks
    if ranks.hosts and len(set(ranks.groups.values())) > 1:  # NCCL_TESTS_SPLIT: each group its own collective
        return (*ranks.shape(name), False)
    gathered = run.gathered()
    if ranks.hosts:  # a list whole by its looks is taken, unless the table's own counts say more ranks ran
        top = max(ranks.hosts)
        whole = top + 1 == len(ranks.hosts) and not run.cut and (gathered is None or gathered <= len(ranks.hosts))
        if whole and not ranks.short_tail():
            return (*ranks.shape(name), False)
        return (*_inferred(name, run, collective, top), True)
    return (*_unlisted(name, run, collective), True)


def _inferred(name: str, run: _Run, collective: str | None, top: int) -> tuple[int, int, int]:
    """Ranks, hosts and ranks per host of a run whose rank list is cut: from the largest rank and the hosts listed."""
    ranks = run.ranks
    refusal = InvalidInput(
        _files.where(name, run.line), PurePath(name).name, _CUT_LIST, params={"listed": _spans(list(ranks.hosts))}
    )
    total = _counted(run, collective)
    if not run.cut and total in (None, len(ranks.hosts)) and top + 1 == len(ranks.hosts):
        return ranks.shape(name)  # the whole list after all, its hosts uneven: refused as such
    process = run.per_process or 1
    if total is None and run.cut and (not run.cut_last or (run.cut_by_tests and process > 1)):
        total = -(-(top + 1) // process) * process  # the largest rank listed, to a whole process
    if total is None or total <= top:
        raise refusal
    per_host = _per_host(total, ranks, run.info.one("local"), process)
    if per_host is None:
        raise refusal
    return total, total // per_host, per_host


def _per_host(total: int, ranks: _Ranks, local: int | None, process: int) -> int | None:
    """The ranks per host that fit ``total`` ranks, each host a run of consecutive ranks, with those listed.

    A host's ranks stay together and each host holds as many; where several counts fit, the device
    numbers (a host's first rank is device 0) and then the hosts listed (all of them: ``total`` ÷
    their number) choose.
    """
    counts = ranks.per_host()
    least = max(counts.values())
    spans: dict[str, tuple[int, int]] = {}  # each host's lowest and highest rank listed
    for r, host in ranks.hosts.items():
        low, high = spans.get(host, (r, r))
        spans[host] = (min(low, r), max(high, r))
    fits = []
    for g in _divisors(total):
        if g < least or (total % process == 0 and g % process):  # a process's ranks share its host
            continue
        blocks: set[int] = set()
        for low, high in spans.values():  # each host within one run of g ranks, no two hosts in the same
            if low // g != high // g or low // g in blocks:
                break
            blocks.add(low // g)
        else:
            fits.append(g)
    if local is not None:
        return local if local in fits else None
    if not fits:
        return None
    by_device = [g for g in fits if all(d == r % g for r, d in ranks.devices.items())]
    if by_device:
        fits = by_device
    if len(fits) == 1:
        return fits[0]
    if total % len(counts) == 0 and total // len(counts) in fits:
        return total // len(counts)
    return None


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def _unlisted(name: str, run: _Run, collective: str | None) -> tuple[int, int, int]:
    """Ranks, hosts and ranks per host of a run printed without its rank list: from NCCL's lines and the table."""
    total = _counted(run, collective)
    if total is None and run.per_process is not None and run.per_process > 1 and run.gathered() in (None, 1):
        # nThread × nGpus ranks in one process, as -g 8 runs a node, where busbw ÷ algbw does not say otherwise
        span = _ratio_span(run.rows, reduce=collective != "all_gather" and collective != "reduce_scatter")
        if span is None or span[0] <= run.per_process <= span[1]:
            total = run.per_process
    if total is None or total < 2:
        raise InvalidInput(_files.where(name, run.line), PurePath(name).name, _NO_LIST)
    hosts = run.info.one("nodes")
    local = run.info.one("local")
    if hosts is None and local is not None and total % local == 0:
        hosts = total // local
    if hosts is None and run.per_process == total:
        hosts = 1  # one process drove every rank: one host
    if hosts is None and run.info.hosts and total % len(run.info.hosts) == 0:
        hosts = len(run.info.hosts)
    if hosts is None or hosts < 1 or total % hosts:
        raise InvalidInput(_files.where(name, run.line), PurePath(name).name, _NO_HOSTS, params={"ranks": total})
    return total, hosts, total // hosts
