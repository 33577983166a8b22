"""A Chrome trace's JSON read a piece at a time: its events one by one, never the whole file at once.

``json.load`` of a 200 MB trace holds every event as a dictionary at once, several times the
file's size. Here the text comes in chunks and the events are decoded by the standard library's
C scanner where they stand, a batch at a time, handed over, and dropped: memory stays at a chunk
plus one batch's events, and the decoding is the same C code ``json.load`` runs.

Every character is looked at a bounded number of times, whatever the text: a batch the scanner
cannot take whole (a ``}`` inside a string where an event seemed to end, an event it cannot
decode) is read one event at a time up to where it ended, never tried again. An event whose
integer is longer than Python reads (``sys.get_int_max_str_digits``) or whose nesting is deeper
than its recursion limit is not JSON the scanner can decode, but it is JSON: it is stepped over,
without being decoded, and handed over as :data:`UNREADABLE`, to be counted with the other events
that could not be read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from dpscale.messages import Message

__all__ = ["BATCH", "CHUNK", "MAX_VALUE", "UNREADABLE", "Malformed", "events"]

CHUNK = 2**20  # characters read at a time (a window holds one or two, at up to 4 bytes a character)
BATCH = 2**16  # characters of events decoded at once: their dictionaries take some 5 times that
MAX_VALUE = 2**22  # characters of one event or other top-level value: a profiler's longest are a few KB
_NEAR = 256  # characters of white space looked at between one event's '}' and the next's '{'

_SPACE = re.compile(r"[ \t\n\r]*")
_NEXT = re.compile(r"[ \t\n\r]*,[ \t\n\r]*(?=\{)")  # between two objects of an array
_STRUCTURE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|["\[\]{}]')  # a whole string, a lone quote, a bracket
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_scan: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[attr-defined]


class _Unreadable:
    """An event that is JSON but that Python cannot decode: digits past its limit, nesting too deep."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNREADABLE"


UNREADABLE: Any = _Unreadable()  # has no .get(): counted as unreadable by whoever reads the events


class Malformed(Exception):
    """The text is not a Chrome trace's JSON object; ``reason`` says what was found and where."""

    def __init__(self, reason: Message) -> None:
        super().__init__(str(reason))
        self.reason = reason


class _Reader:
    """A window on the stream: ``text[pos:]`` is what is still to be read; ``base`` counts what was dropped."""

    def __init__(self, stream: TextIO, most: int, read: Callable[[int], None] | None) -> None:
        self.stream = stream
        self.most = most
        self.read = read
        self.text = ""
        self.pos = 0
        self.base = 0
        self.ended = False

    def more(self) -> bool:
        """Read another chunk, dropping what was read; False at the end of the stream."""
        if self.ended:
            return False
        chunk = self.stream.read(CHUNK)
        if not chunk:
            self.ended = True
            return False
        self.base += self.pos
        if self.base + len(self.text) - self.pos + len(chunk) > self.most:
            raise Malformed(Message.of("at most %(most)s characters of JSON", most=self.most))
        if self.read is not None:
            self.read(len(chunk))
        self.text = self.text[self.pos :] + chunk
        self.pos = 0
        return True

    def where(self) -> int:
        return self.base + self.pos

    def left(self) -> int:
        return len(self.text) - self.pos

    def char(self) -> str:
        """The next character that is not white space ('' at the end), not consumed."""
        while True:
            self.pos = _SPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.text) or not self.more():
                return self.text[self.pos : self.pos + 1]

    def value(self) -> Any:
        """The JSON value that starts here (after white space), read on until it is whole.

        A value Python cannot decode (an integer past its digits, nesting past its recursion
        limit) is stepped over and is :data:`UNREADABLE`.
        """
        self.char()
        while True:
            try:
                found, end = _scan(self.text, self.pos)
            except (StopIteration, json.JSONDecodeError):  # not JSON, or not yet: the window may end inside it
                found, end = None, -1
            except (ValueError, RecursionError):  # digits past Python's limit, deep nesting: JSON all the same
                found, end = UNREADABLE, _skip(self.text, self.pos)
            # A value that reaches the end of the window may go on in the next chunk (a number cut short).
            if end >= 0 and (end < len(self.text) or self.ended):
                self.pos = end
                return found
            if self.left() > MAX_VALUE:
                raise Malformed(
                    Message.of(
                        "not JSON, or a value of more than %(most)s characters (at character %(at)s)",
                        most=MAX_VALUE,
                        at=self.where(),
                    )
                )
            if not self.more():
                if end >= 0:
                    self.pos = end
                    return found
                raise Malformed(Message.of("not JSON, or JSON cut short (at character %(at)s)", at=self.where()))


def _skip(text: str, pos: int) -> int:
    """Where the value at ``text[pos]`` (a number, an array or an object) ends, found without decoding it;
    -1 when the text ends first."""
    if text[pos] not in "[{":
        number = _NUMBER.match(text, pos)
        return -1 if number is None else number.end()
    depth = 0
    for token in _STRUCTURE.finditer(text, pos):
        first = text[token.start()]
        if first == '"':
            if token.end() - token.start() == 1:  # a quote no quote closes: the string goes on past the window
                return -1
            continue
        depth += 1 if first in "[{" else -1
        if depth == 0:
            return token.end()
    return -1


def events(
    stream: TextIO, most: int, keep: Callable[[str, Any], None], read: Callable[[int], None] | None = None
) -> Iterator[list[Any]]:
    """The elements of the object's ``traceEvents`` array, in order, in lists of many.

    ``keep(key, value)`` gets every other top-level value, and ``keep("traceEvents", None)`` is
    called when the events begin. A trace saved as a bare array of events (the Chrome format
    allows it) is read as its events. An element Python cannot decode is :data:`UNREADABLE`.
    Raises :class:`Malformed` on anything else, and past ``most`` characters; ``read(n)`` is
    told of each ``n`` characters read, before they are decoded (and may raise to stop).
    """
    reader = _Reader(stream, most, read)
    first = reader.char()
    if first == "[":
        reader.pos += 1
        keep("traceEvents", None)
        yield from _array(reader)
        _end(reader)
        return
    if first != "{":
        raise Malformed(Message.of("not a JSON object (at character %(at)s)", at=reader.where()))
    reader.pos += 1
    if reader.char() == "}":
        reader.pos += 1
        _end(reader)
        return
    while True:
        if reader.char() != '"':
            raise Malformed(Message.of("not a key (at character %(at)s)", at=reader.where()))
        key = reader.value()
        if reader.char() != ":":
            raise Malformed(Message.of("no ':' after a key (at character %(at)s)", at=reader.where()))
        reader.pos += 1
        if key == "traceEvents" and reader.char() == "[":
            reader.pos += 1
            keep("traceEvents", None)
            yield from _array(reader)
        else:
            keep(key, reader.value())
        after = reader.char()
        reader.pos += 1
        if after == "}":
            _end(reader)
            return
        if after != ",":
            raise Malformed(Message.of("not JSON, or JSON cut short (at character %(at)s)", at=reader.where() - 1))


def _array(reader: _Reader) -> Iterator[list[Any]]:
    """The elements of an array whose '[' was just read, up to and including its ']', many at a time.

    The elements that the next :data:`BATCH` characters hold whole are decoded in one call of the
    C scanner: the text up to the last ``}`` followed by a comma and a ``{``, wrapped in brackets.
    Should that fail (the ``}`` lay inside a string, an element cannot be decoded), the elements
    up to there are read one by one, as they are at the array's end.
    """
    while True:
        if reader.char() == "]":
            reader.pos += 1
            return
        if reader.left() < BATCH and reader.more():  # too little in the window: read on
            continue
        limit = min(len(reader.text), reader.pos + BATCH)
        batch, resume = _whole_elements(reader.text, reader.pos, limit)
        if batch:
            reader.pos = resume
            yield batch
            continue
        stop = reader.base + limit  # one by one up to where the batch would have ended, at least one
        singles = []
        while True:
            singles.append(reader.value())
            after = reader.char()
            reader.pos += 1
            if after == "]":
                yield singles
                return
            if after != ",":
                raise Malformed(Message.of("not JSON, or JSON cut short (at character %(at)s)", at=reader.where() - 1))
            if reader.where() >= stop:
                break
        yield singles


def _whole_elements(text: str, pos: int, limit: int) -> tuple[list[Any], int]:
    """The elements of ``text[pos:limit]`` up to the last one followed by a comma, and where the next begins."""
    cut = limit
    for _ in range(8):  # the last '}' of a window usually closes an event's args, not the event
        cut = text.rfind("}", pos, cut)
        if cut < 0:
            return [], pos
        follows = _NEXT.match(text, cut + 1, cut + 1 + _NEAR)
        if follows is not None:
            try:
                found, end = _scan("[" + text[pos : cut + 1] + "]", 0)
            except (StopIteration, ValueError, RecursionError):
                return [], pos
            if end == cut - pos + 3:
                return found, follows.end()
            return [], pos
    return [], pos


def _end(reader: _Reader) -> None:
    if reader.char() != "":
        raise Malformed(Message.of("text after the trace's JSON (at character %(at)s)", at=reader.where()))
