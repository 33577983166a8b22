"""One chart definition (Vega-Lite, built with Altair) for the page, notebooks and the CLI.

The page shows it as an SVG rendered by the server, so it needs no script and works with
JavaScript off; a notebook displays the Altair chart itself; ``dpscale scale --plot`` saves it.
Needs the ``plot`` extra (altair, vl-convert-python).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from dpscale import pipeline, scaling
from dpscale.chart_files import save_chart, to_svg
from dpscale.errors import MissingExtra
from dpscale.format import format_number, format_percent
from dpscale.i18n import Lang, translation

if TYPE_CHECKING:
    import altair as alt

    from dpscale.fit import Fit
    from dpscale.predict.prediction import Prediction

__all__ = [
    "SCHEDULE_FRAME",
    "fit_chart",
    "prediction_chart",
    "save_chart",
    "scaling_chart",
    "scaling_chart_points",
    "scaling_chart_top",
    "schedule_chart",
    "schedule_chart_height",
    "to_svg",
]

MAX_POINTS = 256  # enough for a smooth line, few enough to render fast


def scaling_chart_top(s: scaling.Scaling) -> int:
    """The largest device count the scaling chart draws: about twice the cluster's."""
    return max(2 * s.devices, 2)


def schedule_chart_height(stages: int) -> int:
    """The height of the schedule's plot, in pixels: a row of 34 per stage."""
    return max(90, 34 * stages)


SCHEDULE_FRAME = 110  # pixels the schedule chart adds around its plot: title, axis, legend


def scaling_chart_points(s: scaling.Scaling) -> list[dict[str, Any]]:
    """Ideal and actual throughput for device counts from 1 to about 2·d (at most MAX_POINTS)."""
    top = scaling_chart_top(s)
    step = max(1, -(-top // MAX_POINTS))
    counts = sorted({1, *range(step, top + 1, step), s.devices, top})
    rows = []
    for n in counts:
        at = scaling.Scaling(n, s.per_device_throughput, s.efficiency, s.unit)
        rows.append({"devices": n, "series": "ideal", "throughput": at.ideal_throughput})
        rows.append({"devices": n, "series": "actual", "throughput": at.actual_throughput})
    return rows


def _altair() -> Any:
    try:
        import altair
    except ImportError as exc:
        raise MissingExtra("charts", "plot") from exc
    return altair


def scaling_chart(s: scaling.Scaling, lang: Lang = "en") -> alt.LayerChart:
    """Actual against ideal throughput as devices go from 1 to about 2·d, the user's point marked."""
    altair = _altair()
    _ = translation(lang).gettext
    names = {"ideal": _("Ideal throughput"), "actual": _("Actual throughput")}
    rows = [{**row, "series": names[row["series"]]} for row in scaling_chart_points(s)]
    x = altair.X("devices:Q", title=_("Devices"), scale=altair.Scale(domainMin=0))
    y = altair.Y("throughput:Q", title=_("Throughput (%(unit)s)") % {"unit": s.unit})
    colour = altair.Color(
        "series:N",
        title=None,
        scale=altair.Scale(domain=[names["ideal"], names["actual"]], range=["#8c959f", "#0b5cad"]),
        legend=altair.Legend(orient="top-left"),
    )
    lines = (
        altair.Chart(altair.Data(values=rows))
        .mark_line(strokeWidth=2.5)
        .encode(
            x=x,
            y=y,
            color=colour,
            strokeDash=altair.StrokeDash(
                "series:N",
                legend=None,
                scale=altair.Scale(domain=[names["ideal"], names["actual"]], range=[[6, 4], [1, 0]]),
            ),
        )
    )
    label = _("%(d)s devices: %(a)s %(unit)s") % {
        "d": format_number(s.devices, lang),
        "a": format_number(s.actual_throughput, lang),
        "unit": s.unit,
    }
    point_data = altair.Data(values=[{"devices": s.devices, "throughput": s.actual_throughput, "label": label}])
    point = altair.Chart(point_data).mark_point(filled=True, size=110, color="#a40e26").encode(x=x, y=y)
    text = (
        altair.Chart(point_data)
        .mark_text(align="right", dx=-10, dy=-10, fontWeight="bold", color="#a40e26")
        .encode(x=x, y=y, text="label:N")
    )
    title = _("Actual against ideal throughput")
    chart: alt.LayerChart = (
        altair.layer(lines, point, text)
        .properties(width="container", height=300, title=title)
        .configure_view(strokeWidth=0)
    )
    return chart


def schedule_chart(b: pipeline.Bubble, lang: Lang = "en") -> alt.LayerChart:
    """One step of a GPipe or 1F1B pipeline: stages down, time across, idle time left blank."""
    altair = _altair()
    _ = translation(lang).gettext
    names = {"forward": _("forward"), "backward": _("backward")}
    rows = [
        {
            "stage": _("stage %(n)s") % {"n": slot.stage + 1},
            "start": slot.start,
            "end": slot.end,
            "phase": names[slot.phase],
            "micro_batch": str(slot.micro_batch + 1),
        }
        for slot in pipeline.schedule(b.stages, b.micro_batches, b.schedule)
    ]
    stage_order = [_("stage %(n)s") % {"n": n + 1} for n in range(b.stages)]
    x = altair.X("start:Q", title=_("Time (forward passes)"), scale=altair.Scale(domainMin=0, nice=False))
    y = altair.Y("stage:N", title=None, sort=stage_order)
    blocks = (
        altair.Chart(altair.Data(values=rows))
        .mark_bar(stroke="white", strokeWidth=1)
        .encode(
            x=x,
            x2="end:Q",
            y=y,
            color=altair.Color(
                "phase:N",
                title=None,
                scale=altair.Scale(domain=[names["forward"], names["backward"]], range=["#0b5cad", "#8a4baf"]),
                legend=altair.Legend(orient="top"),
            ),
        )
    )
    labels = (
        altair.Chart(altair.Data(values=rows))
        .transform_calculate(middle="(datum.start + datum.end) / 2")
        .mark_text(color="white", fontSize=11)
        .encode(x="middle:Q", y=y, text="micro_batch:N")
    )
    title = _("%(schedule)s schedule: %(p)s stages, %(m)s micro-batches, bubble %(f)s") % {
        "schedule": "GPipe" if b.schedule == "gpipe" else "1F1B",
        "p": b.stages,
        "m": b.micro_batches,
        "f": format_percent(b.fraction, lang),
    }
    chart: alt.LayerChart = (
        altair.layer(blocks, labels)
        .properties(width="container", height=schedule_chart_height(b.stages), title=title)
        .configure_view(strokeWidth=0)
    )
    return chart


def prediction_chart(p: Prediction, lang: Lang = "en") -> alt.VConcatChart:
    """E(n) and A(n) with their interval as a band, against the seed's constant E, and where each step's time goes."""
    altair = _altair()
    _ = translation(lang).gettext
    v = p.per_device_throughput  # one device's, or as measured at the reference size
    # The seed's assumption: E measured at one size (the first above 1 device) held at every size.
    first = next((i for i, n in enumerate(p.devices) if n > 1), 0)
    reference = float(p.efficiency[first])
    ref_n = int(p.devices[first])
    names = {
        "predicted": _("predicted"),
        "constant": _("constant E (its value at %(n)s held)") % {"n": format_number(ref_n, lang)},
        "ideal": _("ideal"),
    }
    rows = []
    for i, n in enumerate(p.devices):
        rows += [
            {
                "devices": int(n),
                "series": names["predicted"],
                "efficiency": float(p.efficiency[i]),
                "throughput": float(p.actual_throughput[i]),
            },
            {
                "devices": int(n),
                "series": names["constant"],
                "efficiency": reference,
                "throughput": int(n) * v * reference,
            },
            {"devices": int(n), "series": names["ideal"], "efficiency": 1.0, "throughput": int(n) * v},
        ]
    domain = [names["predicted"], names["constant"], names["ideal"]]
    colour = altair.Color(
        "series:N",
        title=None,
        scale=altair.Scale(domain=domain, range=["#0b5cad", "#a40e26", "#8c959f"]),
        legend=altair.Legend(orient="top", labelLimit=0, columns=1),  # whole labels, one a line: a phone's width
    )
    sizes = sorted({int(n) for n in p.devices})
    x = altair.X(
        "devices:Q",
        title=_("Devices"),
        scale=altair.Scale(type="log", base=2)
        if len(p.devices) > 2 and p.devices.max() / p.devices.min() >= 8
        else altair.Scale(),
        # a tick at each size predicted (a few): 64 and 512 labelled, not 100, 150, …; labels never overlap
        axis=altair.Axis(values=sizes if len(sizes) <= 8 else altair.Undefined, format="d", labelOverlap="greedy"),
    )
    base = altair.Chart(altair.Data(values=rows)).mark_line(point=True, strokeWidth=2)
    # the prediction's interval as a band behind its line
    low, high = p.efficiency_interval
    a_low, a_high = p.actual_throughput_interval
    spans: list[dict[str, Any]] = [
        {"devices": int(n), "e_low": float(low[i]), "e_high": float(high[i]), "a_low": float(a_low[i]),
         "a_high": float(a_high[i])}
        for i, n in enumerate(p.devices)
    ]  # fmt: skip
    named = _("%(level)s interval") % {"level": format_percent(p.level, lang, decimals=0)}
    spans = [{**span, "what": named} for span in spans]  # the band in a legend of its own, as the table names it
    shade = altair.Fill("what:N", title=None, scale=altair.Scale(range=["#0b5cad"]), legend=altair.Legend(orient="top"))
    band = altair.Chart(altair.Data(values=spans)).mark_area(opacity=0.18).encode(fill=shade)
    efficiency = altair.layer(
        band.encode(x=x, y="e_low:Q", y2="e_high:Q"),
        base.encode(
            x=x,
            y=altair.Y(
                "efficiency:Q",
                title=_("Scaling efficiency"),
                axis=altair.Axis(format="%"),
                scale=altair.Scale(zero=False),
            ),
            color=colour,
        ),
    ).properties(width="container", height=220, title=_("Scaling efficiency E(n)"))
    per_second = _("Throughput (%(unit)s)") % {"unit": _("samples/s")}
    throughput = altair.layer(
        band.encode(x=x, y="a_low:Q", y2="a_high:Q"),
        base.encode(x=x, y=altair.Y("throughput:Q", title=per_second), color=colour),
    ).properties(width="container", height=220, title=_("Actual throughput A(n)"))
    terms = {"compute": _("compute"), "exposed": _("exposed communication"), "wait": _("straggler wait")}
    colours = ["#8c959f", "#0b5cad", "#e0a100"]
    if p.workload.input_throughput is not None:
        terms["input"] = _("input wait")
        colours.append("#8250df")
    bars = []
    for i, n in enumerate(p.devices):
        for key, value in (
            ("compute", p.compute_time[i]),
            ("exposed", p.exposed_communication[i]),
            ("wait", p.straggler_wait[i]),
            ("input", p.input_wait[i]),
        ):
            if key not in terms:
                continue
            bars.append(
                {"devices": format_number(int(n), lang), "order": i, "term": terms[key], "ms": float(value) * 1000}
            )
    stacked = (
        altair.Chart(altair.Data(values=bars))
        .mark_bar()
        .encode(
            x=altair.X("devices:N", title=_("Devices"), sort=altair.EncodingSortField(field="order")),
            y=altair.Y("ms:Q", title=_("Step time (ms)"), stack="zero"),
            color=altair.Color(
                "term:N",
                title=None,
                scale=altair.Scale(domain=list(terms.values()), range=colours),
                legend=altair.Legend(orient="top"),
            ),
        )
        .properties(width="container", height=220, title=_("Where the step time goes"))
    )
    chart: alt.VConcatChart = (
        altair.vconcat(efficiency, throughput, stacked, _memory_panel(p, lang))
        .resolve_scale(color="independent", fill="independent", stroke="independent")
        .configure_view(strokeWidth=0)
    )
    return chart


def _memory_panel(p: Prediction, lang: Lang) -> alt.LayerChart:
    """What each device holds, stacked by part, against the device's memory when it is known."""
    altair = _altair()
    _ = translation(lang).gettext
    parts = {
        "parameters": _("parameters"),
        "gradients": _("gradients"),
        "optimizer_states": _("optimizer states"),
        "buffers": _("buffers"),
        "activations": _("activations"),
    }
    bars = [
        {
            "devices": format_number(int(n), lang),
            "order": i,
            "part": label,
            "gib": float(getattr(p.memory, key)[i]) / 2**30,
        }
        for i, n in enumerate(p.devices)
        for key, label in parts.items()
    ]
    layers: list[Any] = [
        altair.Chart(altair.Data(values=bars))
        .mark_bar()
        .encode(
            x=altair.X("devices:N", title=_("Devices"), sort=altair.EncodingSortField(field="order")),
            y=altair.Y("gib:Q", title=_("Memory per device (GiB)"), stack="zero"),
            color=altair.Color(
                "part:N",
                title=None,
                scale=altair.Scale(
                    domain=list(parts.values()), range=["#0b5cad", "#57a0e5", "#8250df", "#8c959f", "#e0a100"]
                ),
                legend=altair.Legend(orient="top", columns=2),
            ),
        )
    ]
    if p.cluster.device_memory is not None:
        limit = [{"gib": p.cluster.device_memory / 2**30, "label": _("device memory")}]
        layers.append(
            altair.Chart(altair.Data(values=limit))
            .mark_rule(strokeDash=[6, 3], strokeWidth=2)
            .encode(
                y="gib:Q",  # the line named in a legend: what a bar above it is more than
                stroke=altair.Stroke(
                    "label:N", title=None, scale=altair.Scale(range=["#a40e26"]), legend=altair.Legend(orient="top")
                ),
            )
        )
    panel: alt.LayerChart = altair.layer(*layers).properties(
        width="container", height=220, title=_("Memory per device (%(strategy)s)") % {"strategy": p.cluster.sharding}
    )
    return panel


def fit_chart(f: Fit, lang: Lang = "en") -> alt.LayerChart:
    """The measurements, each ranked model's curve, and the chosen model's 95 % prediction band.

    Both axes are logarithmic: perfect scaling is a straight line (twice the devices, twice the throughput), and a
    law that bends away from it is seen bending at any size, as a log x against a linear y would not show it. A
    band whose low end reaches below the floor (a tenth of the smallest measurement; 0 where it was cut) is drawn
    down to the floor, and so is a curve that falls past its peak."""
    altair = _altair()
    _ = translation(lang).gettext
    largest = max(p.devices for p in f.points)
    top = max([largest * 2, *(p.devices for p in f.best.predictions)])
    grid = sorted({1, *(round(top ** (i / 60)) for i in range(61)), largest, top})
    floor = min(p.throughput for p in f.points) / 10  # a log axis has no 0
    curves: list[dict[str, Any]] = []
    chosen: list[dict[str, Any]] = []
    for m in f.models:
        if m.skipped is not None and m.name != f.chosen:
            continue
        label = m.name + (" ← " + _("chosen") if m.name == f.chosen else "")
        line = [{"devices": n, "throughput": max(m.throughput(n), floor), "model": label} for n in grid]
        (chosen if m.name == f.chosen else curves).extend(line)
    band = [
        {"devices": p.devices, "low": max(p.low, floor), "high": max(p.high, floor)}
        for p in f.best.predict(grid)
        if math.isfinite(p.low) and math.isfinite(p.high)
    ]
    points = [{"devices": p.devices, "throughput": p.throughput} for p in f.points]
    x = altair.X("devices:Q", title=_("Devices"), scale=altair.Scale(type="log", base=2))
    y = altair.Y("throughput:Q", title=_("Throughput"), scale=altair.Scale(type="log"))
    layers = [
        altair.Chart(altair.Data(values=band))
        .mark_area(opacity=0.18, color="#0b5cad")
        .encode(x=x, y=altair.Y("low:Q", title=_("Throughput"), scale=altair.Scale(type="log")), y2="high:Q"),
        *(  # the other models first, the chosen one over them, wider: never hidden under another
            altair.Chart(altair.Data(values=values))
            .mark_line(strokeWidth=width)
            .encode(x=x, y=y, color=altair.Color("model:N", title=None, legend=altair.Legend(orient="top-left")))
            for values, width in ((curves, 1.5), (chosen, 3))
            if values
        ),
        altair.Chart(altair.Data(values=points)).mark_point(filled=True, size=50, color="#1b1f24").encode(x=x, y=y),
    ]
    chart: alt.LayerChart = (
        altair.layer(*layers)
        .properties(width="container", height=320, title=_("Measured throughput and fitted models"))
        .configure_view(strokeWidth=0)
    )
    return chart
