"""What a result shows (:class:`~dpscale.calculators.shown.Shown`), printed in the terminal with Rich.

Every command prints its calculator's ``present(result, lang)`` here, part by part: rows as a
two-column table, grids as tables, notes as lines (warnings in yellow, on standard error). No label
or value is written here.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from dpscale.calculators.shown import Grid, Note, Rows, Shown
from dpscale.errors import N_, escaped
from dpscale.i18n import Lang, translation

__all__ = ["print_shown", "print_warning", "warning_line"]


def _console(*, stderr: bool = False) -> Console:
    # Everything prints as written: no markup (a unit such as "tok/s [bf16]" or a file name is the
    # user's text, not a style), no :emoji: codes (so Rich's large emoji table is never loaded), no
    # highlighting. Emphasis is given with Text styles.
    return Console(highlight=False, emoji=False, markup=False, stderr=stderr)


_UNBOUNDED = 10_000  # columns: wider than any table here


def _print_table(out: Console, table: Table) -> None:
    """Print ``table`` whole.

    On a terminal Rich fits the table to the window. Into a file or a pipe (where Rich assumes 80
    columns) a wide table would come out with its numbers cut to "15.19…"; there it is printed at
    its natural width instead.
    """
    if not out.is_terminal:
        natural = Measurement.get(out, out.options.update_width(_UNBOUNDED), table).maximum
        if natural > out.width:
            width = out.width
            out.width = natural
            try:
                out.print(table)
            finally:
                out.width = width
            return
    out.print(table)


def _rows_table(rows: Rows) -> Table:
    """Labels and values; the main figure (or the one solved for) in bold, with its mark after it."""
    table = Table(box=box.SIMPLE, show_header=False, show_edge=False, pad_edge=False)
    table.add_column(justify="left")
    table.add_column(justify="right")
    for row in rows.rows:
        if row.mark is not None:
            table.add_row(Text(row.label, style="bold"), Text.assemble((row.value, "bold"), f"  ← {row.mark}"))
        elif row.main:
            table.add_row(row.label, Text(row.value, style="bold"))
        else:
            table.add_row(row.label, row.value)
    return table


def _grid_table(grid: Grid) -> Table:
    table = Table(box=box.SIMPLE, pad_edge=False, title=grid.title)
    for i, name in enumerate(grid.header):
        table.add_column(name, justify=grid.aligned(i), no_wrap=grid.no_wrap)
    for i, row in enumerate(grid.rows):
        cells = [escaped(c) for c in row]  # a trace's file name among them: shown, never obeyed
        table.add_row(*(Text(c, style="bold") if i == grid.emphasis else c for c in cells))
    return table


def warning_line(text: str, lang: Lang) -> str:
    """A warning as every command prints it."""
    return translation(lang).gettext(N_("warning: %(text)s")) % {"text": text}


def print_warning(text: str, lang: Lang, console: Console | None = None) -> None:
    """A warning, in yellow, on standard error (what a pipe or a file keeps is the result), on one line that a
    terminal folds itself: a log keeps it whole."""
    (console or _console(stderr=True)).print(Text(warning_line(escaped(text), lang), style="yellow"), soft_wrap=True)


def print_shown(shown: Shown, lang: Lang, console: Console | None = None) -> None:
    """Every part of ``shown``, in order."""
    out = console or _console()
    for part in shown.parts:
        if isinstance(part, Rows):
            _print_table(out, _rows_table(part))
        elif isinstance(part, Grid):
            table = _grid_table(part)
            if part.title and len(part.title) > Measurement.get(out, out.options, table).maximum:
                table.title = None  # longer than the table is wide: said above it, rather than folded in it
                out.print(escaped(part.title))
            _print_table(out, table)
        elif isinstance(part, Note) and part.warning:
            print_warning(part.text, lang, console)
        else:
            out.print(Text(escaped(part.text), style="bold" if part.heading else ""), soft_wrap=part.whole)
