"""The seed's calculator: d devices at v each with efficiency E, or any three of d, v, E and A to find the fourth.

What it takes (:data:`SCALING`), computes (:func:`dpscale.scaling.solve`) and shows (:func:`present`).
"""

from __future__ import annotations

import functools

from dpscale import _validate
from dpscale.calculators.shown import Note, Row, Rows, Shown, row_of
from dpscale.errors import N_, InvalidInput
from dpscale.format import format_number, format_percent, format_speedup
from dpscale.i18n import Lang, translation
from dpscale.inputs import Api, Cli, Definition, Input, Page, Values
from dpscale.scaling import DEFAULT_UNIT, MAX_THROUGHPUT, MIN_POSITIVE, Scaling, Solution, Unknown, solve

__all__ = ["SCALING", "present", "warnings"]


# --solve's spellings: the quantity's name with a dash, its short form, or its name in the JSON.
_SOLVED: dict[str, Unknown] = {
    "devices": "devices",
    "per-device": "per_device_throughput",
    "per_device": "per_device_throughput",
    "per_device_throughput": "per_device_throughput",
    "efficiency": "efficiency",
    "actual": "actual_throughput",
    "actual_throughput": "actual_throughput",
}


def _build(values: Values) -> Solution:
    v = SCALING.complete(values)
    solution = solve(
        devices=v["devices"],
        per_device_throughput=v["per_device_throughput"],
        efficiency=v["efficiency"],
        actual_throughput=v["actual_throughput"],
        unit=v["unit"],
    )
    if v["solve"] is not None and _SOLVED[v["solve"]] != solution.unknown:
        raise InvalidInput(
            "solve",
            v["solve"],
            N_("the one quantity not given (%(unknown)s)"),
            params={"unknown": solution.unknown.replace("_", "-")},
        )
    return solution


# The seed's calculator. The page and the API take d, v and E; the command line takes any three of
# d, v, E and A and solves for the fourth.
SCALING = Definition(
    "scaling",
    (
        Input(
            "devices",
            "count",
            "d, the number of devices (64).",
            required=("page", "api"),
            low=1,
            high=_validate.MAX_DEVICES,
            cli=Cli(positional=True, short="-d"),
            page=Page(label=N_("Devices"), example=("64", "64"), group="cluster"),
        ),
        Input(
            "per_device_throughput",
            "number",
            "v, one device's throughput alone (2000, '2 000').",
            api=Api(described="v, one device's throughput alone (2000)."),
            required=("page", "api"),
            low=MIN_POSITIVE,
            high=MAX_THROUGHPUT,
            cli=Cli(positional=True, option="--per-device", short="-v"),
            page=Page(label=N_("Throughput per device"), example=("2 000", "2,000"), group="cluster"),
        ),
        Input(
            "efficiency",
            "fraction",
            "E, the scaling efficiency: 90% or 0.9.",
            api=Api(described="E, the scaling efficiency: a fraction above 0 and at most 1 (0.9)."),
            required=("page", "api"),
            low=MIN_POSITIVE,
            high=1,
            cli=Cli(positional=True, short="-e"),
            page=Page(label=N_("Scaling efficiency"), example=("90 %", "90%"), group="cluster"),  # its kind: in %
        ),
        Input(
            "actual_throughput",
            "number",
            "A, the cluster's actual (or target) throughput.",
            low=MIN_POSITIVE,
            high=MAX_THROUGHPUT * _validate.MAX_DEVICES,
            edges=("cli",),
            cli=Cli(option="--actual", short="-a"),
        ),
        Input(
            "solve",
            "choice",
            "Which one to find: devices, per-device, efficiency or actual [default: the one not given].",
            choices=tuple(_SOLVED),
            edges=("cli",),
        ),
        Input(
            "unit",
            "text",
            "Throughput unit, for display.",
            default=DEFAULT_UNIT,
            cli=Cli(short="-u"),
            page=Page(
                label=N_("unit"),
                example=("échantillons/s", "samples/s"),
                group="cluster",
                beside="per_device_throughput",
            ),
        ),
    ),
    _build,
    groups=(("cluster", N_("Compute cluster")),),
)


# The rows a result shows, in order: each quantity's key (as the JSON names it) and its label.
_ROWS = (
    ("devices", N_("Devices (d)")),
    ("per_device_throughput", N_("Per-device throughput (v)")),
    ("efficiency", N_("Scaling efficiency (E)")),
    ("ideal_throughput", N_("Ideal throughput (I = d·v)")),
    ("actual_throughput", N_("Actual throughput (A = I·E)")),
    ("speedup", N_("Speedup (S = d·E)")),
    ("lost_throughput", N_("Lost throughput (I − A)")),
)


@functools.cache
def _labels(lang: Lang) -> tuple[dict[str, str], str]:
    """The rows' labels and the mark of the one solved for, in ``lang``: the same for every result, translated once."""
    _ = translation(lang).gettext
    return {key: _(label) for key, label in _ROWS}, _("solved")


def present(result: Solution | Scaling, lang: Lang) -> Shown:
    """I, A, S and I − A with the inputs; the quantity solved for emphasised, and what a target leaves over."""
    solution = result if isinstance(result, Solution) else Solution("actual_throughput", result)
    s = solution.scaling
    labels, solved_mark = _labels(lang)

    def throughput(x: float) -> str:
        return f"{format_number(x, lang)} {s.unit}"

    solved = None if solution.unknown == "actual_throughput" else solution.unknown
    main = solved or "actual_throughput"

    def row(key: str, value: str, *, given: bool = False) -> Row:
        mark = solved_mark if key == solved else None
        return row_of(labels[key], value, key, given and key != solved, key == main, mark)

    rows = (
        row("devices", format_number(s.devices, lang), given=True),
        row("per_device_throughput", throughput(s.per_device_throughput), given=True),
        row("efficiency", format_percent(s.efficiency, lang), given=True),
        row("ideal_throughput", throughput(s.ideal_throughput)),
        row("actual_throughput", throughput(s.actual_throughput)),
        row("speedup", format_speedup(s.speedup, lang)),
        row("lost_throughput", throughput(s.lost_throughput)),
    )
    parts: list[Rows | Note] = [Rows(rows)]
    if solution.target_throughput is not None and solution.surplus_throughput > 0:
        said = (
            translation(lang)
            .gettext("Target {target}: {devices} devices give {surplus} more.")
            .format(
                target=throughput(solution.target_throughput),
                devices=format_number(s.devices, lang),
                surplus=throughput(solution.surplus_throughput),
            )
        )
        parts.append(Note(said, key="surplus"))
    return Shown(tuple(parts))


def warnings(solution: Solution, lang: Lang) -> list[str]:
    """What to check before trusting the result: an efficiency above 100 % (the command line says it is a warning,
    as it says every other)."""
    if not solution.scaling.superlinear:
        return []
    _ = translation(lang).gettext
    warning = _("efficiency %(e)s is above 100%% (superlinear scaling); check the single-device throughput")
    return [warning % {"e": format_percent(solution.scaling.efficiency, lang)}]
