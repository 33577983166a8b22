"""Numbers as people type them, in French or English, read with Babel's locale data.

``2 000`` (space, no-break space or narrow no-break space), ``2,000`` in English, ``0,9`` in
French, ``90 %``, ``1e3``. An efficiency needs a percent sign or a fraction: a bare ``90`` is
refused with a hint, never guessed.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation

from babel import Locale
from babel.numbers import NumberFormatError, get_decimal_symbol, get_group_symbol
from babel.numbers import parse_decimal as _babel_parse_decimal

from dpscale import _validate
from dpscale.errors import AmbiguousInput, InvalidInput
from dpscale.i18n import Lang, language_name

__all__ = ["parse_count", "parse_efficiency", "parse_number"]

# Characters people type between groups of digits; all read as the locale's group symbol.
_SPACES = (" ", "\u00a0", "\u202f", "\u2009")


def _examples(lang: Lang) -> str:
    return "2 000, 0,9 or 1e3" if lang == "fr" else "2,000, 0.9 or 1e3"


def parse_decimal(text: str, lang: Lang, *, field: str) -> Decimal:
    """Read ``text`` as a decimal number in ``lang``; InvalidInput naming ``field`` if it is not one."""
    if not isinstance(text, str):
        raise InvalidInput(field, text, "a number as text")
    cleaned = text.strip()
    group = get_group_symbol(lang)
    for space in _SPACES:
        cleaned = cleaned.replace(space, group)
    accepted = f"a number written in {language_name(lang)}, such as {_examples(lang)}"
    if not cleaned or len(cleaned) > 100:
        raise InvalidInput(field, text, accepted)
    try:
        # strict: misplaced group symbols ("0,9" in English) are errors, not silently dropped.
        number = _babel_parse_decimal(cleaned, locale=lang, strict=True)
    except (NumberFormatError, InvalidOperation, ValueError) as exc:
        hint = None
        if lang == "en" and get_decimal_symbol("fr") in text.strip():
            hint = "English writes decimals with a point: 0.9; read as French, it would be accepted"
        raise InvalidInput(field, text, accepted, hint=hint) from exc
    if not number.is_finite():
        raise InvalidInput(field, text, accepted)
    return number


def parse_number(text: str, lang: Lang, *, field: str) -> float:
    """A finite number > 0 written in ``lang`` (throughputs, targets)."""
    number = parse_decimal(text, lang, field=field)
    try:
        return _validate.positive(field, float(number))
    except InvalidInput as exc:
        raise InvalidInput(field, text, exc.accepted) from None


def parse_count(text: str, lang: Lang, *, field: str, minimum: int = 1) -> int:
    """A whole number (device counts): ``64``, ``1 024``, ``1e3``."""
    number = parse_decimal(text, lang, field=field)
    if not math.isfinite(float(number)) or number != number.to_integral_value():
        raise InvalidInput(field, text, _validate.WHOLE_NUMBER.format(minimum=minimum))
    try:
        return _validate.whole(field, int(number), minimum=minimum)
    except InvalidInput as exc:
        raise InvalidInput(field, text, exc.accepted) from None


def parse_efficiency(text: str, lang: Lang, *, field: str = "efficiency") -> float:
    """A scaling efficiency: ``90 %``/``90%`` or a fraction (``0.9``, ``0,9`` in French).

    A bare number above 1 (``90``) is ambiguous and refused with a hint.
    """
    if not isinstance(text, str):
        raise InvalidInput(field, text, "a percentage or a fraction as text")
    stripped = text.strip()
    percent_sign = Locale.parse(lang).number_symbols["latn"]["percentSign"]
    is_percent = stripped.endswith((percent_sign, "%"))
    body = stripped.rstrip(percent_sign + "%").strip() if is_percent else stripped
    number = parse_decimal(body, lang, field=field)
    accepted = "a percentage above 0 % and at most 100 %, or a fraction above 0 and at most 1"
    if is_percent:
        fraction = number / 100
    elif 1 < number <= 100:
        hint = f"write {_plain(number)}% for a percentage, or {_plain(number / 100)} as a fraction"
        raise AmbiguousInput(field, text, accepted, hint=hint)
    else:
        fraction = number
    if not (0 < fraction <= 1):
        raise InvalidInput(field, text, accepted)
    return float(fraction)


def _plain(number: Decimal) -> str:
    return format(number.normalize(), "f")
