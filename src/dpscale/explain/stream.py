"""A Chrome trace's JSON read a piece at a time: its events one by one, never the whole file at once.

``json.load`` of a 200 MB trace holds every event as a dictionary at once, several times the
file's size. Here the text comes in chunks and each event is decoded by the standard library's
C scanner where it stands, handed over, and dropped: memory stays at a chunk plus one event,
and the decoding is the same C code ``json.load`` runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from dpscale.messages import Message

__all__ = ["CHUNK", "MAX_VALUE", "Malformed", "events"]

CHUNK = 4 * 2**20  # characters read at a time
MAX_VALUE = 16 * 2**20  # characters of one event or other top-level value: far more than a profiler writes

_SPACE = re.compile(r"[ \t\n\r]*")
_NEXT = re.compile(r"[ \t\n\r]*,[ \t\n\r]*(?=\{)")  # between two objects of an array
_scan: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[attr-defined]


class Malformed(Exception):
    """The text is not a Chrome trace's JSON object; ``reason`` says what was found and where."""

    def __init__(self, reason: Message) -> None:
        super().__init__(str(reason))
        self.reason = reason


class _Reader:
    """A window on the stream: ``text[pos:]`` is what is still to be read; ``base`` counts what was dropped."""

    def __init__(self, stream: TextIO, most: int) -> None:
        self.stream = stream
        self.most = most
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
        self.text = self.text[self.pos :] + chunk
        self.pos = 0
        return True

    def where(self) -> int:
        return self.base + self.pos

    def char(self) -> str:
        """The next character that is not white space ('' at the end), not consumed."""
        while True:
            self.pos = _SPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.text) or not self.more():
                return self.text[self.pos : self.pos + 1]

    def value(self) -> Any:
        """The JSON value that starts here (after white space), read on until it is whole."""
        self.char()
        while True:
            try:
                found, end = _scan(self.text, self.pos)
            except StopIteration:
                found, end = None, -1
            except (ValueError, RecursionError):  # a bad escape, digits past Python's limit, deep nesting
                found, end = None, -2
            # A value that reaches the end of the window may go on in the next chunk (a number cut short).
            if end >= 0 and (end < len(self.text) or self.ended):
                self.pos = end
                return found
            if len(self.text) - self.pos > MAX_VALUE:
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


def events(stream: TextIO, most: int, keep: Callable[[str, Any], None]) -> Iterator[list[Any]]:
    """The elements of the object's ``traceEvents`` array, in order, in lists of many.

    ``keep(key, value)`` gets every other top-level value, and ``keep("traceEvents", None)`` is
    called when the events begin. A trace saved as a bare array of events (the Chrome format
    allows it) is read as its events. Raises :class:`Malformed` on anything else, and past
    ``most`` characters.
    """
    reader = _Reader(stream, most)
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

    The elements that the window holds whole are decoded in one call of the C scanner: the text
    up to the last ``}`` followed by a comma and a ``{``, wrapped in brackets. Should that ``}``
    lie inside a string, the wrapped text is not JSON (a string is left open) and the elements
    are read one by one instead, as they are at the array's end.
    """
    while True:
        if reader.char() == "]":
            reader.pos += 1
            return
        batch, resume = _whole_elements(reader.text, reader.pos)
        if batch:
            reader.pos = resume
            yield batch
            continue
        if len(reader.text) - reader.pos < CHUNK and reader.more():  # too little in the window: read on
            continue
        yield [reader.value()]
        after = reader.char()
        reader.pos += 1
        if after == "]":
            return
        if after != ",":
            raise Malformed(Message.of("not JSON, or JSON cut short (at character %(at)s)", at=reader.where() - 1))


def _whole_elements(text: str, pos: int) -> tuple[list[Any], int]:
    """The elements of ``text[pos:]`` up to the last one followed by a comma, and where the next begins."""
    cut = len(text)
    for _ in range(8):  # the last '}' of a window usually closes an event's args, not the event
        cut = text.rfind("}", pos, cut)
        if cut < 0:
            return [], pos
        follows = _NEXT.match(text, cut + 1)
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
