"""Checks shared by the core modules: each returns the clean value or raises InvalidInput."""

from __future__ import annotations

import functools
import math
import numbers
import re
from typing import Any

from dpscale.errors import N_, InvalidInput
from dpscale.i18n import Lang, lang_code

__all__ = [
    # what each check accepts, as its error says it (translated where shown)
    "WHOLE_NUMBER",
    "POSITIVE",
    "DEVICE_COUNT",
    "COUNT",
    "LABEL",
    "FRACTION",
    # limits
    "MAX_DEVICES",
    "LABEL_LENGTH",
    "LABEL_PATTERN",
    # the checks
    "whole",
    "count",
    "device_count",
    "positive",
    "fraction",
    "finite_result",
    "label",
    "language",
]

WHOLE_NUMBER = N_("a whole number of at least %(minimum)s")  # params={"minimum": ...}
POSITIVE = N_("a finite number greater than 0")
MAX_DEVICES = 10**9  # a device count past any cluster: beyond it predictions and charts mean nothing
DEVICE_COUNT = N_("a device count from 1 to a billion (10⁹)")
COUNT = N_("a whole number from 1 to a billion (10⁹)")
LABEL_LENGTH = 40
# What a label may not hold: control characters, zero-width and bidirectional controls, line and
# paragraph separators, the byte-order mark and non-characters. Such text breaks a table or a log
# line, hides what it says, or makes the chart renderer abort (XML forbids several). Written with
# \u escapes so that the same text is a Python, a Rust (pydantic) and an ECMAScript (OpenAPI)
# pattern; lone surrogates, which no UTF-8 request can carry, are refused apart.
_NOT_IN_LABEL = r"\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufdd0-\ufdef\ufffe\uffff"
LABEL_PATTERN = rf"^[^{_NOT_IN_LABEL}]*[^{_NOT_IN_LABEL}\s][^{_NOT_IN_LABEL}]*$"  # and something to see


@functools.cache
def _label() -> re.Pattern[str]:  # compiled when a label is first checked, not at import (½ ms)
    return re.compile(LABEL_PATTERN)


LABEL = N_("a label of 1 to %(most)s printable characters, such as samples/s or tokens/s")
FRACTION = N_("a fraction greater than 0 and at most 1 (0.9 means 90%%)")


def whole(field: str, value: Any, *, minimum: int = 1) -> int:
    """A whole number ≥ minimum; 4.0 is fine, 4.5, True, NaN and ∞ are not."""
    if type(value) is int and value >= minimum:  # the usual case, before the abstract checks
        return value
    at_least = {"minimum": minimum}
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidInput(field, value, WHOLE_NUMBER, params=at_least)
    if isinstance(value, numbers.Integral):
        number = int(value)
    else:
        real = float(value)
        if not math.isfinite(real) or not real.is_integer():
            raise InvalidInput(field, value, WHOLE_NUMBER, params=at_least)
        number = int(real)
    if number < minimum:
        raise InvalidInput(field, value, WHOLE_NUMBER, params=at_least)
    return number


def count(field: str, value: Any, *, accepted: str = COUNT) -> int:
    """A whole number of things (micro-batches, chunks), from 1 to a billion."""
    number = whole(field, value)
    if number > MAX_DEVICES:
        raise InvalidInput(field, value, accepted)
    return number


def device_count(field: str, value: Any) -> int:
    """A whole number of devices, from 1 to a billion (MAX_DEVICES)."""
    return count(field, value, accepted=DEVICE_COUNT)


def positive(field: str, value: Any) -> float:
    """A finite real number > 0."""
    if type(value) is float and 0 < value < math.inf:  # the usual case, before the abstract checks
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidInput(field, value, POSITIVE)
    real = float(value)
    if not math.isfinite(real) or real <= 0:
        raise InvalidInput(field, value, POSITIVE)
    return real


def fraction(field: str, value: Any) -> float:
    """A number in (0, 1]: an efficiency, a share of time."""
    if type(value) is float and 0 < value <= 1:  # the usual case, before the abstract checks
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidInput(field, value, FRACTION)
    real = float(value)
    if not (0 < real <= 1):  # also false for NaN
        if 1 < real <= 100:
            raise InvalidInput(
                field, value, FRACTION, hint=N_("did you mean %(fraction)s?"), params={"fraction": f"{real / 100:g}"}
            )
        raise InvalidInput(field, value, FRACTION)
    return real


def finite_result(field: str, value: Any, result: float) -> float:
    """Refuse inputs so large that the arithmetic overflows, rather than return ∞."""
    if not math.isfinite(result):
        raise InvalidInput(field, value, "a value small enough that the results stay finite")
    return result


def label(field: str, value: Any) -> str:
    """A short one-line label (a unit, a name), spaces trimmed: see :data:`LABEL_PATTERN`."""
    trimmed = _fine_label(str(value)) if isinstance(value, str) and len(value) <= LABEL_LENGTH else None
    if trimmed is None:
        raise InvalidInput(field, value, LABEL, params={"most": LABEL_LENGTH})
    return trimmed


@functools.lru_cache(maxsize=256)  # a few units and currencies come again and again (samples/s, EUR)
def _fine_label(value: str) -> str | None:
    """``value`` trimmed where it is a label, else None."""
    if not _label().fullmatch(value) or (not value.isascii() and any("\ud800" <= char <= "\udfff" for char in value)):
        return None
    return value.strip()


def language(value: object, field: str = "lang") -> Lang:
    """``fr`` or ``en`` (``fr_FR``, ``en-GB`` and the like reduce to their language)."""
    code = lang_code(value)
    if code is None:
        raise InvalidInput(field, value, "fr or en")
    return code
