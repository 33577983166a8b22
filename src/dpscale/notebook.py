"""What a notebook shows for each result: the report's rows and grids as HTML tables, in English.

:func:`show_html` is a generic function (:func:`functools.singledispatch`) with one function per
result type, registered here by the type itself, so a renamed or removed type fails here (mypy,
the import) rather than leaving a result without its table. The core does not import this
module: a result's ``_repr_html_`` (``dpscale._display``) reaches it through the function
``dpscale/__init__.py`` plugs in, which loads it on the first display. It imports every result
type, numpy among their needs, which a notebook pays once and ``import dpscale`` never.
"""

from __future__ import annotations

import html
from functools import singledispatch

from dpscale.batch import Batch
from dpscale.explain.breakdown import Explanation
from dpscale.fit.results import Fit
from dpscale.pipeline import Bubble
from dpscale.plan.budget import DeadlinePlan, Plan
from dpscale.predict.prediction import Prediction
from dpscale.report import (
    Grid,
    Row,
    batch_rows,
    bubble_rows,
    deadline_grid,
    explanation_grid,
    explanation_rows,
    fit_grid,
    plan_rows,
    prediction_grid,
    scaling_rows,
)
from dpscale.scaling import Scaling, Solution

__all__ = ["html_grid", "html_rows", "show_html"]


def html_rows(rows: list[Row], css_class: str, *, emphasis: str | None = None) -> str:
    """A two-column HTML table (label, value), every text escaped; the row keyed ``emphasis`` in bold."""
    body = "".join(
        f"<tr><th>{html.escape(r.label)}</th>{_cell(r.value, r.key is not None and r.key == emphasis)}</tr>"
        for r in rows
    )
    return f'<table class="{css_class}">{body}</table>'


def html_grid(grid: Grid, css_class: str) -> str:
    """An HTML table with a header row (and a caption for the title), every text escaped."""
    caption = f"<caption>{html.escape(grid.title)}</caption>" if grid.title else ""
    head = "".join(f"<th>{html.escape(h).replace(chr(10), '<br>')}</th>" for h in grid.header)  # a source above
    body = "".join(
        "<tr>" + "".join(_cell(c, i == grid.emphasis) for c in row) + "</tr>" for i, row in enumerate(grid.rows)
    )
    return f'<table class="{css_class}">{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _cell(text: str, strong: bool) -> str:
    escaped = html.escape(text)
    return f"<td><strong>{escaped}</strong></td>" if strong else f"<td>{escaped}</td>"


@singledispatch
def show_html(result: object) -> str:
    """``result`` as a notebook shows it: its table, or its ``repr`` for a type without one."""
    return f"<pre>{html.escape(repr(result))}</pre>"


@show_html.register
def _scaling(s: Scaling) -> str:
    return html_rows(scaling_rows(s, "en"), "dpscale-scaling")


@show_html.register
def _solution(s: Solution) -> str:
    solved = None if s.unknown == "actual_throughput" else s.unknown
    return html_rows(scaling_rows(s.scaling, "en"), "dpscale-solution", emphasis=solved)


@show_html.register
def _batch(b: Batch) -> str:
    return html_rows(batch_rows(b, "en"), "dpscale-batch")


@show_html.register
def _bubble(b: Bubble) -> str:
    return html_rows(bubble_rows(b, "en"), "dpscale-bubble")


@show_html.register
def _plan(p: Plan) -> str:
    return html_rows(plan_rows(p, "en"), "dpscale-plan")


@show_html.register
def _deadline(dp: DeadlinePlan) -> str:
    return html_rows(plan_rows(dp.plan, "en"), "dpscale-plan") + html_grid(deadline_grid(dp, "en"), "dpscale-deadline")


@show_html.register
def _prediction(p: Prediction) -> str:
    return html_grid(prediction_grid(p, "en"), "dpscale-prediction")


@show_html.register
def _fit(f: Fit) -> str:
    return html_grid(fit_grid(f, "en"), "dpscale-fit")


@show_html.register
def _explanation(e: Explanation) -> str:
    return html_rows(explanation_rows(e, "en"), "dpscale-explanation") + html_grid(
        explanation_grid(e, "en"), "dpscale-ranks"
    )
