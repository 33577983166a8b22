"""One request's traces explained in a process of its own, as a server runs them (dpscale.web.explain_page).

The server copies the files of a request into a folder of its own (``0``, ``1``, … in the order
sent) and runs :func:`explain_folder` in a new process, at a lower priority than its own, so that
an explanation takes neither the server's interpreter (its lock, its threads) nor, for long, its
processor. The process reads the files under one :class:`~dpscale.explain.limits.Budget`, deleting
each once read, and writes its answer, pickled, to the folder's ``answer``: ``("found",
explanation, drawings)`` or ``("refused", error)``. The server stops it whenever it likes (the
client left, the time ran out) by killing it, and all it held is given back with the process.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
from pathlib import Path
from typing import Any

from dpscale.errors import InvalidInput
from dpscale.explain.breakdown import explain_timelines
from dpscale.explain.limits import Budget
from dpscale.explain.rank_trace import RankTimeline, read_trace
from dpscale.explain.timeline import drawn_most, step_drawing

__all__ = ["ANSWER", "explain_folder", "explain_named"]

ANSWER = "answer"  # the file of the folder the answer is written to


def explain_named(paths: list[tuple[str, Path]], budget: Budget | None = None) -> tuple[Any, list[Any]]:
    """The explanation of the traces at ``paths``, each called by its name, and the last step of each of its
    ranks as a timeline draws it (in the explanation's order); each file is deleted once read."""
    timelines: dict[str, RankTimeline] = {}
    for name, path in paths:
        timelines[name] = read_trace(path, name=name, budget=budget)
        path.unlink(missing_ok=True)  # one copy on disk at a time
    found = explain_timelines(list(timelines.values()))
    most = drawn_most(len(found.ranks))
    return found, [step_drawing(timelines[rank.file], most=most) for rank in found.ranks]


def explain_folder(folder: str, names: list[str], nice: int) -> None:
    """Explain the files ``0``, ``1``, … of ``folder`` (named ``names``) and write the answer beside them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C on a server reaches its group: the server stops this
    with contextlib.suppress(AttributeError, OSError):  # not on this system: the concurrency limit bounds it still
        os.nice(nice)
    place = Path(folder)
    try:
        found, drawings = explain_named([(name, place / str(i)) for i, name in enumerate(names)], Budget())
        answer: tuple[Any, ...] = ("found", found, drawings)
    except InvalidInput as exc:
        answer = ("refused", exc)
    with (place / ANSWER).open("wb") as out:
        pickle.dump(answer, out, protocol=pickle.HIGHEST_PROTOCOL)
