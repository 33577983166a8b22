"""Predict: the scaling efficiency E(n) from the interconnect, the gradients, the batch and what was
measured (nccl-tests logs, traces, runs), each term saying where its figure came from.

What it takes (:data:`PREDICT`, the edges' one name for it: its inputs are defined in
:mod:`dpscale.predict.fields`, :mod:`~dpscale.predict.tokenfields` and :mod:`~dpscale.predict.measuredfields`,
its rules and ``build`` in :mod:`dpscale.predict.definition`, which their size keeps in the package),
computes (:mod:`dpscale.predict`) and shows (:func:`present`: :func:`dpscale.predict.table.prediction_table`'s
columns and rows, which the /predict page reads as well, its legend and notes, and the levers).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dpscale.calculators.shown import Grid, Note, Shown
from dpscale.format import format_percent, format_points
from dpscale.i18n import Lang, translation
from dpscale.predict.definition import PREDICT
from dpscale.predict.table import levers_title, prediction_legend, prediction_table
from dpscale.predict.wording import lever_line, levers_note, prediction_notes, warning_lines

if TYPE_CHECKING:
    from dpscale.predict.levers import Lever
    from dpscale.predict.prediction import Prediction

__all__ = ["PREDICT", "levers_grid", "present"]


def present(p: Prediction, lang: Lang, levers: Sequence[Lever] = ()) -> Shown:
    """E(n) and its terms per device count (each term's source above its heading), what the headings mean, what
    the table leaves unsaid, the warnings, and the what-ifs at the largest count, best first."""
    table = prediction_table(p, lang)
    header = tuple(c.heading if c.source is None else f"{c.source}\n{c.heading}" for c in table.columns)
    parts: list[Grid | Note] = [Grid(header, table.rows, key="prediction", no_wrap=True)]
    parts.extend(Note(line, key="legend") for line in prediction_legend(p, lang))
    parts.extend(Note(line, key="notes") for line in prediction_notes(p, lang))
    parts.extend(Note(line, warning=True, key="warnings") for line in warning_lines(p, lang))
    if levers:
        parts.append(levers_grid(p, levers, lang))
        rests_on = levers_note(p, lang)
        if rests_on:
            parts.append(Note(rests_on, key="levers-note"))
    return Shown(tuple(parts))


def levers_grid(p: Prediction, levers: Sequence[Lever], lang: Lang) -> Grid:
    """Each what-if with the efficiency it gives, its gain in points, and whether it fits the device's memory."""
    _ = translation(lang).gettext
    header = [_("What if"), _("Efficiency"), _("Gain (points)")]
    if p.fits is not None:
        header.append(_("Fits"))
    rows = []
    for lever in levers:
        cells = [lever_line(lever, lang), format_percent(lever.efficiency, lang), format_points(lever.gain, lang)]
        if p.fits is not None:
            cells.append(_("yes") if lever.fits else _("no"))
        rows.append(tuple(cells))
    return Grid(tuple(header), tuple(rows), levers_title(p, lang), align=("left", "right"), key="levers")
