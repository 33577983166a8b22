"""The calculators' forms: which fields each page has, how their text is read, what is computed.

A page's inputs live in its query string. Each field is an input of a calculator's definition:
its kind (:mod:`dpscale.kinds`) reads its text in the page's language and writes a value back for
the other; the field holds the example it is prefilled with. The core computes; the page renders
whatever came out, errors by their fields. No arithmetic here: parse, call the core.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dpscale import scaling
from dpscale._french import respelled, thousands_reading
from dpscale.calculators import bubble, effective_batch, fit, plan, scale
from dpscale.calculators.bubble import PIPELINE
from dpscale.calculators.effective_batch import BATCH
from dpscale.calculators.fit import FIT
from dpscale.calculators.plan import PLAN
from dpscale.calculators.predict import PREDICT
from dpscale.calculators.scale import SCALING
from dpscale.calculators.shown import Shown
from dpscale.errors import InvalidInput, MissingInput, show_value
from dpscale.i18n import LANGUAGES, Lang
from dpscale.inputs import Definition, Input
from dpscale.kinds import Kind, kind_of
from dpscale.web.security import MAX_SIZES

__all__ = ["CALCULATORS", "Calculator", "Field", "Form", "PredictResult", "fields_of", "read_form", "translate_values"]


@dataclass(frozen=True)
class Field:
    """One input of a page: its definition, its kind, its prefilled example in French and in English,
    whether it may stay empty."""

    spec: Input
    kind: Kind
    fr: str
    en: str
    required: bool = True

    def example(self, lang: Lang) -> str:
        return self.fr if lang == "fr" else self.en

    def read(self, text: str, lang: Lang) -> Any:
        """The value in ``text``, typed in ``lang`` where the page shows its unit (%), no more device
        counts than one request may cost; a measurement table as pasted, never a path on the server."""
        # read_input's own call (kind_of(spec).read_input), on the kind this field was made with.
        return self.kind.read_input(self.spec, text, lang, in_percent=True, most=MAX_SIZES)


@dataclass(frozen=True)
class Form:
    """What the user typed, the language it is read in, and what came of it."""

    lang: Lang
    values: dict[str, str]
    errors: dict[str, str]
    result: Any
    readings: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)  # 2,500: (2,5, 2 500)
    parsed: dict[str, Any] = dataclasses.field(default_factory=dict)  # each field's value, as read
    shown: Shown | None = None  # what the result shows (its calculator's present), in the page's language


@dataclass(frozen=True)
class Calculator:
    name: str
    path: str
    fields: dict[str, Field]
    compute: Callable[[dict[str, Any]], Any]
    aliases: dict[str, str] = dataclasses.field(default_factory=dict)  # core's field name -> the form's
    definition: Definition | None = None  # the core's definition the fields were made from
    posted: bool = False  # its form is posted: inputs too long for a link (measurements), not URL data
    costly: bool = True  # computes enough to be run off the event loop (False: a few multiplications)
    carries: Callable[[Any], dict[str, str]] | None = None  # fields a result fills in for its link (nccl_fit)
    present: Callable[[Any, Lang], Shown] | None = None  # the calculator's rows, grids and notes of a result

    @functools.cached_property
    def groups(self) -> list[tuple[str, list[Input]]]:
        """The definition's page inputs by group, in the order they first appear (found once)."""
        out: dict[str, list[Input]] = {}
        for item in self.definition.on("page") if self.definition else ():
            out.setdefault(item.page.group, []).append(item)
        return list(out.items())

    @functools.cached_property
    def replacing(self) -> tuple[tuple[str, str], ...]:
        """(field, the core's input its value stands in for): a typed bandwidth for its preset's (found once)."""
        fields = self.fields.items()
        return tuple((name, field.spec.page.replaces) for name, field in fields if field.spec.page.replaces)


def fields_of(definition: Definition) -> dict[str, Field]:
    """A page's fields, one per input of ``definition`` that the page takes."""
    return {
        item.name: Field(item, kind_of(item), *(item.page.example or ("", "")), required=item.required_on("page"))
        for item in definition.on("page")
    }


def translate_values(calc: Calculator, values: dict[str, str], source: Lang, target: Lang) -> dict[str, str]:
    """The values typed in ``source``'s way rewritten in ``target``'s (``2,5`` → ``2.5``); others kept."""
    out = dict(values)
    for name, field in calc.fields.items():
        kind = field.kind
        if not kind.localized:
            if values[name] == field.example(source):  # an untouched text: the other's own
                out[name] = field.example(target)  # (échantillons/s on the French page, samples/s on the English)
            continue
        if not values[name].strip():
            continue
        try:
            value = field.read(values[name], source)
        except InvalidInput:  # unreadable in the source language: left for the user to fix
            continue
        # A number and its unit or suffix keep their form, in the other's spelling: 1,5 j → 1.5 d,
        # 80 Go → 80 GB, 25,6M → 25.6M.
        again = respelled(values[name], source, target) if kind.respells else None
        if again is not None and not again.endswith("%") and _reads_as(field, again, target, value):
            out[name] = again
        elif not (kind.kept_when_same and _reads_as(field, values[name], target, value)):
            # "100Gb/s", "3us", JSON lines: what reads the same in both is kept as typed
            out[name] = kind.show(value, target) or values[name]
    return out


def _reads_as(field: Field, text: str, lang: Lang, value: Any) -> bool:
    try:
        return bool(field.read(text, lang) == value)
    except InvalidInput:
        return False


def _said(exc: InvalidInput, lang: Lang, *, named: bool) -> str:
    """An error as a page shows it: a sentence, what was typed in the language's quotes (« 0 », “0”)."""
    text = exc.localized(lang, named=named)
    shown = show_value(exc.value)
    if len(shown) >= 2 and shown[0] == shown[-1] and shown[0] in "'\"":
        quoted = f"«\u00a0{shown[1:-1]}\u00a0»" if lang == "fr" else f"“{shown[1:-1]}”"
        text = text.replace(shown, quoted, 1)
    return text if named else text[:1].upper() + text[1:]  # a named one begins with the field's key


def read_form(calc: Calculator, lang: Lang, query: dict[str, str]) -> Form:
    """Read the query string of ``calc``'s page; an input not in it is the page's example.

    ``from=fr|en`` in the query says the values were typed for the other language's page.
    """
    source = query.get("from")
    typed_in: Lang = source if source in LANGUAGES else lang
    # A field the link leaves out keeps the page's example (/?devices=128: the other fields as shown).
    values = {k: query.get(k, f.example(typed_in)) for k, f in calc.fields.items()}
    if typed_in != lang:
        values = translate_values(calc, values, typed_in, lang)
    errors: dict[str, str] = {}
    parsed: dict[str, Any] = {}
    readings: dict[str, tuple[str, str]] = {}
    for name, field in calc.fields.items():
        text = values[name]
        if not text.strip():
            if field.required:
                errors[name] = "empty"
            parsed[name] = None
            continue
        try:
            parsed[name] = field.read(text, lang)
        except InvalidInput as exc:
            errors[name] = _said(exc, lang, named=exc.field != name)
            continue
        # A link may carry any name the core accepts (sharding=full_shard, FSDP, overlap=no): a menu
        # shows the option it was read as, else its first option shows and the first edit sends that.
        values[name] = field.kind.field_text(field.spec, parsed[name], values[name])
        reading = thousands_reading(text, lang) if field.kind.numeric else None
        if reading is not None:  # a number field (not a list of counts, where commas separate)
            readings[name] = reading
    for name, replaced in calc.replacing:  # the value typed stands in for the one shown beside it
        if parsed.get(name) is not None:
            parsed[replaced] = None
    result = None
    if not errors:
        try:
            result = calc.compute(parsed)
        except InvalidInput as exc:
            name = calc.aliases.get(exc.field, exc.field)
            if name in calc.fields:  # beside its own field: no need to name it
                if exc.value is not None and not isinstance(exc, MissingInput) and values[name].strip():
                    exc = exc.as_given(exc.place, values[name])  # what was typed (10 Gb/s), not the number read
                errors[name] = _said(exc, lang, named=False)
            else:  # a rule across fields: on the first, naming the one at fault
                errors[next(iter(calc.fields))] = _said(exc, lang, named=True)
    if result is not None and calc.carries is not None:  # what the link carries in place of posted data
        values.update(calc.carries(result))
    shown = None if result is None or calc.present is None else calc.present(result, lang)
    return Form(lang, values, errors, result, readings, parsed, shown)


def _scaling(v: dict[str, Any]) -> scaling.Scaling:
    solution: scaling.Solution = SCALING.build(v)
    return solution.scaling  # the page takes d, v and E: A is what it shows


@dataclass(frozen=True)
class PredictResult:
    prediction: Any  # dpscale.predict.model.Prediction (numpy is imported only when a page asks)
    levers: list[Any]


def _predict(v: dict[str, Any]) -> PredictResult:
    request = PREDICT.build(v)
    return PredictResult(request.predict(), request.levers())


def _carried(result: PredictResult) -> dict[str, str]:
    """An nccl-tests log read: what it measured, in ``nccl_fit``, for the link that cannot carry the log."""
    network = result.prediction.assumptions.get("network_profile")
    return {"nccl_fit": network["fit"]} if network and network.get("fit") else {}


CALCULATORS: dict[str, Calculator] = {
    "scaling": Calculator(
        "scaling",
        "/",
        fields_of(SCALING),
        _scaling,
        definition=SCALING,
        costly=False,
        present=scale.present,
    ),
    "batch": Calculator(
        "batch",
        "/batch",
        fields_of(BATCH),
        BATCH.build,
        definition=BATCH,
        costly=False,
        present=effective_batch.present,
    ),
    "pipeline": Calculator(
        "pipeline",
        "/pipeline",
        fields_of(PIPELINE),
        PIPELINE.build,
        definition=PIPELINE,
        present=bubble.present,
    ),
    "plan": Calculator(
        "plan",
        "/plan",
        fields_of(PLAN),
        PLAN.build,
        aliases={"deadline_seconds": "deadline"},
        definition=PLAN,
        present=plan.present,
    ),
    "predict": Calculator(
        "predict",
        "/predict",
        fields_of(PREDICT),
        _predict,
        aliases={"intra_bandwidth": "intra", "bandwidth": "intra_bandwidth"},
        definition=PREDICT,
        posted=True,  # an nccl-tests log is data, not a link: the short inputs stay in the URL
        carries=_carried,  # and what the log measured (nccl_fit) with them
    ),
    "fit": Calculator(
        "fit",
        "/fit",
        fields_of(FIT),
        FIT.build,
        aliases={"points": "measurements", "file": "measurements"},
        definition=FIT,
        posted=True,
        present=fit.present,
    ),
}
