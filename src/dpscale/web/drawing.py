"""The timeline of one step of each rank as SVG markup, drawn by the server for a page without JavaScript.

The same drawing as static/explain.js's ``drawing()`` (the script draws its own in its place, at
the page's width, with a step to choose): a band per rank from its step's start, compute in blue,
communication that no compute hides in orange, the rest of the step in grey, and a time axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markupsafe import Markup, escape

from dpscale.format import format_milliseconds, format_number
from dpscale.i18n import Lang, translation

__all__ = ["COLOURS", "timeline_figure"]

COLOURS = {"compute": "#0b5cad", "exposed": "#d9480f", "other": "#d0d7de"}  # as explain.js and the legend's swatches
_WIDTH = 640  # the page's text column; the SVG scales down to a phone's (viewBox)


def _n(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


def timeline_figure(drawings: Sequence[Any], ranks: Sequence[int], slowest: int, lang: Lang) -> Markup:
    """The figure (title, drawing, legend) of ``drawings``, one :class:`~dpscale.explain.timeline.StepDrawing`
    per rank in ``ranks``' order, the ``slowest``-th in bold."""
    _ = translation(lang).gettext
    step = format_number(drawings[0].step, lang)
    legend = "".join(
        f'<li><span class="swatch {kind}"></span>{escape(text)}</li>'
        for kind, text in (
            ("compute", _("Compute")),
            ("exposed", _("Exposed communication")),
            ("other", _("Other: idle, input, host")),
        )
    )
    title = escape(_("Step %(step)s of each rank, from its start") % {"step": step})
    # Every text in it escaped (the title, the legend, the SVG's labels): markup of our own.
    return Markup(  # noqa: S704
        f'<figure class="timeline" id="timeline"><figcaption id="timeline-title">{title}</figcaption>'
        f'<div id="timeline-drawing">{_svg(drawings, ranks, slowest, lang, step)}</div>'
        f'<ul class="legend">{legend}</ul></figure>'
    )


def _svg(drawings: Sequence[Any], ranks: Sequence[int], slowest: int, lang: Lang, step: str) -> str:
    _ = translation(lang).gettext
    count = len(drawings)
    band = 22 if count <= 32 else max(4, 704 // count)
    labelled = band >= 14
    left, right, top, axis = (64 if labelled else 8), 12, 6, 26
    height = top + band * count + axis
    longest = max((d.length for d in drawings), default=0.0) or 1.0
    scale = (_WIDTH - left - right) / longest
    label = _(
        "Timeline of step %(step)s: for each rank, when it computed, when it waited on communication "
        "no compute hid, and the other time; the table gives the same as numbers."
    ) % {"step": step}
    out = [
        f'<svg width="{_WIDTH}" height="{height}" viewBox="0 0 {_WIDTH} {height}" role="img" '
        f'aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">'
    ]
    bar = band - (6 if labelled else 1)
    for r, d in enumerate(drawings):
        y = top + r * band
        out.append(
            f'<g class="rank"><rect x="{left}" y="{y}" width="{_n(d.length * scale)}" height="{bar}" '
            f'fill="{COLOURS["other"]}" class="other"/>'
        )
        for part, intervals in (("compute", d.compute), ("exposed", d.exposed)):
            out.extend(
                f'<rect x="{_n(left + start * scale)}" y="{y}" width="{_n(max(0.5, (end - start) * scale))}" '
                f'height="{bar}" fill="{COLOURS[part]}" class="{part}"/>'
                for start, end in intervals
            )
        if labelled:
            name = escape(_("rank %(rank)s") % {"rank": format_number(ranks[r], lang)})
            weight = 700 if r == slowest else 400
            out.append(
                f'<text x="{left - 6}" y="{y + bar - 4}" text-anchor="end" font-size="12" '
                f'font-weight="{weight}">{name}</text>'
            )
        out.append("</g>")
    base = top + band * count
    out.append(f'<line x1="{left}" x2="{_WIDTH - right}" y1="{base + 2}" y2="{base + 2}" stroke="#57606a"/>')
    for f, anchor in ((0.0, "start"), (0.5, "middle"), (1.0, "end")):
        x = left + f * (_WIDTH - left - right)
        when = escape(format_milliseconds(f * longest, lang))
        out.append(f'<text x="{_n(x)}" y="{base + 18}" font-size="12" text-anchor="{anchor}">{when}</text>')
    out.append("</svg>")
    return "".join(out)
