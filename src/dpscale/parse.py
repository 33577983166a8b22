"""Numbers as people type them, in French or English, read with Babel's locale data.

``2 000`` (space, no-break space or narrow no-break space), ``2,000`` in English, ``0,9`` in
French, ``90 %``, ``1e3``. An efficiency needs a percent sign or a fraction: a bare ``90`` is
refused with a hint, never guessed.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from babel.numbers import NumberFormatError, get_decimal_symbol
from babel.numbers import parse_decimal as _babel_parse_decimal

from dpscale import _validate
from dpscale.errors import N_, AmbiguousInput, InvalidInput, MissingExtra
from dpscale.i18n import Lang, babel_locale

__all__ = [
    "number_reader",
    "parse_reference",
    "parse_references",
    "parse_decimal",
    "parse_bandwidth",
    "parse_bytes",
    "parse_count",
    "parse_duration",
    "parse_efficiency",
    "parse_number",
    "parse_quantity",
    "parse_scaled_count",
    "parse_seconds",
    "parse_switch",
    "parse_variation",
]

# Characters people type between groups of digits; all read as the locale's group symbol.
_SPACES = (" ", "\u00a0", "\u202f", "\u2009")


@functools.cache
def _plain_number(lang: Lang) -> tuple[re.Pattern[str], str, str]:
    """Digits as babel's strict mode accepts them unchanged (``2000``, ``2,000``, ``0.9``), with the
    locale's group and decimal symbols: read without babel's reformatting, to the same Decimal."""
    symbols = babel_locale(lang).number_symbols["latn"]
    group, point = symbols["group"], symbols["decimal"]
    grouped = f"[1-9][0-9]{{0,2}}(?:{re.escape(group)}[0-9]{{3}})+"
    return re.compile(f"(?:[0-9]+|{grouped})(?:{re.escape(point)}[0-9]+)?\\Z"), group, point


def _a_number(lang: Lang) -> str:
    if lang == "fr":
        return N_("a number written in French, such as 2 000, 0,9 or 1e3")
    return N_("a number written in English, such as 2,000, 0.9 or 1e3")


def parse_decimal(text: str, lang: Lang, *, field: str) -> Decimal:
    """Read ``text`` as a decimal number in ``lang``; InvalidInput naming ``field`` if it is not one."""
    if not isinstance(text, str):
        raise InvalidInput(field, text, "a number as text")
    # ASCII digits alone (a page's 64, 2000 on every request): what _plain_number reads, as it reads it.
    if text.isascii() and text.isdigit() and len(text) <= 100:
        return Decimal(text)
    cleaned = text.strip()
    plain, group, point = _plain_number(lang)
    for space in _SPACES:
        cleaned = cleaned.replace(space, group)
    if len(cleaned) <= 100 and plain.match(cleaned):
        return Decimal(cleaned.replace(group, "").replace(point, "."))
    locale = babel_locale(lang)
    accepted = _a_number(lang)
    if not cleaned or len(cleaned) > 100:
        raise InvalidInput(field, text, accepted)
    try:
        # strict: misplaced group symbols ("0,9" in English) are errors, not silently dropped.
        number = _babel_parse_decimal(cleaned, locale=locale, strict=True)
    except (NumberFormatError, InvalidOperation, ValueError) as exc:
        hint = None
        if lang == "en" and get_decimal_symbol("fr") in text.strip():
            hint = N_("English writes decimals with a point: 0.9; read as French, it would be accepted")
        raise InvalidInput(field, text, accepted, hint=hint) from exc
    if not number.is_finite():
        raise InvalidInput(field, text, accepted)
    return number


def number_reader(lang: Lang) -> Callable[[str], float]:
    """Numbers as people write them in ``lang`` (``367,29``, ``1 449,48`` in French), for the cells of
    a measurement file (:func:`dpscale.fit.read_points`' ``read_number``)."""
    return lambda cell: float(parse_decimal(cell, lang, field="cell"))


def parse_number(text: str, lang: Lang, *, field: str) -> float:
    """A finite number > 0 written in ``lang`` (throughputs, targets)."""
    number = parse_decimal(text, lang, field=field)
    try:
        return _validate.positive(field, float(number))
    except InvalidInput as exc:
        raise exc.as_given(field, text) from None


def parse_count(text: str, lang: Lang, *, field: str, minimum: int = 1) -> int:
    """A whole number (device counts): ``64``, ``1 024``, ``1e3``."""
    number = parse_decimal(text, lang, field=field)
    if not math.isfinite(float(number)) or number != number.to_integral_value():
        raise InvalidInput(field, text, _validate.WHOLE_NUMBER, params={"minimum": minimum})
    try:
        return _validate.whole(field, int(number), minimum=minimum)
    except InvalidInput as exc:
        raise exc.as_given(field, text) from None


def parse_efficiency(text: str, lang: Lang, *, field: str = "efficiency", in_percent: bool = False) -> float:
    """A scaling efficiency: ``90 %``/``90%`` or a fraction (``0.9``, ``0,9`` in French).

    A bare number above 1 (``90``) is ambiguous and refused with a hint, unless ``in_percent``:
    a page's field that shows its unit (%) reads it in that unit, 85 as 85 %, and says beside the
    field that a number at most 1 is a fraction.
    """
    if not isinstance(text, str):
        raise InvalidInput(field, text, "a percentage or a fraction as text")
    stripped = text.strip()
    percent_sign = _percent_sign(lang)
    is_percent = stripped.endswith((percent_sign, "%"))
    body = stripped.rstrip(percent_sign + "%").strip() if is_percent else stripped
    number = parse_decimal(body, lang, field=field)
    accepted = N_("a percentage above 0 %% and at most 100 %%, or a fraction above 0 and at most 1")
    if is_percent or (in_percent and number > 1):
        fraction = number / 100
    elif 1 < number <= 100:
        decimal = get_decimal_symbol(lang)
        written = {
            "percent": _plain(number).replace(".", decimal) + ("\u00a0%" if lang == "fr" else "%"),
            "fraction": _plain(number / 100).replace(".", decimal),
        }
        hint = N_("write %(percent)s for a percentage, or %(fraction)s as a fraction")
        raise AmbiguousInput(field, text, accepted, hint=hint, params=written)
    else:
        fraction = number
    if not (0 < fraction <= 1):
        raise InvalidInput(field, text, accepted)
    return float(fraction)


@functools.cache
def _percent_sign(lang: Lang) -> str:
    return str(babel_locale(lang).number_symbols["latn"]["percentSign"])


def _plain(number: Decimal) -> str:
    return format(number.normalize(), "f")


# --- quantities with units (durations; bandwidths and sizes for predict), read with pint ---

_NUMBER_THEN_UNIT = re.compile(r"^\s*([-+]?[\d\s\u00a0\u202f\u2009.,]*\d(?:[eE][-+]?\d+)?)\s*(.*?)\s*$")


@functools.cache
def _registry() -> Any:
    try:
        import pint
    except ImportError as exc:  # pragma: no cover - pint is a core dependency
        raise MissingExtra("reading units", package="pint") from exc
    return pint.UnitRegistry(cache_folder=None)


def parse_quantity(text: str, lang: Lang, *, field: str, unit: str, accepted: str) -> float:
    """``text`` as a number followed by a unit that converts to ``unit`` (pint's notation), in ``unit``.

    The number is read in ``lang`` with Babel (``1,5 j`` in French, ``1.5 d`` in English); the unit
    by pint. A number without a unit is refused: ``10`` seconds or ``10`` hours is a guess.
    """
    if not isinstance(text, str):
        raise InvalidInput(field, text, accepted)
    match = _NUMBER_THEN_UNIT.match(text)
    if not match or not match.group(2) or len(text) > 100:
        raise InvalidInput(field, text, accepted)
    number = float(parse_decimal(match.group(1), lang, field=field))
    name = match.group(2)
    if lang == "fr":
        from dpscale._french import FRENCH_UNITS  # quantities only: not on `dpscale scale`'s path

        name = FRENCH_UNITS.get(name, FRENCH_UNITS.get(name.lower(), name))
    registry = _registry()
    try:
        quantity = registry.Quantity(number, registry.parse_units(name))
        value = float(quantity.to(unit).magnitude)
    except Exception as exc:  # pint raises several unrelated types for unknown or mismatched units
        raise InvalidInput(field, text, accepted) from exc
    if not math.isfinite(value) or value <= 0:
        raise InvalidInput(field, text, accepted)
    return value


# Where a duration of several parts ("1h30", "2 d 4 h") is cut: before a number that follows a unit.
_NEXT_PART = re.compile(r"(?<=[^\d\s.,])\s*(?=\d)")


def parse_duration(text: str, lang: Lang, *, field: str = "deadline") -> float:
    """A duration in seconds: ``14 d``, ``36h``, ``90 min``, ``2 weeks``; in French ``14 j``, ``2 heures``.

    Several parts add up: ``2 d 4 h``, and ``1h30`` (an hour and a half: a bare number after hours
    is minutes, as it is written in French).
    """
    if lang == "fr":
        accepted = N_("a duration with its unit, such as 14 j, 36 h, 2 heures, 1h30 or 90 min")
    else:
        accepted = N_("a duration with its unit, such as 14 d, 36 h, 1h30 or 90 min")
    try:
        return parse_quantity(text, lang, field=field, unit="second", accepted=accepted)
    except InvalidInput:
        if not isinstance(text, str) or len(text) > 100:
            raise
        parts = _NEXT_PART.split(text.strip())
        if len(parts) < 2:
            raise
    last = _NUMBER_THEN_UNIT.match(parts[-1])
    if last and not last.group(2):  # a bare number: minutes after hours (1h30), else a guess
        if not parts[-2].rstrip().endswith("h"):
            raise InvalidInput(field, text, accepted)
        parts[-1] += " min"
    try:
        return sum(parse_quantity(part, lang, field=field, unit="second", accepted=accepted) for part in parts)
    except InvalidInput:
        raise InvalidInput(field, text, accepted) from None


# Network people write bits as "b" (100Gb/s, 25 Gbps); pint reads "Gb" as a gilbert. Only the
# spelling of the unit is changed here; pint still does the reading and the conversion.
_BIT_RATE = re.compile(r"(?<=[kKMGTP])b(?=/s\b|ps\b)|(?<=[kKMGTP]i)b(?=/s\b|ps\b)")
_PER_SECOND = re.compile(r"(?<=[bB])ps\b|(?<=bit)ps\b")


def _bandwidth_unit(unit: str) -> str:
    unit = _BIT_RATE.sub("bit", unit)
    return _PER_SECOND.sub("/s", unit)


def parse_bandwidth(text: str, lang: Lang, *, field: str) -> float:
    """Bytes per second from ``100Gb/s``, ``25 Gbps``, ``12.5GB/s``, ``300 GB/s``, ``1 Tbit/s``."""
    accepted = N_("a bandwidth with its unit, such as 100Gb/s, 25 Gbps or 12.5GB/s (b: bits, B: bytes)")
    if lang == "fr":
        accepted = N_("a bandwidth with its unit, such as 100 Gbit/s, 25 Gb/s or 12,5 Go/s (b, bit: bits; o, B: bytes)")
    match = _NUMBER_THEN_UNIT.match(text) if isinstance(text, str) else None
    spelled = f"{match.group(1)} {_bandwidth_unit(match.group(2))}" if match else text
    try:
        return parse_quantity(spelled, lang, field=field, unit="byte / second", accepted=accepted)
    except InvalidInput:
        raise InvalidInput(field, text, accepted) from None


def parse_reference(text: str, lang: Lang, *, field: str) -> tuple[int, float]:
    """A measurement of the whole cluster: ``8:7500`` (devices, then their throughput), ``8:7 500`` in French."""
    devices, colon, throughput = text.partition(":") if isinstance(text, str) else ("", "", "")
    if not colon:
        raise InvalidInput(
            field, text, N_("devices:throughput, the whole cluster's throughput measured on that many devices (8:7500)")
        )
    return parse_count(devices, lang, field=field), parse_number(throughput, lang, field=field)


MAX_REFERENCES = 64  # measurements one field may give: as many as device counts in one prediction


def parse_references(text: str, lang: Lang, *, field: str) -> tuple[tuple[int, float], ...]:
    """One measurement or several, separated by semicolons: ``8:7500; 64:52000`` (``8:7 500`` in French)."""
    parts = [part for part in text.split(";") if part.strip()] if isinstance(text, str) else []
    if not parts or len(parts) > MAX_REFERENCES:
        raise InvalidInput(
            field,
            text,
            N_("from 1 to %(most)s measurements devices:throughput, separated by semicolons (8:7500; 64:52000)"),
            params={"most": MAX_REFERENCES},
        )
    return tuple(parse_reference(part.strip(), lang, field=field) for part in parts)


def parse_bytes(text: str, lang: Lang, *, field: str) -> float:
    """Bytes from ``25MB``, ``25 MiB``, ``1.5 GB``."""
    accepted = N_("a size with its unit, such as 25MB or 25 MiB")
    if lang == "fr":
        accepted = N_("a size with its unit, such as 25 Mo or 25 Mio")
    return parse_quantity(text, lang, field=field, unit="byte", accepted=accepted)


def parse_seconds(text: str, lang: Lang, *, field: str) -> float:
    """Seconds from ``5us``, ``10 µs``, ``0.3 ms``."""
    accepted = N_("a time with its unit, such as 5us or 0.3 ms")
    return parse_quantity(text, lang, field=field, unit="second", accepted=accepted)


_SI_COUNT = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}


def parse_scaled_count(text: str, lang: Lang, *, field: str) -> float:
    """A count with an optional SI suffix, as model sizes are written: ``25.6M``, ``7B``, ``110e6``."""
    accepted = N_("a number, optionally followed by k, M, B (billions) or T, such as 25.6M or 7B")
    if not isinstance(text, str):
        raise InvalidInput(field, text, accepted)
    stripped = text.strip()
    factor = 1.0
    if stripped and stripped[-1] in _SI_COUNT:
        factor = _SI_COUNT[stripped[-1]]
        stripped = stripped[:-1].strip()
    try:
        value = float(parse_decimal(stripped, lang, field=field)) * factor
    except InvalidInput:
        raise InvalidInput(field, text, accepted) from None
    if not math.isfinite(value) or value <= 0:
        raise InvalidInput(field, text, accepted)
    return value


def parse_variation(text: str, lang: Lang, *, field: str = "jitter", in_percent: bool = False) -> float:
    """A coefficient of variation: ``2 %``, ``0.02``, or ``0`` for none.

    With ``in_percent`` (a page's field that shows its unit) a bare number is in that unit, however
    small: 2 is 2 % and 0.5 is 0.5 %, since a variation of a few per cent or less is the usual case
    (an efficiency, near 1, reads a bare number up to 1 as a fraction instead).
    """
    if isinstance(text, str) and text.strip().rstrip("%").strip() in ("0", "0.0", "0,0"):
        return 0.0
    if not (in_percent and isinstance(text, str)):
        return parse_efficiency(text, lang, field=field)
    stripped = text.strip()
    percent_sign = _percent_sign(lang)
    written = stripped if stripped.endswith(("%", percent_sign)) else stripped + "%"
    try:
        return parse_efficiency(written, lang, field=field)
    except InvalidInput as exc:  # about what was typed, not the % added to it
        raise exc.as_given(field, text) from None


_SWITCH = {"on": True, "off": False, "true": True, "false": False, "yes": True, "no": False, "1": True, "0": False}
_SWITCH_FR = {"oui": True, "non": False, "vrai": True, "faux": False}


def parse_switch(text: str, lang: Lang, *, field: str) -> bool:
    """``on`` or ``off`` (also true/false, yes/no, 1/0; oui/non in French)."""
    key = text.strip().lower() if isinstance(text, str) else ""
    value = _SWITCH.get(key, _SWITCH_FR.get(key) if lang == "fr" else None)
    if value is None:
        raise InvalidInput(field, text, "on or off")
    return value
