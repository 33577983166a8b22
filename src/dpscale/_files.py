"""The files users hand dpscale, read within fixed bounds, and the one place their JSON is decoded.

Measurement files (``dpscale fit FILE``, ``plan --fit FILE``, the web page's pasted measurements)
and network profiles (``predict --network FILE``) come from the user, and so do profiler traces
(``dpscale explain TRACE``), which are read as a stream and may be far larger. A wrong path (a log, a
binary, ``/dev/zero``, a file with no line breaks) gets one error naming the file and the line
after a bounded read, never a whole file held in memory: lines are read one at a time, each with
a bounded ``readline``, and a file past its size is refused before it is read. A named pipe
(FIFO) is opened without waiting for a writer, and refused when no program writes to it within
PIPE_WAIT seconds, rather than waited on for ever. The bounds are all here.
"""

from __future__ import annotations

import errno
import io
import json
import math
import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, BinaryIO, TextIO

from dpscale.errors import N_, InvalidInput, shortened
from dpscale.messages import Message

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_LINE",
    "MAX_LINES",
    "MAX_PROFILE_BYTES",
    "MAX_ROWS",
    "MAX_TRACE_BYTES",
    "MAX_TRACE_FILES",
    "PIPE_WAIT",
    "SHOWN",
    "check_rows",
    "decode_json",
    "excerpt",
    "lines",
    "open_binary",
    "open_text",
    "read_text",
    "shown",
    "text_stream",
    "where",
]

MAX_FILE_BYTES = 8 * 2**20  # a measurement file; 10 000 records of dpscale measure are about 7 MB
MAX_LINE = 64 * 2**10  # characters in one line; a measure record lists each rank's throughput
MAX_ROWS = 10_000  # measurements in one file, far more than a scaling study runs
MAX_LINES = 100_000  # lines in one file, blank lines and comments included
MAX_PROFILE_BYTES = 2**20  # a network profile of dpscale probe: a few KiB of sizes and times
MAX_TRACE_BYTES = 2**30  # a profiler trace, as JSON text (after gunzip): read a chunk at a time, never held whole
MAX_TRACE_FILES = 4096  # trace files in one explanation: one per rank
SHOWN = 40  # characters of a file's text that an error holds (errors.SHOWN bounds what it quotes: 60)
PIPE_WAIT = 3.0  # seconds a named pipe is given for a program (cat log > fifo &) to start writing to it

FILE_SIZE = N_("a file of at most %(most)s MiB")  # params={"most": ...}
_ESCAPED = re.compile("[\udc80-\udcff]")  # bytes that are not UTF-8, as errors="surrogateescape" keeps them
_UNSHOWN = re.compile("[\x00-\x08\x0a-\x1f\x7f\udc80-\udcff]")  # control characters and those bytes


def excerpt(text: str) -> str:
    """The start of ``text``, cut to SHOWN characters, for an error to echo.

    What an error holds as its value (quoted by :func:`dpscale.errors.show_value`), or a name
    read from a file (a device's, a program's): control characters and bytes that are not UTF-8
    become U+FFFD, so that a name kept in a result is safe to print too.
    """
    return shortened(_UNSHOWN.sub("\ufffd", text[: SHOWN + 1]), SHOWN)


def shown(value: Any) -> Any:
    """``value`` as an error echoes it: a short number as it is, anything else as text cut to SHOWN characters."""
    if isinstance(value, str):
        return excerpt(value)
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value if len(repr(value)) <= SHOWN else excerpt(repr(value))
        return excerpt(json.dumps(value))  # JSON's own spelling: true, null, [1, 2]
    except (RecursionError, TypeError, ValueError):  # too deep, not JSON, past Python's digits for an int
        return type(value).__name__


def where(name: str, line: int, column: str | None = None) -> Message:
    """A place in a file, for an error's field: ``runs.csv, line 3, column devices``."""
    if column is None:
        return Message.of("%(file)s, line %(line)s", file=name, line=line)
    return Message.of("%(file)s, line %(line)s, column %(column)s", file=name, line=line, column=column)


def open_text(path: str | Path, *, field: str, most: int, missing: str, unreadable: str) -> TextIO:
    """``path`` opened as UTF-8 text, refused at once when it is not there, not readable or past ``most`` bytes.

    ``missing`` is what to expect when there is no such file; ``unreadable`` a template with
    ``%(reason)s``. Bytes that are not UTF-8 are kept (as lone surrogates) for :func:`lines` to
    refuse with their line; universal newlines read a spreadsheet's ``\\r`` lines too.
    """
    return _opened(path, "r", field=field, most=most, missing=missing, unreadable=unreadable)  # type: ignore[return-value]


def open_binary(path: str | Path, *, field: str, most: int, missing: str, unreadable: str) -> BinaryIO:
    """``path`` opened for reading bytes, refused as :func:`open_text` refuses (a compressed trace, say)."""
    return _opened(path, "rb", field=field, most=most, missing=missing, unreadable=unreadable)  # type: ignore[return-value]


def _opened(path: str | Path, mode: str, *, field: str, most: int, missing: str, unreadable: str) -> IO[Any]:
    if not isinstance(path, str | os.PathLike):  # open(0) would read standard input
        raise InvalidInput(field, shown(path), missing)
    name = str(path)
    try:
        # Opened without waiting: open() of a named pipe blocks until a program opens it to write,
        # for ever when none does. What was opened (fstat of the descriptor, not a look at the path
        # before: nothing can be swapped in between) then decides.
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _NOCTTY | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise InvalidInput(field, name, missing) from None
    except OSError as exc:  # a socket is ENXIO
        raise InvalidInput(field, name, unreadable, params={"reason": exc.strerror or type(exc).__name__}) from None
    except ValueError as exc:  # a NUL in the path
        raise InvalidInput(field, name, unreadable, params={"reason": excerpt(str(exc))}) from None
    try:
        raw = _checked(fd, name, field=field, most=most, unreadable=unreadable)
    except BaseException as exc:
        os.close(fd)
        if isinstance(exc, OSError):
            reason = exc.strerror or type(exc).__name__
            raise InvalidInput(field, name, unreadable, params={"reason": reason}) from None
        raise
    if mode == "rb":
        return io.BufferedReader(raw)
    # Bytes that are not UTF-8 are kept (as lone surrogates) for lines() to refuse with their line.
    return io.TextIOWrapper(io.BufferedReader(raw), encoding="utf-8", errors="surrogateescape", newline=None)


def _checked(fd: int, name: str, *, field: str, most: int, unreadable: str) -> io.RawIOBase:
    """The file ``fd`` as a raw stream that waits as reads do, once it is known to be one dpscale may read."""
    info = os.fstat(fd)
    first = b""
    if stat.S_ISDIR(info.st_mode):  # os.open opens a folder for reading; open() refuses it so
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    if stat.S_ISREG(info.st_mode) and info.st_size > most:  # a device or a pipe has no size: reads are bounded
        raise InvalidInput(field, name, FILE_SIZE, params={"most": _mib(most)})
    if stat.S_ISFIFO(info.st_mode):
        written = _written_to(fd, PIPE_WAIT)
        if written is None:
            reason = Message.of(
                "not a regular file: a pipe no program wrote to within %(seconds)s s", seconds=PIPE_WAIT
            )
            raise InvalidInput(field, name, unreadable, params={"reason": reason})
        first = written
    if _NONBLOCK:
        os.set_blocking(fd, True)
    raw = io.FileIO(fd, "rb")
    raw.name = name  # as open(path) names it
    return raw if not first else _GivenBack(first, raw)


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)  # a terminal opened is never made this process's own


def _written_to(fd: int, seconds: float) -> bytes | None:
    """Whether a program writes to the named pipe ``fd`` (opened without waiting), given ``seconds`` to start.

    ``b""`` when one does: it wrote, closed its end, or holds it open (a slow ``<(ssh node cat
    log)``, which a read without waiting tells from no writer at all); the byte that read took,
    where it found one; None when no program opened the pipe to write within ``seconds``.
    """
    try:
        import select

        poller = select.poll()
    except (ImportError, AttributeError):  # no poll(): read as the system reads pipes
        return b""
    poller.register(fd, select.POLLIN)
    deadline = time.monotonic() + seconds
    while True:
        if poller.poll(0):  # something to read, or a writer came and went
            return b""
        try:
            first = os.read(fd, 1)
        except BlockingIOError:  # a writer holds it open, silent so far
            return b""
        if first:  # written between the two looks: given back to the reader
            return first
        left = deadline - time.monotonic()  # no writer (yet): wait for one to write or to close
        if left <= 0:
            return None
        poller.poll(max(1, math.ceil(left * 1000)))


class _GivenBack(io.RawIOBase):
    """A pipe's reading end that gives back first the byte taken while looking for its writer."""

    def __init__(self, first: bytes, raw: io.RawIOBase) -> None:
        super().__init__()
        self._first = first
        self._raw = raw
        self.name = getattr(raw, "name", "")

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._raw.fileno()

    def readinto(self, buffer: Any) -> int | None:
        if self._first:
            size = min(len(buffer), len(self._first))
            buffer[:size] = self._first[:size]
            self._first = self._first[size:]
            return size
        return self._raw.readinto(buffer)

    def close(self) -> None:
        self._raw.close()
        super().close()


def text_stream(text: str, name: str, *, most: int) -> TextIO:
    """``text`` (a page's pasted file) as a stream for :func:`lines`, refused at once past ``most`` characters."""
    if not isinstance(text, str):
        raise InvalidInput(name, shown(text), "measurements as text")
    if len(text) > most:  # already in memory: refused before it is copied
        raise InvalidInput(name, excerpt(text), FILE_SIZE, params={"most": _mib(most)})
    return io.StringIO(text, newline=None)


def lines(
    stream: TextIO, name: str, *, most: int = MAX_FILE_BYTES, comments: bool = False
) -> Iterator[tuple[int, str]]:
    """(number, text) of each line of ``stream`` that is neither blank nor (unless ``comments``) a ``#`` comment.

    Reads one line at a time, at most MAX_LINE characters each, MAX_LINES lines and ``most``
    characters in all, and refuses a longer line or stream, binary data (a NUL) and bytes that
    are not UTF-8, naming the line. A UTF-8 byte-order mark (a spreadsheet's "CSV UTF-8") is
    dropped.
    """
    number = total = 0
    while True:
        line = stream.readline(MAX_LINE + 1)
        if not line:
            return
        number += 1
        total += len(line)
        text = line.rstrip("\r\n")
        if number == 1:
            text = text.removeprefix("\ufeff")
        complaint = _not_text(text)
        if complaint is None and len(line) > MAX_LINE and not line.endswith("\n"):
            complaint = (N_("lines of at most %(most)s characters"), {"most": MAX_LINE})
        if complaint is None and (total > most or number > MAX_LINES):
            complaint = (
                N_("a file of at most %(most)s MiB and %(lines)s lines"),
                {"most": _mib(most), "lines": MAX_LINES},
            )
        if complaint is not None:
            raise InvalidInput(where(name, number), excerpt(text), complaint[0], params=complaint[1])
        stripped = text.strip()
        if stripped and (comments or not stripped.startswith("#")):
            yield number, text


def check_rows(count: int, name: str, number: int, line: str) -> None:
    """Refuse the measurement past MAX_ROWS (``count`` is its rank among the file's rows, from 1)."""
    if count > MAX_ROWS:
        raise InvalidInput(
            where(name, number), excerpt(line), N_("at most %(most)s measurements in a file"), params={"most": MAX_ROWS}
        )


def read_text(stream: TextIO, field: str, name: str, *, most: int) -> str:
    """All of ``stream``, refused past ``most`` characters (read no further) or when not UTF-8 text."""
    text = stream.read(most + 1)
    if len(text) > most:
        raise InvalidInput(field, name, FILE_SIZE, params={"most": _mib(most)})
    complaint = _not_text(text)
    if complaint is not None:
        raise InvalidInput(field, name, complaint[0], params=complaint[1])
    return text


def _not_text(text: str) -> tuple[str, dict[str, Any]] | None:
    """What is wrong with ``text`` as text: binary data (a NUL) or bytes that are not UTF-8; None if nothing."""
    nul = text.find("\x00")
    if nul >= 0:
        return N_("text, not binary data (a NUL byte at column %(column)s)"), {"column": nul + 1}
    escaped = _ESCAPED.search(text)
    if escaped is not None:
        return N_("UTF-8 text (a byte that is not UTF-8 at column %(column)s)"), {"column": escaped.start() + 1}
    return None


def decode_json(text: str, place: str | Message, value: Any, accepted: str) -> Any:
    """``json.loads(text)``, every way it can fail an InvalidInput about ``value`` at ``place``.

    ``accepted`` is a template with ``%(reason)s``. Besides malformed JSON, Python's decoder
    raises RecursionError on deep nesting (a line of ``[[[[…``) and ValueError on an integer of
    more than 4300 digits: both are the input's fault, not the program's.
    """
    reason: Message
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        reason = (
            Message.of("%(reason)s at column %(column)s", reason=exc.msg, column=exc.colno)
            if exc.lineno == 1
            else Message.of(
                "%(reason)s at line %(line)s, column %(column)s", reason=exc.msg, line=exc.lineno, column=exc.colno
            )
        )
    except RecursionError:
        reason = Message.of("arrays or objects nested too deeply")
    except ValueError:  # int('1' * 5000): Python's limit on the digits of an integer
        reason = Message.of("a number with too many digits")
    raise InvalidInput(place, value, accepted, params={"reason": reason})


def _mib(size: int) -> int:
    return math.ceil(size / 2**20)
