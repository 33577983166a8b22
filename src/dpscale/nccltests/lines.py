"""A printed nccl-tests log read line by line: launchers' prefixes taken off, split into its runs."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import PurePath

from dpscale import _files
from dpscale.nccltests.run import _RUNS, MAX_RUNS, _at, _Columns, _Evidence, _Run

__all__: list[str] = []  # the reader's own parts: dpscale.nccltests.logfiles reads with them

_RANK = re.compile(
    r"#\s*Rank\s+(\d{1,7})\s+(?:Group\s+(\d{1,7})\s+)?(?:Pid\s+\d{1,10}\s+)?on\s+(\S+)\s+device\s+(\d{1,7})"
    r"\s*(?:\[[^\]]*\]\s*)?(.*)"
)
_RANK_START = re.compile(r"#\s*Rank\s+\d")
_THREADS = re.compile(r"#\s*nThread\s+(\d{1,7})\s+nGpus\s+(\d{1,7})")
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
_NCCL = re.compile(r"([^\s:]{1,255}):\d{1,10}:\d{1,10}\s+\[\d{1,7}\]\s+NCCL\s+(?:INFO|WARN)\b")
_TEARDOWN = re.compile(r"Destroy|Clos|Unload|Abort|Finaliz")  # NCCL's lines as a run ends, after its footer
_PROGRAM = re.compile(r"[A-Za-z0-9_]{1,40}$")  # the name before "_perf"
_CUT = re.compile(r"snip|\.\.\.|…|omitted|truncated", re.IGNORECASE)
_NAMES = {
    "all_reduce": re.compile(r"(?<![a-z])all[_\- ]?reduce(?![a-z])"),
    "reduce_scatter": re.compile(r"(?<![a-z])reduce[_\- ]?scatter(?![a-z])"),
    "all_gather": re.compile(r"(?<![a-z])all[_\- ]?gather(?![a-z])"),
}

# Where a run is: each header line opens a new run when the current one is already past it.
_VERSION, _STARTING, _THREADS_LINE, _DEVICES, _RANKS, _TABLE, _ROWS, _FOOTER = range(8)


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
