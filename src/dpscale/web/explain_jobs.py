"""The uploads /explain takes as jobs: admitted, run one by one in a process of their own, stopped.

``POST /explain`` and ``POST /api/v1/explain`` (:mod:`dpscale.web.explain_page`) hand the files they
are sent to :func:`explained`. The guard (security.py) lets these two routes take up to
:data:`~dpscale.web.security.MAX_UPLOAD` bytes, streamed: Starlette's form parser spools each file
to disk as it arrives, and they are copied to a folder of the request's own, never held in memory whole.

Jobs are kept apart from the rest of the server, so that predictions and pages are never held up by them:

- at most :data:`EXPLAIN_JOBS` run at once, each in a process of its own at a lower priority
  (:mod:`dpscale.explain.own_process`): not in the server's interpreter, whose lock and threads the pages
  need; :data:`EXPLAIN_WAITING` more may be arriving or wait their turn, in order; past them, a
  request is answered 503 with ``Retry-After`` before its body is read;
- a job's files hold at most what a :class:`~dpscale.explain.limits.Budget` allows (their JSON in
  all, a gzipped file's ratio, what their reduction keeps), so that its process's memory is bounded
  whatever they hold;
- a job is stopped (its process killed, all it held given back) when its client leaves, and
  when :data:`EXPLAIN_SECONDS` have passed since its files arrived, answered 503.

What the page's jobs found (the result, never the files) is then :class:`Kept` a while under an
unguessable token, which the page's address and its language link carry, so that a browser without
JavaScript sees the same results in the other language: for :data:`KEPT_SECONDS`, at most
:data:`KEPT_MOST` results and :data:`KEPT_BYTES` bytes of them at once (the oldest give way).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import multiprocessing
import pickle
import re
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path, PurePath
from typing import Any, BinaryIO, ClassVar

from fastapi import Request
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from dpscale import _files
from dpscale.errors import N_, InvalidInput
from dpscale.i18n import Lang, translation

__all__ = [
    "EXPLAIN_JOBS",
    "EXPLAIN_SECONDS",
    "EXPLAIN_WAITING",
    "KEPT_BYTES",
    "KEPT_MOST",
    "KEPT_ONE",
    "KEPT_SECONDS",
    "RETRY_SECONDS",
    "RESULT_PATTERN",
    "Gone",
    "Jobs",
    "Kept",
    "Refused",
    "explain_uploads",
    "explained",
]
EXPLAIN_JOBS = 2  # jobs run at once, a process each: a small server's two cores, some 230 MB at most each
EXPLAIN_WAITING = 6  # more jobs arriving or waiting their turn: 8 uploads of at most 64 MiB spooled at once
EXPLAIN_SECONDS = 60.0  # from a job's files being whole to its answer: 1 GiB of JSON (its budget) reads in ~15 s
RETRY_SECONDS = 10  # what a client refused for want of room is told to wait (Retry-After): a job takes seconds
KEPT_SECONDS = 1800.0  # how long a result the page explained is kept: a session's reloads and language switches
KEPT_MOST = 64  # results kept at once
KEPT_BYTES = 32 << 20  # bytes of results kept at once (pickled): a few ranks' result takes some kB
KEPT_ONE = 8 << 20  # bytes one result may take to be kept (thousands of ranks, or of steps, take MBs)
RESULT_PATTERN = r"[A-Za-z0-9_-]{32}"  # how a kept result is named: secrets.token_urlsafe(24), 192 random bits
_NICE = 10  # a job's priority below the server's: the pages preempt it
_POLL = 0.05  # seconds between two looks at whether a waiting job's turn has come
_COPY = 1 << 20  # bytes copied at a time from an upload to the file the core reads
BUSY = N_(
    "The server explains at most %(jobs)s uploads at once, with %(waiting)s more waiting, and has that many now: "
    "try again in %(seconds)s s, or run dpscale explain on the files."
)
LATE = N_(
    "The files were not explained within %(seconds)s s, the most one upload may take here: "
    "send fewer or smaller ones, or run dpscale explain on them."
)
NO_FILES = N_("one or more trace files (Chrome trace JSON from torch.profiler, plain or gzipped)")

Upload = tuple[str, BinaryIO]


def explain_uploads(uploads: list[Upload]) -> tuple[Any, list[Any]]:
    """The core's :class:`~dpscale.explain.Explanation` of uploaded traces, each called by its own name,
    and the last step of each of its ranks as a timeline draws it (in the explanation's order).

    In this process, under one request's :class:`~dpscale.explain.limits.Budget`; the routes run
    the same in a process of their own (:func:`dpscale.explain.own_process.explain_folder`).
    """
    from dpscale.explain.limits import Budget
    from dpscale.explain.own_process import explain_named

    if not uploads:
        raise InvalidInput("trace", "", NO_FILES)
    with tempfile.TemporaryDirectory(prefix="dpscale-explain-") as folder:
        _copy([source for _, source in uploads], folder)
        paths = [(name, Path(folder) / str(number)) for number, (name, _) in enumerate(uploads)]
        return explain_named(paths, Budget())


def _copy(sources: list[BinaryIO], folder: str) -> None:
    for number, source in enumerate(sources):
        with (Path(folder) / str(number)).open("wb") as out:
            shutil.copyfileobj(source, out, _COPY)


class Refused(Exception):
    """A job the server will not run, or no longer: 503 with Retry-After, and why in the user's language."""

    def __init__(self, template: str, **params: Any) -> None:
        super().__init__(template % params)
        self.template = template
        self.params = params

    def localized(self, lang: Lang) -> str:
        return translation(lang).gettext(self.template) % self.params

    headers: ClassVar[dict[str, str]] = {"Retry-After": str(RETRY_SECONDS)}


class Gone(Exception):
    """The client left: nobody to answer."""


class Jobs:
    """The jobs of one application: how many are admitted (arriving, waiting or running) and run, and the line.

    Counted under a lock, not with asyncio's primitives, which belong to one event loop (a test
    client runs each request on a loop of its own); a waiting job looks every :data:`_POLL` s
    whether it is first in line and a place is free.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.admitted = 0
        self.running = 0
        self.line: collections.deque[object] = collections.deque()

    def admit(self) -> bool:
        with self.lock:
            if self.admitted >= EXPLAIN_JOBS + EXPLAIN_WAITING:
                return False
            self.admitted += 1
            return True

    def leave(self) -> None:
        with self.lock:
            self.admitted -= 1

    async def turn(self, deadline: float, gone: asyncio.Future[None]) -> None:
        """Wait, in line, for a place to run; raises Gone or Refused (late) when that comes first."""
        ticket = object()
        loop = asyncio.get_running_loop()
        with self.lock:
            self.line.append(ticket)
        try:
            while True:
                with self.lock:
                    if self.running < EXPLAIN_JOBS and self.line[0] is ticket:
                        self.line.popleft()
                        self.running += 1
                        return
                if gone.done():
                    raise Gone
                if loop.time() >= deadline:
                    raise Refused(LATE, seconds=f"{EXPLAIN_SECONDS:g}")
                await asyncio.sleep(_POLL)
        except BaseException:
            with self.lock:
                if ticket in self.line:
                    self.line.remove(ticket)
            raise

    def done(self) -> None:
        with self.lock:
            self.running -= 1


_CONTEXT: Any = None
_CONTEXT_LOCK = threading.Lock()


def _context() -> Any:
    """How a job's process starts: forked from a server process that has the core imported, where there is one."""
    global _CONTEXT
    with _CONTEXT_LOCK:
        if _CONTEXT is None:
            if "forkserver" in multiprocessing.get_all_start_methods():
                _CONTEXT = multiprocessing.get_context("forkserver")
                _CONTEXT.set_forkserver_preload(["__main__", "numpy", "dpscale.explain.own_process"])
            else:
                _CONTEXT = multiprocessing.get_context("spawn")
        return _CONTEXT


async def _exited(process: Any) -> None:
    """Wait, without a thread, for ``process`` to end."""
    loop = asyncio.get_running_loop()
    ended: asyncio.Future[None] = loop.create_future()

    def ready() -> None:
        if not ended.done():
            ended.set_result(None)

    try:
        loop.add_reader(process.sentinel, ready)
    except (NotImplementedError, AttributeError):  # a loop that cannot watch a descriptor
        await run_in_threadpool(process.join)
        return
    try:
        await ended
    finally:
        loop.remove_reader(process.sentinel)
    process.join()  # it has ended: this only reaps it


async def _left(request: Request) -> None:
    """Return when the client leaves (after its body: nothing else comes)."""
    with contextlib.suppress(Exception):  # a server that cannot say: the client is taken to have left
        while (await request.receive())["type"] != "http.disconnect":
            pass


async def _run(folder: str, names: list[str], deadline: float, gone: asyncio.Future[None]) -> tuple[Any, list[Any]]:
    """The answer of :func:`~dpscale.explain.own_process.explain_folder` on ``folder``, in a process killed should the
    client leave or the deadline pass first."""
    from dpscale.explain.own_process import ANSWER, explain_folder

    process = _context().Process(target=explain_folder, args=(folder, names, _NICE), daemon=True)
    await run_in_threadpool(process.start)
    exited = asyncio.ensure_future(_exited(process))
    try:
        loop = asyncio.get_running_loop()
        await asyncio.wait({exited, gone}, timeout=max(0.0, deadline - loop.time()), return_when="FIRST_COMPLETED")
        if not exited.done():
            raise Gone if gone.done() else Refused(LATE, seconds=f"{EXPLAIN_SECONDS:g}")
    finally:
        if not exited.done():
            process.kill()
            await asyncio.shield(exited)
    answer_path = Path(folder) / ANSWER
    if process.exitcode != 0 or not answer_path.exists():
        raise RuntimeError(f"the explaining process ended with {process.exitcode}")
    answer = await run_in_threadpool(_load, answer_path)
    if answer[0] == "refused":
        raise answer[1]
    return answer[1], answer[2]


def _load(path: Path) -> Any:
    with path.open("rb") as f:
        return pickle.load(f)  # noqa: S301 (written by our own process, in a folder of our own)


def _named(names: list[str]) -> list[str]:
    """Each upload's name, made unique (``trace.json (2)``) so that results and errors tell them apart."""
    taken: set[str] = set()
    unique = []
    for name in names:
        shown, count = name, 1
        while shown in taken:  # a, a, "a (2)": a, a (2), a (2) (2)… never twice the same
            count += 1
            shown = f"{name} ({count})"
        taken.add(shown)
        unique.append(shown)
    return unique


async def explained(request: Request, jobs: Jobs) -> tuple[Any, list[Any]]:
    """The explanation of the files posted as ``trace``, each by the name its user gave it (a job: see above).

    The form's files (spooled to disk by Starlette as they arrive) are copied to a folder of the
    job's own, and closed, once its turn has come; an empty file input (no name, no bytes) is no file.
    """
    if not jobs.admit():
        raise Refused(BUSY, jobs=EXPLAIN_JOBS, waiting=EXPLAIN_WAITING, seconds=RETRY_SECONDS)
    gone: asyncio.Future[None] | None = None
    folder: str | None = None
    running = False
    try:
        async with request.form(max_files=_files.MAX_TRACE_FILES, max_fields=16) as form:
            files = [i for i in form.getlist("trace") if isinstance(i, UploadFile) and (i.filename or i.size)]
            if not files:
                raise InvalidInput("trace", "", NO_FILES)
            names = _named([PurePath(item.filename or "trace").name or "trace" for item in files])
            deadline = asyncio.get_running_loop().time() + EXPLAIN_SECONDS
            gone = asyncio.ensure_future(_left(request))
            await jobs.turn(deadline, gone)
            running = True
            folder = tempfile.mkdtemp(prefix="dpscale-explain-")
            await run_in_threadpool(_copy, [f.file for f in files], folder)
        return await _run(folder, names, deadline, gone)
    finally:
        if gone is not None:
            gone.cancel()
        if folder is not None:
            await run_in_threadpool(shutil.rmtree, folder, True)
        if running:
            jobs.done()
        jobs.leave()


class Kept:
    """Results the page explained, each kept under an unguessable token for :data:`KEPT_SECONDS` from its
    keeping, at most :data:`KEPT_MOST` of them and :data:`KEPT_BYTES` bytes at once (the oldest give way
    to a new one), none of over :data:`KEPT_ONE` bytes. ``clock`` (seconds) is the time the store goes by.

    A result is held pickled: what it weighs is known exactly, and it is read back as a copy of its own.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        *,
        seconds: float = KEPT_SECONDS,
        most: int = KEPT_MOST,
        size: int = KEPT_BYTES,
        one: int = KEPT_ONE,
    ) -> None:
        self.clock = clock
        self.seconds, self.most, self.size, self.one = seconds, most, size, one
        self.lock = threading.Lock()
        self.results: collections.OrderedDict[str, tuple[float, bytes]] = collections.OrderedDict()  # oldest first
        self.held = 0  # bytes

    @staticmethod
    def well_formed(token: str) -> bool:
        """Whether ``token`` is written as this store writes its tokens (whether or not it keeps one)."""
        return len(token) == 32 and re.fullmatch(RESULT_PATTERN, token) is not None

    def keep(self, found: Any, drawings: list[Any]) -> str | None:
        """The token ``found`` and its ``drawings`` are kept under; None when they weigh too much to keep."""
        data = pickle.dumps((found, drawings), protocol=pickle.HIGHEST_PROTOCOL)
        if len(data) > min(self.one, self.size):
            return None
        token = secrets.token_urlsafe(24)
        with self.lock:
            now = self.clock()
            self._expire(now)
            while self.results and (len(self.results) >= self.most or self.held + len(data) > self.size):
                self._drop()
            self.results[token] = (now + self.seconds, data)
            self.held += len(data)
        return token

    def get(self, token: str) -> tuple[Any, list[Any]] | None:
        """The result and drawings kept under ``token``; None when none is (never was, or no longer)."""
        with self.lock:
            self._expire(self.clock())
            entry = self.results.get(token)
        if entry is None:
            return None
        found, drawings = pickle.loads(entry[1])  # noqa: S301 (pickled by keep(), never sent by a client)
        return found, drawings

    def _expire(self, now: float) -> None:
        while self.results and next(iter(self.results.values()))[0] <= now:  # kept in order, for as long each
            self._drop()

    def _drop(self) -> None:
        _, (_, data) = self.results.popitem(last=False)
        self.held -= len(data)
