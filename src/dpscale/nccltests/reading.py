"""The output of nccl-tests' ``all_reduce_perf``, ``reduce_scatter_perf`` and ``all_gather_perf``, read.

Two forms: the text a run prints, and the JSON file of ``-J``. The text holds a ``# Using
devices`` block (one ``#  Rank  3 Group  0 Pid 4242 on node01 device  3 [0000:47:00] NVIDIA
H100 80GB HBM3`` line per rank: ranks, hosts, devices per host) and a table whose two header lines
name the columns: ``size count type redop root``, then ``time algbw busbw #wrong`` for the
out-of-place run and again for the in-place one, each followed by ``i_min i_max i_p99 i_cv%``
when per-iteration timing was asked for; the oldest versions have no ``redop`` and ``root``. The
columns are found by their names, not their places. Times are in microseconds, printed as they
fit seven characters (``6.21``, ``135.8``, ``47535``, ``1.2e+05``); ``#wrong`` is ``N/A`` when
results were not checked. Every other line (NCCL's own ``NCCL INFO`` lines, MPI's) is let be.

Files are read within the bounds of :mod:`dpscale._files`; every complaint names the file and
the line (or, in JSON, the key) and what was expected there.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from dpscale import _files
from dpscale.errors import N_, InvalidInput
from dpscale.messages import Message

__all__ = ["COLLECTIVES", "Log", "Row", "read_log", "read_text"]

COLLECTIVES = ("all_reduce", "reduce_scatter", "all_gather")
MAX_RANKS = 2**20  # ranks listed in one log: past the largest clusters
MAX_BYTES = 2**62  # one message: past any GPU's memory

_RANK = re.compile(
    r"#\s*Rank\s+(\d{1,7})\s+Group\s+(\d{1,7})\s+Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[[^\]]*\]\s*(.*)"
)
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?")
# srun -l prefixes each line with its task ("0: "), OpenMPI's --tag-output with "[1,0]<stdout>:".
_LABEL = re.compile(r"\s*(?:\d{1,7}:|\[\d{1,7},\d{1,7}\]<std(?:out|err)>:)\s?")
_STARTING = re.compile(r"#\s*Collective test starting:\s*(\S+)")
_TIMES = ("time", "cputime")
_EXPECTED_LOG = N_("the output of all_reduce_perf, reduce_scatter_perf or all_gather_perf (nccl-tests)")
_READABLE = N_("a readable nccl-tests output (%(reason)s)")


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
    """One nccl-tests run: which collective, over how many ranks on how many hosts, and its rows."""

    name: str
    collective: str
    ranks: int
    hosts: int
    devices_per_host: int
    device_name: str | None
    rows: tuple[Row, ...]

    @property
    def nodes(self) -> int:
        return self.hosts


def read_log(path: str | Path) -> Log:
    """The nccl-tests run in ``path`` (its printed output, or the JSON file of ``-J``)."""
    name = str(path)
    with _files.open_text(
        path, field="import", most=_files.MAX_FILE_BYTES, missing=_EXPECTED_LOG, unreadable=_READABLE
    ) as stream:
        # Read once, within the bound (a pipe such as <(ssh node cat log) cannot be read twice).
        raw = stream.read(_files.MAX_FILE_BYTES + 1)
    return read_text(raw, name)


def read_text(raw: str, name: str, *, most: int = _files.MAX_FILE_BYTES) -> Log:
    """The nccl-tests run whose output (printed, or ``-J``'s JSON) is ``raw``, named ``name`` in errors.

    What a page or a request sends in place of a file: read within ``most`` characters, as a file is.
    """
    if raw.lstrip("\ufeff \t\r\n").startswith("{"):  # -J writes one line, the environment in it
        text = _files.read_text(io.StringIO(raw), "import", name, most=most)
        return _from_json(name, _files.decode_json(text, "import", name, _READABLE))
    found = _files.lines(io.StringIO(raw), name, most=most, comments=True)
    first = next(found, None)
    if first is None:
        raise InvalidInput("import", name, _EXPECTED_LOG)
    return _from_text(name, first, found)


def _at(name: str, line: int, text: str, accepted: str, **params: Any) -> InvalidInput:
    # A table's columns are padded with spaces: shown once each, the excerpt reaches further.
    return InvalidInput(_files.where(name, line), _files.excerpt(" ".join(text.split())), accepted, params=params)


class _Ranks:
    """The ``# Using devices`` lines: each rank's host, device name and group."""

    def __init__(self) -> None:
        self.hosts: dict[int, str] = {}
        self.groups: dict[int, int] = {}
        self.device: str | None = None

    def add(self, rank: int, group: int, host: str, device: str, where: Message, text: str) -> None:
        if rank in self.hosts or len(self.hosts) >= MAX_RANKS:
            raise InvalidInput(
                where, text, N_("each rank listed once, at most %(most)s ranks"), params={"most": MAX_RANKS}
            )
        self.hosts[rank] = host
        self.groups[rank] = group
        self.device = self.device or (_files.excerpt(device.strip()) or None)  # a name, not a page of text

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


class _Columns:
    """Where each needed value sits in a row, from the table's header line."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = [n for n in names if n != "timestamp"]  # a timestamp is printed last, as two words
        self.size = self.names.index("size")
        self.redop = self.names.index("redop") if "redop" in self.names else None
        self.halves = [  # time, algbw, busbw and #wrong, out-of-place then in-place
            (i, i + 1, i + 2, i + 3)
            for i, n in enumerate(self.names[:-3])
            if n in _TIMES and self.names[i + 1 : i + 3] == ["algbw", "busbw"]
        ][:2]

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


def _row_of(columns: _Columns, tokens: list[str], name: str, line: int, text: str) -> Iterator[Row]:
    if len(tokens) < len(columns.names):
        raise _at(
            name,
            line,
            text,
            N_("a row of %(count)s columns, as its header names them (%(names)s)"),
            count=len(columns.names),
            names=" ".join(columns.names),
        )
    size = tokens[columns.size]
    if not size.isdigit() or int(size) > MAX_BYTES:
        raise _at(
            name, line, text, N_("a size in bytes in column %(column)s, not %(token)s"), column="size", token=size
        )
    for half, (t, a, b, wrong) in enumerate(columns.halves):
        seconds = _number(tokens[t], name, line, text, "time") * 1e-6
        algbw = _number(tokens[a], name, line, text, "algbw") * 1e9
        busbw = _number(tokens[b], name, line, text, "busbw") * 1e9
        if tokens[wrong] != "N/A" and _number(tokens[wrong], name, line, text, "#wrong") > 0:
            raise _at(name, line, text, N_("results that are right (#wrong is %(wrong)s)"), wrong=tokens[wrong])
        if int(size) > 0 and seconds > 0:
            yield Row(int(size), seconds, algbw, busbw, in_place=half == 1)


def _from_text(name: str, first: tuple[int, str], rest: Iterator[tuple[int, str]]) -> Log:
    ranks = _Ranks()
    stated: str | None = None
    columns: _Columns | None = None
    redop: str | None = None
    rows: list[Row] = []
    for number, line in _chain(first, rest):
        text = _LABEL.sub("", line, count=1) if _LABEL.match(line) else line
        stripped = text.strip()
        if stripped.startswith("#"):
            if rows and "Using devices" in stripped:
                raise _at(name, number, text, N_("one run per file (a second '# Using devices' header here)"))
            rank = _RANK.match(stripped)
            if rank is not None:
                r, group, host, _, device = rank.groups()
                ranks.add(int(r), int(group), host, device, _files.where(name, number), _files.excerpt(stripped))
                continue
            starting = _STARTING.match(stripped)
            if starting is not None:
                stated = starting.group(1)
                continue
            columns = _Columns.of(stripped) or columns
            continue
        tokens = stripped.split()
        if columns is None or not tokens or not tokens[0].isdigit():
            continue  # NCCL's, MPI's or the shell's own lines
        before = len(rows)
        rows.extend(_row_of(columns, tokens, name, number, text))
        if len(rows) > before:
            _files.check_rows(len(rows), name, number, text)
        if columns.redop is not None:
            redop = tokens[columns.redop]
    if columns is None:
        raise InvalidInput("import", name, _EXPECTED_LOG)
    return _log(name, stated, redop, ranks, rows)


def _chain(first: tuple[int, str], rest: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    yield first
    yield from rest


def _log(name: str, stated: str | None, redop: str | None, ranks: _Ranks, rows: list[Row]) -> Log:
    n, hosts, per_host = ranks.shape(name)
    if not rows:
        raise InvalidInput("import", name, N_("a table with at least one size and its time"))
    collective = _collective(name, stated, redop, n, rows)
    return Log(name, collective, n, hosts, per_host, ranks.device, tuple(rows))


def _collective(name: str, stated: str | None, redop: str | None, n: int, rows: Sequence[Row]) -> str:
    """Which collective ran: as the log names it, else as busbw ÷ algbw says (2(n−1)/n for all-reduce, (n−1)/n else)."""
    named = stated or PurePath(name).name
    for collective in COLLECTIVES:
        if collective in named:
            return collective
    if stated is not None:
        raise InvalidInput("import", name, _EXPECTED_LOG)
    ratios = sorted(r.busbw / r.algbw for r in rows if r.algbw >= 0.5e9)  # two decimals: 1 % or better
    if not ratios:
        raise InvalidInput(
            "import", name, N_("a file named after its test (all_reduce, reduce_scatter or all_gather) or its header")
        )
    ratio = ratios[len(ratios) // 2]
    if abs(ratio / (2 * (n - 1) / n) - 1) < 0.05:
        return "all_reduce"
    if redop == "none":
        return "all_gather"
    if redop is not None and abs(ratio / ((n - 1) / n) - 1) < 0.05:
        return "reduce_scatter"
    raise InvalidInput(
        "import", name, N_("a file named after its test (all_reduce, reduce_scatter or all_gather) or its header")
    )


# The JSON of -J: {"args": [program, ...], "config": {"devices": [{rank, group, hostname, device_info}]},
# "results": [{"size", "redop", "out_of_place": {"time" | "cpu_time", "alg_bw", "bus_bw", "nwrong"}, "in_place": ...}]}.


def _key(data: Any, key: str, where: str, name: str, kind: type | tuple[type, ...], accepted: str) -> Any:
    value = data.get(key) if isinstance(data, Mapping) else None
    if not isinstance(value, kind) or isinstance(value, bool):
        place = Message.of("%(file)s, %(key)s", file=name, key=f"{where}{key}")
        raise InvalidInput(place, _files.shown(value), accepted)
    return value


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
    return _log(name, program, redop, ranks, rows)
