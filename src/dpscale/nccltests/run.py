"""One run of an nccl-tests log as it is read: its rank list, what NCCL's lines say, its table's columns and rows."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dpscale import _files
from dpscale.errors import N_, InvalidInput, one_line
from dpscale.messages import Message
from dpscale.nccltests.log import Row

__all__: list[str] = []  # the reader's own parts: dpscale.nccltests.logfiles reads with them

MAX_RANKS = 2**20  # ranks listed in one log: past the largest clusters
MAX_BYTES = 2**62  # one message: past any GPU's memory
MAX_RUNS = 1000  # runs in one file: every test, type and size range a script would run, many times over

_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?")
_TAG = re.compile(r"\[\d{1,7}\]")  # a rank's tag left inside a row
_COUNTS = {
    "ranks": re.compile(r"\bn[Rr]anks\s+(\d{1,7})\b"),
    "nodes": re.compile(r"\bnNodes\s+(\d{1,7})\b"),
    "local": re.compile(r"\blocalRanks\s+(\d{1,7})\b"),
}
_WORD = {  # bytes per element of each type nccl-tests (and rccl-tests) name
    **dict.fromkeys(("int8", "uint8", "char", "f8e4m3", "f8e5m2", "fp8_e4m3", "fp8_e5m2"), 1),
    **dict.fromkeys(("half", "float16", "bfloat16", "fp16", "bf16"), 2),
    **dict.fromkeys(("int32", "uint32", "int", "float", "float32", "fp32"), 4),
    **dict.fromkeys(("int64", "uint64", "double", "float64", "fp64"), 8),
}
# The oldest layout's error column is a difference, wrong past the type's tolerance × (ranks − 1).
_TOLERANCE = {
    **dict.fromkeys(("half", "float16", "bfloat16", "fp16", "bf16"), 5e-2),
    **dict.fromkeys(("float", "float32", "fp32"), 1e-5),
    **dict.fromkeys(("double", "float64", "fp64"), 1e-12),
    **dict.fromkeys(("int8", "uint8", "char", "int32", "uint32", "int", "int64", "uint64"), 0.0),
}
_TIMES = ("time", "cputime")
_RUNS = N_("at most %(most)s runs in one file")


def _at(name: str, line: int, text: str, accepted: str, **params: Any) -> InvalidInput:
    # A table's columns are padded with spaces: shown once each, the excerpt reaches further.
    return InvalidInput(_files.where(name, line), _files.excerpt(one_line(text)), accepted, params=params)


class _Ranks:
    """The ``# Using devices`` lines: each rank's host, device number, device name and group."""

    def __init__(self) -> None:
        self.hosts: dict[int, str] = {}
        self.groups: dict[int, int] = {}
        self.devices: dict[int, int] = {}
        self.device: str | None = None

    def add(self, rank: int, group: int, host: str, device: str, where: Message, text: str, number: int = 0) -> None:
        if rank in self.hosts or len(self.hosts) >= MAX_RANKS:
            raise InvalidInput(
                where, text, N_("each rank listed once, at most %(most)s ranks"), params={"most": MAX_RANKS}
            )
        self.hosts[rank] = host
        self.groups[rank] = group
        self.devices[rank] = number
        self.device = self.device or (_files.excerpt(device.strip()) or None)  # a name, not a page of text

    def per_host(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for host in self.hosts.values():
            counts[host] = counts.get(host, 0) + 1
        return counts

    def short_tail(self) -> bool:
        """Whether every host but the last lists as many ranks and the last fewer: a list cut at its end."""
        counts = list(self.per_host().values())
        return len(counts) > 1 and len(set(counts[:-1])) == 1 and counts[-1] < counts[0]

    def shape(self, name: str) -> tuple[int, int, int]:
        """Ranks of one collective, hosts and devices per host (NCCL_TESTS_SPLIT's groups each run their own)."""
        if not self.hosts:
            raise InvalidInput("import", name, N_("a '# Using devices' header listing each rank"))
        first = min(self.groups.values())
        mine = [host for rank, host in self.hosts.items() if self.groups[rank] == first]
        per_host: dict[str, int] = {}
        for host in mine:
            per_host[host] = per_host.get(host, 0) + 1
        counts = set(per_host.values())
        if len(counts) != 1:
            raise InvalidInput(
                "import",
                name,
                N_("the same number of ranks on every host (found %(counts)s)"),
                params={"counts": _files.excerpt(", ".join(f"{h}: {c}" for h, c in list(per_host.items())[:8]))},
            )
        if len(mine) < 2:
            raise InvalidInput("import", name, N_("a run over at least 2 ranks (a collective needs company)"))
        return len(mine), len(per_host), counts.pop()


@dataclass
class _Evidence:
    """What NCCL's own INFO lines say of a run: its ranks' count, nodes, ranks per node, hosts."""

    counts: dict[str, set[int]] = field(default_factory=lambda: {key: set() for key in _COUNTS})
    hosts: dict[str, None] = field(default_factory=dict)

    def add(self, host: str | None, text: str) -> None:
        if host is not None and len(self.hosts) < MAX_RANKS:
            self.hosts.setdefault(host)
        if "anks" in text or "nNodes" in text:
            for key, pattern in _COUNTS.items():
                found = pattern.search(text)
                if found is not None and len(self.counts[key]) < 16:
                    self.counts[key].add(int(found.group(1)))

    def one(self, key: str) -> int | None:
        """The value every INFO line gives for ``key``; None where none does or they differ."""
        values = self.counts[key]
        return next(iter(values)) if len(values) == 1 and next(iter(values)) > 0 else None


class _Columns:
    """Where each needed value sits in a row, from the table's header line."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = [n for n in names if n != "timestamp"]  # a timestamp is printed last, as two words
        first: dict[str, int] = {}
        for i, n in enumerate(self.names):
            first.setdefault(n, i)
        self.size = first["size"]
        self.count = first.get("count")
        self.type = first.get("type")
        self.redop = first.get("redop")
        self.root = first.get("root")
        self.halves = [  # time, algbw, busbw and #wrong (or error), out-of-place then in-place
            (i, i + 1, i + 2, i + 3)
            for i, n in enumerate(self.names[:-3])
            if n in _TIMES and self.names[i + 1 : i + 3] == ["algbw", "busbw"]
        ][:2]
        self.tolerance = bool(self.halves) and self.names[self.halves[0][3]] == "error"  # the oldest layout
        # A trace replay prints the in-place half only, the out-of-place one left blank.
        self.width = self.halves[1][0] - self.halves[0][0] if len(self.halves) == 2 else 0

    @classmethod
    def of(cls, text: str) -> _Columns | None:
        """The columns of a header line; None for any other line."""
        names = text.lstrip("#").split()
        if "size" not in names:
            return None
        columns = cls(names)
        return columns if columns.halves else None


def _number(token: str, name: str, line: int, text: str, column: str) -> float:
    if _NUMBER.fullmatch(token) is None:
        raise _at(name, line, text, N_("a number in column %(column)s, not %(token)s"), column=column, token=token)
    return float(token)


class _Run:
    """One run of a file as it is read: its header, rank list, table and what NCCL's lines say of it."""

    def __init__(self, line: int, evidence: _Evidence, hint: str | None) -> None:
        self.line = line  # where it starts
        self.stage = -1  # the last header line seen (_VERSION ... _FOOTER)
        self.stated: str | None = None  # the program, as the header names it
        self.hint = hint  # the program a command line before the run names
        self.per_process: int | None = None  # nThread × nGpus: the ranks each process drives
        self.ranks = _Ranks()
        self.cut = False  # a '...' or '--(snip)--' line, or a rank line cut, in the list
        self.cut_last = False  # ... and no rank listed after it
        self.cut_by_tests = False  # ... as nccl-tests cuts a process's list past 2 KiB ("...")
        self.columns: _Columns | None = None
        self.rows: list[Row] = []
        self.redops: set[str] = set()
        self.rooted = False
        self.spread: set[int] = set()  # size ÷ (count × word size): 1, or the ranks of a gathering collective
        self.checked = 0  # rows whose out-of-place results were checked
        self.unchecked = 0  # ... and their in-place ones not (alltoall, sendrecv)
        self.wrong: tuple[int, str, str] | None = None  # the first row with a #wrong count
        self.error: tuple[float, int, str, str] | None = None  # the oldest layout's largest error ÷ tolerance
        self.info = evidence
        self.concluded = False

    def empty(self) -> bool:
        return not self.rows and not self.ranks.hosts and self.columns is None

    def inherit(self, before: _Run) -> None:
        """A table with no header of its own: the ranks of the run before it."""
        self.ranks, self.per_process, self.info = before.ranks, before.per_process, before.info
        self.cut, self.cut_last, self.cut_by_tests = before.cut, before.cut_last, before.cut_by_tests

    def mark_cut(self, text: str) -> None:
        self.cut = self.cut_last = True
        self.cut_by_tests = self.cut_by_tests or text.rstrip().endswith("...")

    def add(self, columns: _Columns, tokens: list[str], name: str, number: int, text: str) -> int:
        """The rows of one table line, read by ``columns``; how many (none for a size of 0)."""
        if "[" in text:
            tokens = [t for t in tokens if _TAG.fullmatch(t) is None]
        halves = [(half, i == 1) for i, half in enumerate(columns.halves)]
        if len(tokens) < len(columns.names):
            if not columns.width or len(tokens) != len(columns.names) - columns.width:
                raise _at(
                    name,
                    number,
                    text,
                    N_("a row of %(count)s columns, as its header names them (%(names)s)"),
                    count=len(columns.names),
                    names=" ".join(columns.names),
                )
            t, a, b, w = columns.halves[1]
            halves = [((t - columns.width, a - columns.width, b - columns.width, w - columns.width), True)]
        size_token = tokens[columns.size]
        if not size_token.isdigit() or int(size_token) > MAX_BYTES:
            raise _at(
                name,
                number,
                text,
                N_("a size in bytes in column %(column)s, not %(token)s"),
                column="size",
                token=size_token,
            )
        size = int(size_token)
        kind = tokens[columns.type] if columns.type is not None else None
        word = _WORD.get(kind or "")
        if columns.count is not None and word is not None and tokens[columns.count].isdigit():
            count = int(tokens[columns.count])
            if count > 0 and len(self.spread) < 4:
                self.spread.add(size // (count * word) if size % (count * word) == 0 else 0)
        if columns.redop is not None:
            self.redops.add(tokens[columns.redop].lower())
        if columns.root is not None and tokens[columns.root].isdigit():
            self.rooted = True  # a root of 0 or more; -1 where the collective has none
        before = len(self.rows)
        checks = []
        for (t, a, b, w), in_place in halves:
            seconds = _number(tokens[t], name, number, text, "time") * 1e-6
            algbw = _number(tokens[a], name, number, text, "algbw") * 1e9
            busbw = _number(tokens[b], name, number, text, "busbw") * 1e9
            wrong = tokens[w]
            checks.append(wrong != "N/A")
            if wrong != "N/A":
                value = _number(wrong, name, number, text, columns.names[w])
                if columns.tolerance:
                    tolerance = _TOLERANCE.get(kind or "", 1e-2)
                    ratio = value / tolerance if tolerance > 0 else (math.inf if value > 0 else 0.0)
                    if self.error is None or ratio > self.error[0]:
                        self.error = (ratio, number, text, wrong)
                elif value > 0 and self.wrong is None:
                    self.wrong = (number, text, wrong)
            if size > 0 and seconds > 0:
                self.rows.append(Row(size, seconds, algbw, busbw, in_place=in_place))
        if len(checks) == 2 and checks[0]:
            self.checked += 1
            self.unchecked += not checks[1]
        return len(self.rows) - before

    def gathered(self) -> int | None:
        """size ÷ (count × word size), the same in every row: 1 for all-reduce, the ranks for a gathering collective."""
        return next(iter(self.spread)) if len(self.spread) == 1 and 0 not in self.spread else None

    def reduces(self) -> bool:
        """Whether the table names a reduction (sum, max...) rather than none."""
        return bool(self.redops - {"none", ""})
