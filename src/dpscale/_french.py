"""How French writes what English writes otherwise: unit names, and a comma that may be a slip.

The readers of :mod:`dpscale.parse` use these on the French pages and with ``--lang fr``.
"""

from __future__ import annotations

import re
from decimal import Decimal

from dpscale.i18n import Lang

__all__ = ["FRENCH_UNITS", "respelled", "thousands_reading"]

# French words and symbols pint does not know, mapped to the names it does.
FRENCH_UNITS = {
    "j": "day",
    "jour": "day",
    "jours": "day",
    "semaine": "week",
    "semaines": "week",
    "an": "year",
    "ans": "year",
    "année": "year",
    "années": "year",
    "mois": "month",
    "heure": "hour",
    "heures": "hour",
    "seconde": "second",
    "secondes": "second",
    "µs": "microsecond",
    "μs": "microsecond",
    "Go/s": "GB/s",
    "Mo/s": "MB/s",
    "To/s": "TB/s",
    "Go": "GB",
    "Mo": "MB",
    "Ko": "kB",
    "Gio": "GiB",
    "Mio": "MiB",
    "Kio": "KiB",
}


# A comma then exactly three digits (2,500; 1 000,250 Go/s): French reads a decimal comma, where
# English habit meant thousands.
_COMMA_THREE = re.compile(r"(?<![\d,.])(\d{1,3}(?:[ \u00a0\u202f\u2009]\d{3})*|\d+),(\d{3})(?![\d,.])")


def thousands_reading(text: str, lang: Lang) -> tuple[str, str] | None:
    """On a French page, ``text`` with a comma followed by exactly three digits: how it was read, and
    the other reading (``2,500`` → ``("2,5", "2 500")``); None where no such comma is.

    The value is read as French writes it; the page shows both so that a thousandfold slip is seen.
    """
    if lang != "fr" or not isinstance(text, str) or len(text) > 100 or "," not in text:  # most texts: no comma
        return None
    found = _COMMA_THREE.search(text)
    if found is None or not found.group(1).strip("0"):  # 0,250: no one writes 250 that way
        return None
    whole = re.sub(r"\D", "", found.group(1))
    decimal = format(Decimal(f"{whole}.{found.group(2)}").normalize(), "f").replace(".", ",")
    read = _group_thousands(whole) + decimal[len(whole) :] if decimal.startswith(whole) else decimal
    other = _group_thousands(whole + found.group(2))
    start, end = found.span()
    return text[:start] + read + text[end:], text[:start] + other + text[end:]


def _group_thousands(digits: str) -> str:
    digits = digits.lstrip("0") or "0"
    groups = [digits[max(0, i - 3) : i] for i in range(len(digits), 0, -3)][::-1]
    return "\u202f".join(groups)


# The same units as each language writes them on a page, for the language switch.
_TO_ENGLISH = {
    "j": "d",
    "jour": "day",
    "jours": "days",
    "heure": "hour",
    "heures": "hours",
    "seconde": "second",
    "secondes": "seconds",
    "semaine": "week",
    "semaines": "weeks",
    "an": "year",
    "ans": "years",
    "année": "year",
    "années": "years",
    **{french: english for french, english in FRENCH_UNITS.items() if french.endswith(("o", "o/s"))},  # Go, Gio …
}
_TO_FRENCH = {english: french for french, english in _TO_ENGLISH.items()}
_NUMBER_THEN_REST = re.compile(r"^\s*([-+]?[\d \u00a0\u202f\u2009.,]*\d(?:[eE][-+]?\d+)?)(\s*)([^\d\s,.].*?)\s*$")
_GROUP_SPACES = re.compile(r"[ \u00a0\u202f\u2009]")


def respelled(text: str, source: Lang, target: Lang) -> str | None:
    """A number and its unit or suffix as ``target`` writes them, the way it was typed otherwise kept:
    ``1,5 j`` → ``1.5 d``, ``80 Go`` → ``80 GB``, ``25,6M`` → ``25.6M`` (and back). None where
    ``text`` is not a number followed by something; the caller checks that it reads the same."""
    found = _NUMBER_THEN_REST.match(text) if len(text) <= 100 else None
    if found is None or source == target:
        return None
    number, gap, rest = found.groups()
    if source == "fr":
        number = _GROUP_SPACES.sub("", number).replace(",", ".")
        rest = _TO_ENGLISH.get(rest, rest)
    else:
        number = number.replace(",", "").replace(".", ",")
        rest = _TO_FRENCH.get(rest, rest)
    return number + gap + rest
