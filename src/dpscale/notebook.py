"""What a notebook shows for each result: its calculator's rows, grids and notes as HTML, in English.

:func:`show_html` is a generic function (:func:`functools.singledispatch`) with one function per
result type, registered here by the type itself, so a renamed or removed type fails here (mypy,
the import) rather than leaving a result without its table; each asks the result's calculator
(:mod:`dpscale.calculators`) what it shows, as the terminal and the pages do. The core does not
import this module: a result's ``_repr_html_`` (``dpscale._display``) reaches it through the
function ``dpscale/__init__.py`` plugs in, which loads it on the first display. It imports every
result type, numpy among their needs, which a notebook pays once and ``import dpscale`` never.
"""

from __future__ import annotations

import html
from functools import singledispatch

from dpscale.batch import Batch, BatchResult, growth
from dpscale.calculators import bubble, effective_batch, explain, fit, plan, predict, scale
from dpscale.calculators.shown import Grid, Note, Rows, Shown
from dpscale.explain.breakdown import Explanation
from dpscale.fit.results import Fit
from dpscale.pipeline import Bubble
from dpscale.plan.budget import DeadlinePlan, Plan
from dpscale.plan.planned import PlanResult
from dpscale.predict.prediction import Prediction
from dpscale.scaling import Scaling, Solution

__all__ = ["html_shown", "show_html"]


def html_shown(shown: Shown, css_class: str) -> str:
    """Every part of ``shown`` as HTML, every text escaped: rows as a two-column table, grids as tables with a
    header (and a caption for the title), notes as paragraphs; the main figure and a grid's chosen row in bold."""
    return "".join(_html_part(part, css_class) for part in shown.parts)


def _html_part(part: Rows | Grid | Note, css_class: str) -> str:
    if isinstance(part, Rows):
        body = "".join(
            f"<tr><th>{html.escape(r.label)}</th>{_cell(r.value, r.main or r.mark is not None)}</tr>" for r in part.rows
        )
        return f'<table class="{css_class}">{body}</table>'
    if isinstance(part, Grid):
        caption = f"<caption>{html.escape(part.title)}</caption>" if part.title else ""
        head = "".join(f"<th>{html.escape(h).replace(chr(10), '<br>')}</th>" for h in part.header)  # a source above
        body = "".join(
            "<tr>" + "".join(_cell(c, i == part.emphasis) for c in row) + "</tr>" for i, row in enumerate(part.rows)
        )
        table_class = f"{css_class} {css_class}-{part.key}" if part.key else css_class
        return f'<table class="{table_class}">{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    tag = "h4" if part.heading else "p"
    return f'<{tag} class="{css_class}-note">{html.escape(part.text)}</{tag}>'


def _cell(text: str, strong: bool) -> str:
    escaped = html.escape(text)
    return f"<td><strong>{escaped}</strong></td>" if strong else f"<td>{escaped}</td>"


@singledispatch
def show_html(result: object) -> str:
    """``result`` as a notebook shows it: its table, or its ``repr`` for a type without one."""
    return f"<pre>{html.escape(repr(result))}</pre>"


@show_html.register
def _scaling(s: Scaling) -> str:
    return html_shown(scale.present(s, "en"), "dpscale-scaling")


@show_html.register
def _solution(s: Solution) -> str:
    return html_shown(scale.present(s, "en"), "dpscale-solution")


@show_html.register
def _batch(b: Batch) -> str:
    result = BatchResult(b, None, None, None, None, growth(b))  # as the calculator's build gives it
    return html_shown(effective_batch.present(result, "en"), "dpscale-batch")


@show_html.register
def _bubble(b: Bubble) -> str:
    return html_shown(bubble.present(b, "en"), "dpscale-bubble")


@show_html.register
def _plan(p: Plan) -> str:
    return html_shown(Shown((Rows(plan.plan_rows(p, "en")),)), "dpscale-plan")


@show_html.register
def _deadline(dp: DeadlinePlan) -> str:
    return html_shown(plan.present(PlanResult(dp.plan, dp, False), "en"), "dpscale-plan")


@show_html.register
def _prediction(p: Prediction) -> str:
    return html_shown(predict.present(p, "en"), "dpscale-prediction")


@show_html.register
def _fit(f: Fit) -> str:
    return html_shown(fit.present(f, "en"), "dpscale-fit")


@show_html.register
def _explanation(e: Explanation) -> str:
    return html_shown(explain.present(e, "en"), "dpscale-explanation")
