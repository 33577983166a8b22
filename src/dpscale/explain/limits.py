"""What reading traces may cost: the limits on one file, and on the files a server is sent at once.

A trace is read as a stream (:mod:`~dpscale.explain.stream`) and reduced as it is read
(:mod:`~dpscale.explain.rank_trace`): the text is never held whole, but what the reduction keeps
grows with what the file holds (a kernel's interval, a step, a thread), so that is bounded as
well, and counted as it grows. Each file, wherever it is read (``dpscale explain``, the page,
the API), may hold at most:

- :data:`MAX_EVENTS` events of any kind, :data:`MAX_KEPT` timed events the reduction keeps
  (operators, annotations and collectives on a CPU's threads, kernels), :data:`MAX_STEPS`
  profiler steps and :data:`MAX_THREADS` threads;

and the kind of at most :data:`MAX_NAMES` event names, each of at most :data:`MAX_NAME`
characters, is remembered while it is read (a longer or a later name is looked at each time),
so that a file of ten thousand 100 KB names keeps none of them.

The files a server is sent at once (a :class:`Budget`) also share bounds:
:data:`MAX_REQUEST_TEXT` characters of JSON, :data:`MAX_REQUEST_KEPT` timed events and
:data:`MAX_REQUEST_STEPS` steps over all their ranks; and a gzipped one may unzip to at most
:data:`MAX_GZIP_RATIO` times its size. What one request keeps is then at most about
``40 × MAX_REQUEST_KEPT + 400 × MAX_REQUEST_STEPS`` bytes (arrays of floats, see
:mod:`~dpscale.explain.intervals`) besides a window of the text and a batch of its events
(about 2 MiB): some 400 MB by this count, whatever the files hold (``make bench`` measures some
230 MB for files at the budget), and less than 4 times their text where they hold less.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dpscale.messages import Message

__all__ = [
    "GZIP_FLOOR",
    "MAX_EVENTS",
    "MAX_GZIP_RATIO",
    "MAX_KEPT",
    "MAX_NAME",
    "MAX_NAMES",
    "MAX_REQUEST_KEPT",
    "MAX_REQUEST_STEPS",
    "MAX_REQUEST_TEXT",
    "MAX_STEPS",
    "MAX_THREADS",
    "Budget",
    "TooMuch",
]

# One file, wherever it is read.
MAX_EVENTS = 10_000_000  # events of any kind: 1 GiB of JSON (the most a file may hold) at 100 characters an event
MAX_KEPT = 4_000_000  # timed events kept, some 40 bytes each: a few steps' trace keeps 10 000s, a 1 GiB one ~2 M
MAX_STEPS = 100_000  # profiler steps: a schedule records a few steps a cycle; this is days of them
MAX_THREADS = 10_000  # threads (pid, tid) with operators: a job's processes have tens each
MAX_NAMES = 4096  # event names whose kind is remembered: a model's operators and kernels are some hundreds
MAX_NAME = 1024  # characters of a name whose kind is remembered: a templated kernel's name is a few hundred

# The files one request sends, together (the server's bounds; dpscale explain reads a user's own files).
MAX_REQUEST_TEXT = 2**30  # characters of JSON once unzipped: 64 MiB of gzipped traces, at 10-16 times, is about this
MAX_GZIP_RATIO = 100  # characters per byte of a gzipped file: traces gzip 10-30 times, a gzip bomb about 1000
GZIP_FLOOR = 2**20  # characters any gzipped file may unzip to, whatever its ratio: a small trace gzips far more
MAX_REQUEST_KEPT = 8_000_000  # timed events kept over all the files: some 320 MB at 40 bytes each
MAX_REQUEST_STEPS = 200_000  # steps over all the ranks (ranks × steps): each costs some 400 bytes in the breakdown


class TooMuch(Exception):
    """A file, or the files of one request, hold more than a limit; ``reason`` says which, for the error."""

    def __init__(self, reason: Message) -> None:
        super().__init__(str(reason))
        self.reason = reason


@dataclass(slots=True)
class Budget:
    """What the files of one request may hold together, and still may, shared by their reads (the server's).

    Each read takes from it what its file held; a read that is to be made again (a CPU trace out
    of order) is given back what it took first (:meth:`mark`, :meth:`restore`).
    """

    most_text: int = MAX_REQUEST_TEXT
    most_kept: int = MAX_REQUEST_KEPT
    most_steps: int = MAX_REQUEST_STEPS
    ratio: float = MAX_GZIP_RATIO
    text: int = field(init=False)
    kept: int = field(init=False)
    steps: int = field(init=False)

    def __post_init__(self) -> None:
        self.text, self.kept, self.steps = self.most_text, self.most_kept, self.most_steps

    def take_text(self, count: int) -> None:
        self.text -= count
        if self.text < 0:
            raise TooMuch(
                Message.of("at most %(most)s characters of JSON in all the files sent at once", most=self.most_text)
            )

    def mark(self) -> tuple[int, int, int]:
        return self.text, self.kept, self.steps

    def restore(self, marked: tuple[int, int, int]) -> None:
        self.text, self.kept, self.steps = marked
