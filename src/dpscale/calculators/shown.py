"""What a result shows, whichever edge shows it: labelled rows, grids and notes.

Each calculator's ``present(result, lang)`` (a module of :mod:`dpscale.calculators`) gives a
:class:`Shown`, its parts in the order they are read. The terminal prints them with Rich
(``cli/render.py``), a notebook as HTML tables (``dpscale.notebook``), and the pages' templates
(``templates/_shown.html``) write the same rows, grids and notes; no edge writes a label or a value
of its own. No Rich, no numpy and no I/O here.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal

__all__ = ["Block", "Grid", "Note", "Part", "Row", "Rows", "Shown", "row_of"]


@dataclass(frozen=True, slots=True)
class Row:
    """One line of a two-column result.

    ``key`` names the quantity as the JSON does (the page's element for it); ``given`` says the row
    writes back an input, which a page shows in its fields rather than among the results; ``main``
    marks the figure the result is about (emphasised); ``mark`` is said after the value ("← solved").
    """

    label: str
    value: str
    key: str | None = None
    given: bool = False
    main: bool = False
    mark: str | None = None


# Row's fields as their slots set them (a test holds these to Row's own fields, in order).
_LABEL, _VALUE, _KEY, _GIVEN, _MAIN, _MARK = (getattr(Row, field.name).__set__ for field in fields(Row))


def row_of(label: str, value: str, key: str | None, given: bool, main: bool, mark: str | None) -> Row:
    """``Row(label, value, key, given=given, main=main, mark=mark)``, made in half the time: a page's result makes its
    rows on every request, and a frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``."""
    row = object.__new__(Row)
    _LABEL(row, label)
    _VALUE(row, value)
    _KEY(row, key)
    _GIVEN(row, given)
    _MAIN(row, main)
    _MARK(row, mark)
    return row


@dataclass(frozen=True, slots=True)
class Rows:
    """Rows shown together, as one two-column table."""

    rows: tuple[Row, ...]


@dataclass(frozen=True, slots=True)
class Grid:
    """A table with a header: rows of text, a title, the row to emphasise, each column's alignment.

    ``key`` names it (the page's element); ``align`` is per column, the last one repeating; a header
    written on two lines says a column's source above its heading.
    """

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    title: str | None = None
    emphasis: int | None = None
    align: tuple[Literal["left", "right"], ...] = ("right",)
    key: str | None = None
    no_wrap: bool = False  # wide rows of figures, a cell each: cut rather than folded

    def aligned(self, column: int) -> Literal["left", "right"]:
        return self.align[min(column, len(self.align) - 1)]


@dataclass(frozen=True, slots=True)
class Note:
    """A sentence said with the result; ``warning`` for one that calls for a check."""

    text: str
    warning: bool = False
    key: str | None = None
    whole: bool = False  # a path in it: kept on one line, never folded
    main: bool = False  # the sentence the result is about (what a page reads out when it changes)
    heading: bool = False  # it heads the parts after it


Part = Rows | Grid | Note
Block = tuple[Literal["rows"], Rows] | tuple[Literal["grid"], Grid] | tuple[Literal["notes"], tuple[Note, ...]]


@dataclass(frozen=True, slots=True)
class Shown:
    """A result's parts, in order."""

    parts: tuple[Part, ...]

    @property
    def rows(self) -> tuple[Row, ...]:
        """Every row of every :class:`Rows` part, in order."""
        return tuple(row for part in self.parts if isinstance(part, Rows) for row in part.rows)

    @property
    def results(self) -> tuple[Row, ...]:
        """The rows that are not inputs written back: what a page lists as its results."""
        return tuple(row for row in self.rows if not row.given)

    @property
    def grids(self) -> tuple[Grid, ...]:
        return tuple(part for part in self.parts if isinstance(part, Grid))

    @property
    def notes(self) -> tuple[Note, ...]:
        return tuple(part for part in self.parts if isinstance(part, Note))

    @property
    def blocks(self) -> tuple[Block, ...]:
        """The parts, each with its kind (``rows``, ``grid``, ``notes``), with notes that follow one another under
        one key together (a page lists them as one): a template tells them apart by their kind's name."""
        out: list[Block] = []
        for part in self.parts:
            if isinstance(part, Note):
                last = out[-1][1] if out else None
                if isinstance(last, tuple) and last[0].key == part.key and part.key is not None:
                    out[-1] = ("notes", (*last, part))
                    continue
                out.append(("notes", (part,)))
            else:
                out.append(("rows", part) if isinstance(part, Rows) else ("grid", part))
        return tuple(out)

    def grid(self, key: str) -> Grid | None:
        """The grid named ``key``, if the result has one."""
        return next((g for g in self.grids if g.key == key), None)
