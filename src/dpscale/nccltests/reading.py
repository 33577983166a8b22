"""The output of nccl-tests' ``all_reduce_perf``, ``reduce_scatter_perf`` and ``all_gather_perf``, read.

Two forms: the text a run prints, and the JSON file of ``-J``. The text is read in every layout
nccl-tests has printed, as people post it:

- **the header**: ``# nccl-tests version`` and ``# Collective test starting: all_reduce_perf``
  (new), ``# nThread 1 nGpus 8 ...`` (every version: ranks per process), then ``# Using
  devices`` and one line per rank, ``#  Rank  3 Group  0 Pid 4242 on node01 device  3
  [0000:47:00] NVIDIA H100 80GB HBM3`` (the oldest versions print no ``Group``; a GPU's name may
  lack ``NVIDIA``): ranks, hosts, ranks per host;
- **the table**, whose header line names the columns: ``size count type redop root``, then
  ``time algbw busbw #wrong`` for the out-of-place run and again for the in-place one, each
  followed by ``i_min i_max i_p99 i_cv%`` (``-I``) or ``#bitdiff`` where asked for. The oldest
  versions have no ``root``, their all-gather no ``redop`` either, and an ``error`` column in
  place of ``#wrong``: the largest difference from the expected result (``2e-07``), a tolerance
  checked against the type's as nccl-tests checks it, not a count. Columns are found by their
  names, not their places. Times are in microseconds, printed as they fit seven characters
  (``6.21``, ``135.8``, ``47535``, ``1.2e+05``); ``#wrong`` is ``N/A`` when results were not
  checked; a size of 0 is left out.

**Several runs in one file** (a script running each test in turn) are read each on its own: a
run starts where its header does (a second ``# nThread``, ``# Using devices`` or table after a
first). The collective of each is the one its header names, else the program a command line
before it names (``mpirun ... ./all_gather_perf``), else the one its table says: a rooted run
(broadcast, reduce), one whose in-place results are never checked (alltoall, sendrecv), the
size ÷ count relation (rank count × word size for the gathering collectives) and busbw ÷ algbw
(2(n−1)/n for all-reduce, (n−1)/n for reduce-scatter and all-gather). Runs of collectives
dpscale does not fit are left out with a note, not refused.

**Line prefixes**, one or several stacked, are taken off each line: Open MPI's
``[1,0]<stdout>:``, SkyPilot's or Ray's ``(head, rank=0, pid=3808)``, ``srun -l``'s ``0:``,
MPICH's ``[0]``, a timestamp. NCCL's own lines (``NCCL INFO``), MPI's notices, ``--(snip)--``
and any other line are let be, wherever they are.

**A rank list cut short or missing.** Where the ``# Using devices`` list is cut (a ``...`` or
``snip`` line, ranks missing) or absent, the ranks' count comes from NCCL's INFO lines
(``nranks``), else from the size ÷ count relation of a gathering collective, else from busbw ÷
algbw where only one whole number fits every row, else from the largest rank listed (a cut in
the middle of the list); the ranks per host from NCCL's ``localRanks``, the hosts listed and
the device numbers, or ``nThread × nGpus`` when a single process ran them all. A log that does
not tell is refused, naming what is missing.

Files are read within the bounds of :mod:`dpscale._files`; every complaint names the file and
the line (or, in JSON, the key) and what was expected there.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import Any

from dpscale import _files
from dpscale.errors import N_, InvalidInput
from dpscale.messages import Message

__all__ = ["COLLECTIVES", "Log", "Row", "read_log", "read_logs", "read_text", "read_texts"]

COLLECTIVES = ("all_reduce", "reduce_scatter", "all_gather")
MAX_RANKS = 2**20  # ranks listed in one log: past the largest clusters
MAX_BYTES = 2**62  # one message: past any GPU's memory
MAX_RUNS = 1000  # runs in one file: every test, type and size range a script would run, many times over

_RANK = re.compile(
    r"#\s*Rank\s+(\d{1,7})\s+(?:Group\s+(\d{1,7})\s+)?(?:Pid\s+\d{1,10}\s+)?on\s+(\S+)\s+device\s+(\d{1,7})"
    r"\s*(?:\[[^\]]*\]\s*)?(.*)"
)
_RANK_START = re.compile(r"#\s*Rank\s+\d")
_THREADS = re.compile(r"#\s*nThread\s+(\d{1,7})\s+nGpus\s+(\d{1,7})")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?")
# What launchers put before each line, possibly several: Open MPI's --tag-output "[1,0]<stdout>:",
# SkyPilot's and Ray's "(head, rank=0, pid=3808)", srun -l's "0: ", MPICH's "[0] ", a timestamp,
# kubectl logs --prefix's "[pod/name/container] ", pdsh's "node01: ", docker compose's "worker-1  | ".
_PREFIX = re.compile(
    r"\s*(?:\[\d{1,7},\d{1,7}\]<std(?:out|err|diag)>:"
    r"|\([^()]{0,200}?\bpid=\d{1,10}\b[^()]{0,200}\)"
    r"|\d{1,7}:"
    r"|\[\d{1,7}\]"
    r"|\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?\]?"
    r"|\[(?:pod|job|deployment|statefulset)/[^\]\s]{1,300}\]"
    r"|[A-Za-z][\w.-]{0,252}:(?=[ \t])"
    r"|[\w.-]{1,253}[ \t]*\|(?=[ \t]))"
    r"[ \t]?"
)
_TAG = re.compile(r"\[\d{1,7}\]")  # a rank's tag left inside a row
_NCCL = re.compile(r"([^\s:]{1,255}):\d{1,10}:\d{1,10}\s+\[\d{1,7}\]\s+NCCL\s+(?:INFO|WARN)\b")
_COUNTS = {
    "ranks": re.compile(r"\bn[Rr]anks\s+(\d{1,7})\b"),
    "nodes": re.compile(r"\bnNodes\s+(\d{1,7})\b"),
    "local": re.compile(r"\blocalRanks\s+(\d{1,7})\b"),
}
_TEARDOWN = re.compile(r"Destroy|Clos|Unload|Abort|Finaliz")  # NCCL's lines as a run ends, after its footer
_PROGRAM = re.compile(r"[A-Za-z0-9_]{1,40}$")  # the name before "_perf"
_CUT = re.compile(r"snip|\.\.\.|…|omitted|truncated", re.IGNORECASE)
_NAMES = {
    "all_reduce": re.compile(r"(?<![a-z])all[_\- ]?reduce(?![a-z])"),
    "reduce_scatter": re.compile(r"(?<![a-z])reduce[_\- ]?scatter(?![a-z])"),
    "all_gather": re.compile(r"(?<![a-z])all[_\- ]?gather(?![a-z])"),
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
_EXPECTED_LOG = N_("the output of all_reduce_perf, reduce_scatter_perf or all_gather_perf (nccl-tests)")
_READABLE = N_("a readable nccl-tests output (%(reason)s)")
_UNNAMED = N_("a file named after its test (all_reduce, reduce_scatter or all_gather) or its header")
_CUT_LIST = N_(
    "a '# Using devices' list of every rank, or NCCL INFO lines with nranks and localRanks (listed: ranks %(listed)s)"
)
_NO_LIST = N_("a '# Using devices' list, or NCCL INFO lines with nranks, saying how many ranks ran")
_NO_HOSTS = N_("a '# Using devices' list, or NCCL INFO lines, saying on which hosts the %(ranks)s ranks ran")
_LEFT_OUT = N_(
    "%(file)s, line %(line)s: a run of %(test)s, left out (dpscale reads all_reduce, reduce_scatter and all_gather)"
)
_NO_RESULTS = N_("%(file)s, line %(line)s: a run without results, left out")
_UNTOLD = N_("%(file)s, line %(line)s: a run whose collective neither its header nor its table tells, left out")
_INFERRED = N_(
    "%(file)s, line %(line)s: %(ranks)s ranks on %(hosts)s hosts, read without a whole '# Using devices' list"
)

# Where a run is: each header line opens a new run when the current one is already past it.
_VERSION, _STARTING, _THREADS_LINE, _DEVICES, _RANKS, _TABLE, _ROWS, _FOOTER = range(8)


@dataclass(frozen=True, slots=True)
class Row:
    """One size of the table, one of its two halves: bytes, seconds, nccl-tests' algbw and busbw in bytes/s."""

    bytes: int
    seconds: float
    algbw: float
    busbw: float
    in_place: bool


@dataclass(frozen=True)
class Log:
    """One nccl-tests run: which collective, over how many ranks on how many hosts, and its rows.

    ``notes`` says what the reader inferred or left out (a run of another collective in the same
    file, a rank count read elsewhere than the ``# Using devices`` list), for a user to be told.
    """

    name: str
    collective: str
    ranks: int
    hosts: int
    devices_per_host: int
    device_name: str | None
    rows: tuple[Row, ...]
    notes: tuple[Message, ...] = ()

    @property
    def nodes(self) -> int:
        return self.hosts


def read_log(path: str | Path) -> Log:
    """The nccl-tests run in ``path`` (its printed output, or the JSON file of ``-J``).

    A file of several runs gives its widest all-reduce (else its first run), the others left
    out; :func:`read_logs` gives them all.
    """
    return _main(read_logs(path))


def read_logs(path: str | Path) -> tuple[Log, ...]:
    """Every nccl-tests run in ``path`` that dpscale reads, in the file's order (the JSON of ``-J``: its one run)."""
    name = str(path)
    with _files.open_text(
        path, field="import", most=_files.MAX_FILE_BYTES, missing=_EXPECTED_LOG, unreadable=_READABLE
    ) as stream:
        # Read once, within the bound (a pipe such as <(ssh node cat log) cannot be read twice).
        raw = stream.read(_files.MAX_FILE_BYTES + 1)
    return read_texts(raw, name)


def read_text(raw: str, name: str, *, most: int = _files.MAX_FILE_BYTES) -> Log:
    """The nccl-tests run whose output (printed, or ``-J``'s JSON) is ``raw``, named ``name`` in errors.

    What a page or a request sends in place of a file: read within ``most`` characters, as a file
    is. Of several runs, the one :func:`read_log` gives.
    """
    return _main(read_texts(raw, name, most=most))


def read_texts(raw: str, name: str, *, most: int = _files.MAX_FILE_BYTES) -> tuple[Log, ...]:
    """Every run dpscale reads in ``raw`` (as :func:`read_logs` reads a file), in order; at least one."""
    if raw.lstrip("\ufeff \t\r\n").startswith("{"):  # -J writes one line, the environment in it
        text = _files.read_text(io.StringIO(raw), "import", name, most=most)
        lines = [(i, line) for i, line in enumerate(text.split("\n"), 1) if line.strip()]
        if len(lines) > 1 and all(line.lstrip("\ufeff \t").startswith("{") for _, line in lines):
            # Several runs' -J files put together, a line each
            if len(lines) > MAX_RUNS:
                raise InvalidInput(_files.where(name, lines[MAX_RUNS][0]), "{", _RUNS, params={"most": MAX_RUNS})
            return _from_json_lines(name, lines)
        return (_from_json(name, _files.decode_json(text, "import", name, _READABLE)),)
    found = _files.lines(io.StringIO(raw), name, most=most, comments=True)
    return _from_text(name, _split(name, found))


def _main(logs: tuple[Log, ...]) -> Log:
    """The run of ``logs`` that stands for the file: its widest all-reduce, else its first; the file's notes on it."""
    reduces = [log for log in logs if log.collective == "all_reduce"]
    chosen = max(reduces, key=lambda log: log.ranks) if reduces else logs[0]
    if chosen is logs[0]:
        return chosen
    return replace(chosen, notes=tuple(dict.fromkeys(logs[0].notes + chosen.notes)))


def _at(name: str, line: int, text: str, accepted: str, **params: Any) -> InvalidInput:
    # A table's columns are padded with spaces: shown once each, the excerpt reaches further.
    return InvalidInput(_files.where(name, line), _files.excerpt(" ".join(text.split())), accepted, params=params)


def _unprefixed(line: str) -> str:
    """``line`` without what launchers put before it (several prefixes stacked, at most four)."""
    for _ in range(4):
        found = _PREFIX.match(line)
        if found is None:
            break
        line = line[found.end() :]
    return line


def _collective_in(text: str) -> str | None:
    """The one collective dpscale reads that ``text`` (a program's or a file's name) names; None for none or two."""
    lowered = text.lower()
    named = [c for c, pattern in _NAMES.items() if pattern.search(lowered)]
    return named[0] if len(named) == 1 else None


def _test_of(program: str) -> str:
    """A program's name as a note shows it: ``alltoall`` of ``./build/alltoall_perf_mpi``."""
    base = PurePath(program.split()[0] if program.split() else program).name
    return _files.excerpt(base.removesuffix("_mpi").removesuffix("_perf") or base)


def _spans(ranks: Sequence[int]) -> str:
    """Ranks as runs of consecutive numbers, for a message: ``0-3, 12-15``."""
    spans: list[list[int]] = []
    for rank in sorted(ranks):
        if spans and rank == spans[-1][1] + 1:
            spans[-1][1] = rank
        else:
            spans.append([rank, rank])
    return _files.excerpt(", ".join(f"{a}-{b}" if b > a else str(a) for a, b in spans))


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


def _split(name: str, found: Iterator[tuple[int, str]]) -> list[_Run]:
    """The runs of a printed log, each with its header, rank list, table and NCCL's lines about it."""
    runs = [_Run(1, _Evidence(), None)]
    pending, hint = _Evidence(), None  # what comes after a run's end belongs to the next
    total = 0

    def opened(stage: int, number: int, text: str) -> _Run:
        nonlocal pending, hint
        run = runs[-1]
        if run.stage < stage or (stage == _RANKS and run.stage == _RANKS):
            if run.stage < 0:
                run.line = number  # a run is where its header starts, not the lines before it
            run.stage = stage
            return run
        new = _Run(number, pending, hint)
        pending, hint = _Evidence(), None
        if stage == _TABLE:
            new.inherit(run)
        if run.empty():
            runs[-1] = new
        elif len(runs) >= MAX_RUNS:
            raise _at(name, number, text, _RUNS, most=MAX_RUNS)
        else:
            runs.append(new)
        new.stage = stage
        return new

    for number, line in found:
        text = _unprefixed(line)
        stripped = text.strip()
        if not stripped:
            continue
        run = runs[-1]
        if stripped[0] == "#":
            body = stripped[1:].strip()
            if body.startswith("nccl-tests version"):
                opened(_VERSION, number, stripped)
            elif body.startswith("Collective test starting:"):
                opened(_STARTING, number, stripped).stated = body.partition(":")[2].strip() or None
            elif body.startswith("Collective test concluded:"):
                run.stated = run.stated or body.partition(":")[2].strip() or None
                run.stage, run.concluded = _FOOTER, True
            elif body.startswith("nThread"):
                threads = _THREADS.match(stripped)
                run = opened(_THREADS_LINE, number, stripped)
                if threads is not None:
                    run.per_process = max(1, int(threads.group(1)) * int(threads.group(2)))
            elif body.startswith("Using devices"):
                opened(_DEVICES, number, stripped)
            elif _RANK_START.match(stripped):
                run = opened(_RANKS, number, stripped)
                rank = _RANK.match(stripped)
                if rank is None or stripped.endswith("..."):  # a line cut where nccl-tests or a person cut it
                    run.mark_cut(stripped)
                    continue
                r, group, host, device, device_name = rank.groups()
                where = _files.where(name, number)
                run.ranks.add(int(r), int(group or 0), host, device_name, where, _files.excerpt(stripped), int(device))
                run.cut_last = False
            elif body.startswith(("Out of bounds values", "Avg bus bandwidth")):
                run.stage, run.concluded = _FOOTER, True
            else:
                columns = _Columns.of(stripped)
                if columns is not None:
                    opened(_TABLE, number, stripped).columns = columns
                elif run.stage in (_DEVICES, _RANKS) and _CUT.search(body):
                    run.mark_cut(body)
                elif run.stage < _TABLE and "anks" in body:  # a header's own "nranks 16"
                    run.info.add(None, body)
            continue
        if "NCCL INFO" in text or "NCCL WARN" in text:
            host = _NCCL.match(stripped)
            target = run.info if not run.concluded or _TEARDOWN.search(text) else pending
            target.add(host.group(1) if host is not None else None, text)
            continue
        tokens = stripped.split()
        if (
            run.columns is not None
            and run.stage in (_TABLE, _ROWS)
            and tokens[0].isdigit()
            and len(tokens) > 1
            and tokens[1].isdigit()
        ):
            run.stage = _ROWS
            added = run.add(run.columns, tokens, name, number, text)
            if added:
                total += added
                _files.check_rows(total, name, number, text)
            continue
        if run.stage in (_DEVICES, _RANKS) and _CUT.search(stripped):
            run.mark_cut(stripped)
        elif "_perf" in stripped:
            program = _program(stripped)
            if program is not None:
                if run.stage >= _ROWS or run.concluded:
                    hint = hint or program
                else:
                    run.hint = run.hint or program
    return [run for run in runs if not run.empty()]


def _program(text: str) -> str | None:
    """The nccl-tests program a command line runs: ``all_gather_perf`` of ``mpirun ... ./build/all_gather_perf -b 8``.

    A name followed by options or ending the line; not one a sentence mentions ("all_reduce_perf finished").
    """
    at = text.find("_perf")
    for _ in range(8):  # a few mentions looked at, however long the line
        if at < 0:
            return None
        end = at + len("_perf")
        end += len("_mpi") if text.startswith("_mpi", end) else 0
        after = text[end:].lstrip(" \t")
        name = _PROGRAM.search(text[max(0, at - 40) : at])
        if name is not None and (not after.strip("'\"") or (after[0] == "-" and end < len(text) - len(after))):
            return name.group(0) + "_perf"
        at = text.find("_perf", end)
    return None


def _from_text(name: str, runs: list[_Run]) -> tuple[Log, ...]:
    if not any(run.columns is not None for run in runs):
        raise InvalidInput("import", name, _EXPECTED_LOG)
    alone = len(runs) == 1
    logs: list[tuple[Log, int]] = []
    notes: list[Message] = []
    refusals: list[InvalidInput] = []
    for run in runs:
        read = _finish(name, run, alone)
        if isinstance(read, Log):
            logs.append((read, run.line))
        else:
            notes.append(read[0])
            if read[1] is not None:
                refusals.append(read[1])
    if not logs:
        raise refusals[0] if refusals else InvalidInput("import", name, _EXPECTED_LOG)
    # Of several, each run is named by its first line (in the checks and in errors); the first holds the notes.
    named = [replace(log, name=f"{name}:{line}") for log, line in logs] if len(logs) > 1 else [logs[0][0]]
    named[0] = replace(named[0], notes=tuple(dict.fromkeys(named[0].notes + tuple(notes))))
    return tuple(named)


def _finish(name: str, run: _Run, alone: bool) -> Log | tuple[Message, InvalidInput | None]:
    """The Log of ``run``; or, for a run left out, the note saying so and the refusal a file of it alone gets."""
    shown = PurePath(name).name

    def left(template: str, refusal: InvalidInput | None, **params: Any) -> tuple[Message, InvalidInput | None]:
        return Message.of(template, file=shown, line=run.line, **params), refusal

    gathered = run.gathered()

    def fits(collective: str | None) -> bool:  # what a name says, against what the table's counts say
        if collective is None or gathered is None:
            return collective is not None
        return (gathered == 1) == (collective == "all_reduce")

    named: str | None = None
    if run.stated is not None:  # the header's own word
        named = _collective_in(run.stated)
        if named is None:
            return left(_LEFT_OUT, InvalidInput("import", name, _EXPECTED_LOG), test=_test_of(run.stated))
    else:  # the table's word (a root, in-place results never checked), then a command line's
        other = _other(run, gathered)
        if other is not None:
            return left(_LEFT_OUT, InvalidInput("import", name, _EXPECTED_LOG), test=other)
        if run.hint is not None:
            found = _collective_in(run.hint)
            if found is None:
                return left(_LEFT_OUT, InvalidInput("import", name, _EXPECTED_LOG), test=_test_of(run.hint))
            named = found if fits(found) else None
    if not run.rows:
        refusal = InvalidInput("import", name, N_("a table with at least one size and its time"))
        if alone:
            raise refusal
        return left(_NO_RESULTS, refusal)
    by_file = _collective_in(shown)
    guess = named or (by_file if fits(by_file) else None)
    ranks, hosts, per_host, inferred = _world(name, run, guess)
    collective = named
    if collective is None and by_file is not None and fits(by_file) and _agrees(run, by_file, ranks):
        collective = by_file
    if collective is None:
        collective = _collective(run, ranks)
    if collective is None:
        refusal = InvalidInput("import", name, _UNNAMED)
        if alone:
            raise refusal
        return left(_UNTOLD, refusal)
    if collective not in COLLECTIVES:
        return left(_LEFT_OUT, InvalidInput("import", name, _EXPECTED_LOG), test=collective)
    if run.wrong is not None:
        number, text, token = run.wrong
        raise _at(name, number, text, N_("results that are right (#wrong is %(wrong)s)"), wrong=token)
    if run.error is not None and run.error[0] > max(1, ranks - 1):
        _, number, text, token = run.error
        raise _at(name, number, text, N_("results within nccl-tests' tolerance (error %(error)s)"), error=token)
    notes = (Message.of(_INFERRED, file=shown, line=run.line, ranks=ranks, hosts=hosts),) if inferred else ()
    return Log(name, collective, ranks, hosts, per_host, run.ranks.device, tuple(run.rows), notes)


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


# The JSON of -J: {"args": [program, ...], "config": {"devices": [{rank, group, hostname, device_info}]},
# "results": [{"size", "redop", "out_of_place": {"time" | "cpu_time", "alg_bw", "bus_bw", "nwrong"}, "in_place": ...}]}.


def _key(data: Any, key: str, where: str, name: str, kind: type | tuple[type, ...], accepted: str) -> Any:
    value = data.get(key) if isinstance(data, Mapping) else None
    if not isinstance(value, kind) or isinstance(value, bool):
        place = Message.of("%(file)s, %(key)s", file=name, key=f"{where}{key}")
        raise InvalidInput(place, _files.shown(value), accepted)
    return value


def _from_json_lines(name: str, lines: Sequence[tuple[int, str]]) -> tuple[Log, ...]:
    """The runs of several -J files put together, one a line: each named by its line, other tests left out."""
    logs: list[Log] = []
    notes: list[Message] = []
    for number, line in lines:
        data = _files.decode_json(line, _files.where(name, number), "{", _READABLE)
        args = data.get("args") if isinstance(data, Mapping) else None
        program = args[0] if isinstance(args, list) and args and isinstance(args[0], str) else None
        if program is not None and _collective_in(program) is None:
            notes.append(Message.of(_LEFT_OUT, file=PurePath(name).name, line=number, test=_test_of(program)))
            continue
        logs.append(_from_json(f"{name}:{number}", data))
    if not logs:
        raise InvalidInput("import", name, _EXPECTED_LOG)
    logs[0] = replace(logs[0], notes=tuple(notes))
    return tuple(logs)


def _from_json(name: str, data: Any) -> Log:
    if not isinstance(data, Mapping):
        raise InvalidInput("import", name, _EXPECTED_LOG)
    args = data.get("args")
    program = args[0] if isinstance(args, list) and args and isinstance(args[0], str) else None
    config = _key(data, "config", "", name, Mapping, N_("an object, as nccl-tests -J writes"))
    devices = _key(config, "devices", "config.", name, list, N_("a list of ranks, as nccl-tests -J writes"))
    ranks = _Ranks()
    for i, device in enumerate(devices):
        where = f"config.devices[{i}]."
        place = Message.of("%(file)s, %(key)s", file=name, key=f"config.devices[{i}]")
        rank = _key(device, "rank", where, name, int, N_("a whole number"))
        group = device.get("group", 0) if isinstance(device.get("group", 0), int) else 0
        host = _key(device, "hostname", where, name, str, N_("a text"))
        info = device.get("device_info")
        ranks.add(rank, group, host, info if isinstance(info, str) else "", place, str(rank))
    results = _key(data, "results", "", name, list, N_("a list of sizes, as nccl-tests -J writes"))
    rows: list[Row] = []
    redop = None
    for i, result in enumerate(results):
        where = f"results[{i}]."
        size = _key(result, "size", where, name, int, N_("a whole number"))
        if not 0 <= size <= MAX_BYTES:
            place = Message.of("%(file)s, %(key)s", file=name, key=f"{where}size")
            raise InvalidInput(place, size, N_("a whole number of bytes, at most %(most)s"), params={"most": MAX_BYTES})
        redop = result.get("redop") if isinstance(result.get("redop"), str) else redop
        for half in ("out_of_place", "in_place"):
            body = result.get(half)
            if body is None:
                continue  # a trace replay times only the in-place run
            inner = f"{where}{half}."
            key = "cpu_time" if isinstance(body, Mapping) and "cpu_time" in body else "time"
            numbers = [
                _key(body, k, inner, name, (int, float), N_("a finite number")) for k in (key, "alg_bw", "bus_bw")
            ]
            if not all(map(math.isfinite, numbers)):
                place = Message.of("%(file)s, %(key)s", file=name, key=f"{inner}{key}")
                raise InvalidInput(place, _files.shown(numbers), N_("a finite number"))
            wrong = body.get("nwrong")
            if isinstance(wrong, int | float) and not isinstance(wrong, bool) and wrong > 0:
                place = Message.of("%(file)s, %(key)s", file=name, key=f"{inner}nwrong")
                raise InvalidInput(
                    place, wrong, N_("results that are right (#wrong is %(wrong)s)"), params={"wrong": wrong}
                )
            if size > 0 and numbers[0] > 0:
                rows.append(Row(size, numbers[0] * 1e-6, numbers[1] * 1e9, numbers[2] * 1e9, half == "in_place"))
        _files.check_rows(len(rows) // 2, name, 1, "results")
    n, hosts, per_host = ranks.shape(name)
    if not rows:
        raise InvalidInput("import", name, N_("a table with at least one size and its time"))
    collective = _collective_in(program or PurePath(name).name)
    if collective is None and program is not None:
        raise InvalidInput("import", name, _EXPECTED_LOG)
    if collective is None:
        run = _Run(1, _Evidence(), None)
        run.rows, run.redops = rows, {redop.lower()} if redop else set()
        collective = _collective(run, n)
    if collective not in COLLECTIVES:
        raise InvalidInput("import", name, _UNNAMED)
    return Log(name, collective, n, hosts, per_host, ranks.device, tuple(rows))
