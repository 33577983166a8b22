"""Why a measured run did not complete, in sentences, from the workers' notes and torchrun's log.

Every worker notes in the run's status folder when it joined (``joined-RANK``) and how many steps
it has done (``step-RANK``); torchrun's log gives each rank's exit status, the first to fail and
the exception it raised.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Sequence
from pathlib import Path

from dpscale.measure.launch import clip

__all__ = ["diagnose", "signal_name"]

# torchrun's failure summary: "rank      : 1 (local_rank: 1)" then "exitcode  : -15 (pid: ...)".
_EXITCODE = re.compile(r"^\s*rank\s*:\s*(\d+)[^\n]*\n\s*exitcode\s*:\s*(-?\d+)", re.M)
_TIMED_OUT = re.compile(r"^\[rank(\d+)\]:.*(?:Timed out|timed out|Timeout)", re.M)
# The last line of a traceback, "[rank1]: ValueError: ..." (or unprefixed before the rank joined).
_RAISED = re.compile(
    r"^(?:\[rank(\d+)\]:[ \t]*)?(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*(?:Error|Exception))(?::[ \t]*(.*))?$", re.M
)
_TORCHRUN_OWN = ("ChildFailedError",)  # torchrun's summary of the failure, not its cause
_SOURCE_PLACE = re.compile(r"^\[[^\]]*:\d+\]\s*")  # gloo's "[/path/pair.cc:537] " before its message


def signal_name(number: int) -> str:
    """SIGTERM, or "signal N" for a number that names none."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _progress(status: Path, ranks: Sequence[int]) -> tuple[list[int], dict[int, int]]:
    joined = [r for r in ranks if (status / f"joined-{r}").exists()]
    steps = {r: int((status / f"step-{r}").read_text() or 0) if (status / f"step-{r}").exists() else 0 for r in ranks}
    return joined, steps


def _causes(text: str) -> tuple[dict[int, str], str | None]:
    """The exception each rank ended with, in a sentence, and the last one no rank prefixed."""
    ranked: dict[int, str] = {}
    loose = None
    for rank, name, message in _RAISED.findall(text):
        if name in _TORCHRUN_OWN:
            continue
        said = _SOURCE_PLACE.sub("", message.strip())
        said = re.split(r"(?<=[a-z0-9)])\. ", said, maxsplit=1)[0].rstrip(".")  # its first sentence
        cause = clip(said if said and name == "RuntimeError" else f"{name}: {said}" if said else name, 160)
        if rank:
            ranked[int(rank)] = cause
        else:
            loose = cause
    return ranked, loose


def diagnose(
    what: str,
    status: Path,
    world: int,
    log: Path,
    code: int | None,
    timed_out: bool,
    timeout: float,
    ranks: Sequence[int] | None = None,
) -> str:
    """Which rank failed and why, in sentences, from the workers' notes and torchrun's log.

    Torchrun's own words (its summary, tracebacks, the URL of its docs) stay out: from them come
    only each rank's exit status, the first to fail ("Root Cause") and the exception it raised.
    ``ranks`` are those this node started (all ``world`` by default): only they note anything in
    this node's ``status``, so only they can be said to have never joined or to lag behind.
    """
    mine = range(world) if ranks is None else ranks
    joined, steps = _progress(status, mine)
    absent = [r for r in mine if r not in joined]
    parts = [f"{what} on {world} rank{'s' if world > 1 else ''} did not complete"]
    text = log.read_text(errors="replace") if log.exists() else ""
    failed = {int(rank): int(code_) for rank, code_ in _EXITCODE.findall(text)}
    root_at = text.find("Root Cause")
    first = _EXITCODE.search(text, root_at) if root_at >= 0 else None
    root = int(first.group(1)) if first else None
    ranked, loose = _causes(text)
    waited = {int(r) for r in _TIMED_OUT.findall(text)}
    if root is not None and root not in ranked and loose is not None:
        ranked[root] = loose  # raised before the rank had joined, so before its lines were prefixed
        if re.search(r"timed out|timeout", loose, re.I):
            waited.add(root)
    hung = [r for r in sorted(failed) if failed[r] < 0 and waited and r not in waited]
    culprits = hung + [r for r in [root] if r in failed and r not in hung]
    for rank in culprits + [r for r in sorted(failed) if r not in culprits]:
        code_ = failed[rank]
        if rank in absent and code_ < 0:
            continue  # said below: it never joined
        if rank in hung:
            parts.append(f"rank {rank} stopped responding and was ended ({signal_name(-code_)})")
        elif code_ >= 0:
            why = "timed out waiting for the others" if rank in waited else ranked.get(rank)
            parts.append(f"rank {rank} exited with status {code_}" + (f" ({why})" if why else ""))
        elif culprits and rank not in culprits:
            parts.append(f"rank {rank} was then stopped by torchrun")
        else:
            why = ranked.get(rank)
            parts.append(f"rank {rank} was ended by {signal_name(-code_)}" + (f" ({why})" if why else ""))
    if absent and len(absent) < len(mine):
        parts.append(f"rank{'s' if len(absent) > 1 else ''} {', '.join(map(str, absent))} never joined")
    elif absent and len(mine) < world:
        parts.append("no rank of this node joined the process group (rendezvous did not form)")
    elif absent:
        parts.append("no rank joined the process group (rendezvous did not form)")
    elif steps and min(steps.values()) < max(steps.values()):
        low = min(steps.values())
        stuck = [r for r, s in steps.items() if s == low]
        parts.append(f"rank{'s' if len(stuck) > 1 else ''} {', '.join(map(str, stuck))} stopped after {low} steps")
    if timed_out:
        parts.append(f"stopped after the {timeout:g} s timeout")
    elif code is not None and code != 0 and not failed:
        parts.append(f"torchrun exited with status {code}" + (f" ({loose})" if loose else ""))
    return ": ".join(parts[:1]) + (": " + "; ".join(parts[1:]) if len(parts) > 1 else "")
