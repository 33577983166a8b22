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
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path, PurePath
from typing import Any

from dpscale import _files
from dpscale.errors import N_, InvalidInput
from dpscale.messages import Message
from dpscale.nccltests.lines import _collective_in, _split, _test_of
from dpscale.nccltests.log import COLLECTIVES, Log, Row
from dpscale.nccltests.ranks import _agrees, _collective, _other, _world
from dpscale.nccltests.run import _RUNS, MAX_BYTES, MAX_RUNS, _at, _Evidence, _Ranks, _Run

__all__ = ["COLLECTIVES", "Log", "Row", "read_log", "read_logs", "read_text", "read_texts"]

_EXPECTED_LOG = N_("the output of all_reduce_perf, reduce_scatter_perf or all_gather_perf (nccl-tests)")
_READABLE = N_("a readable nccl-tests output (%(reason)s)")
_UNNAMED = N_("a file named after its test (all_reduce, reduce_scatter or all_gather) or its header")
_LEFT_OUT = N_(
    "%(file)s, line %(line)s: a run of %(test)s, left out (dpscale reads all_reduce, reduce_scatter and all_gather)"
)
_NO_RESULTS = N_("%(file)s, line %(line)s: a run without results, left out")
_UNTOLD = N_("%(file)s, line %(line)s: a run whose collective neither its header nor its table tells, left out")
_INFERRED = N_(
    "%(file)s, line %(line)s: %(ranks)s ranks on %(hosts)s hosts, read without a whole '# Using devices' list"
)


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
