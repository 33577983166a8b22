"""The fit: how throughput grows with devices (Amdahl, Gustafson, the USL, ...), fitted to measurements
and carried to larger sizes with a 95 % interval.

What it takes (:data:`FIT`: the measurements, the sizes to predict at, the models; the command line
reads the measurements from a file, the page from the text pasted into it, never a path on the server,
the API from its JSON body), computes (:mod:`dpscale.fit`) and shows (:func:`present`).
"""

from __future__ import annotations

import math

from dpscale import _validate
from dpscale.calculators.shown import Grid, Note, Shown
from dpscale.errors import N_
from dpscale.fit.fitting import fit
from dpscale.fit.laws import MODELS
from dpscale.fit.results import Fit
from dpscale.format import format_estimate, format_number, format_percent, format_r2
from dpscale.i18n import Lang, translation
from dpscale.inputs import Api, Cli, Definition, Input, Page, Values
from dpscale.kinds.fitted import AUTO, models_named

__all__ = [
    "AT",
    "AUTO",
    "FIT",
    "SYMBOLS",
    "models_grid",
    "models_named",
    "present",
]


def _build(values: Values) -> Fit:
    v = FIT.complete(values)
    return fit(v["measurements"], models=models_named(v["model"]), at=v["at"] or [])


# DLPerf's NVIDIA PyTorch ResNet-50 FP32 medians, 1 to 16 V100s (see the README).
EXAMPLE = "devices,throughput\n1,367.29\n4,1449.48\n8,2887.65\n16,5716.79"

AT = Input(
    "at",
    "device_list",
    "Sizes to predict: 128,256,512 or 64..1024.",
    low=1,
    high=_validate.MAX_DEVICES,
    page=Page(
        label=N_("Sizes to predict"),
        hint=N_("For example 32, 64, 128, or 64..1024."),
        example=("32; 64; 128", "32, 64, 128"),
        group="measurements",
    ),
)

FIT = Definition(
    "fit",
    (
        Input(
            "measurements",
            "measurements",
            "CSV (devices,throughput columns) or JSON lines from dpscale measure.",
            required=True,
            cli=Cli(positional=True),
            page=Page(
                label=N_("Measured runs: devices and cluster throughput, one run per line"),
                hint=N_(
                    "Paste two columns, devices then throughput, with or without a devices,throughput header (commas, "
                    "semicolons or tabs; numbers as you write them, or as a program does: 367.29), or JSON lines from "
                    "dpscale measure. Repeated runs at one size are welcome."
                ),
                example=(EXAMPLE, EXAMPLE),
                group="measurements",
            ),
            api=Api(name="points"),
        ),
        AT,
        Input(
            "model",
            "model_names",
            f"{AUTO} (all, ranked by AICc) or {', '.join(MODELS)}.",
            default=AUTO,
            cli=Cli(short="-m"),
            page=Page(label=N_("Model"), example=(AUTO, AUTO), group="measurements"),
            api=Api(name="models"),
        ),
    ),
    _build,
    groups=(("measurements", N_("Measurements")),),
)


SYMBOLS = {"lambda": "λ", "sigma": "σ", "kappa": "κ"}  # the parameters by the symbols the formulas use


def present(f: Fit, lang: Lang) -> Shown:
    """Every model fitted (parameters ± standard error, R², AICc; the chosen one emphasised), the chosen model's
    predictions with their intervals, where it extrapolates, the USL's peak and the fit's warnings."""
    _ = translation(lang).gettext
    best = f.best
    chosen = _("Chosen model: %(model)s (%(formula)s).") % {"model": best.name, "formula": best.formula}
    parts: list[Grid | Note] = [Note(chosen, key="chosen", main=True), models_grid(f, lang)]
    if best.predictions:
        rows = tuple(
            (
                format_number(p.devices, lang) + (" *" if p.extrapolated else ""),
                format_number(p.throughput, lang, decimals=0),
                f"{format_number(p.low, lang, decimals=0)} – {format_number(p.high, lang, decimals=0)}"
                if p.has_interval
                else "—",
                format_percent(p.efficiency, lang) if math.isfinite(p.efficiency) else "—",
            )
            for p in best.predictions
        )
        header = (_("Devices"), _("Throughput"), _("95%% interval").replace("%%", "%"), _("Efficiency"))
        title = _("Predicted by %(model)s") % {"model": best.name}
        parts.append(Grid(header, rows, title, key="fit-predictions"))
        if any(p.extrapolated for p in best.predictions):
            largest = format_number(max(point.devices for point in f.points), lang)
            said = _(
                "* Beyond the largest measured size (%(n)s devices): an extrapolation, less sure the further it goes."
            )
            parts.append(Note(said % {"n": largest}, key="extrapolated"))
    if f.peak_devices is not None:
        peak = _("The USL fit peaks at about %(n)s devices: past that, adding devices slows the job down.")
        parts.append(Note(peak % {"n": format_number(round(f.peak_devices), lang)}, key="peak"))
    parts.extend(Note(note.localized(lang), warning=True, key="warnings") for note in f.notes)
    return Shown(tuple(parts))


def models_grid(f: Fit, lang: Lang) -> Grid:
    """Every model fitted, its parameters with standard errors, R² and AICc; the chosen one emphasised."""
    _ = translation(lang).gettext
    rows = []
    emphasis = None
    for i, m in enumerate(f.models):
        params = ", ".join(f"{SYMBOLS.get(k, k)} = {format_estimate(v, err, lang)}" for k, v, err in m.estimates())
        if m.name == f.chosen:
            emphasis = i
        aicc = format_number(m.aicc, lang, decimals=1) if m.aicc is not None else "—"
        r2 = format_r2(m.r2, lang) if m.params else "—"
        rows.append((m.name, params or "—", r2, aicc))
    title = _("Models fitted to %(n)s measurements") % {"n": len(f.points)}
    header = (_("Model"), _("Parameters (± standard error)"), "R²", "AICc")
    return Grid(header, tuple(rows), title, emphasis, ("left", "left", "right"), key="models")
