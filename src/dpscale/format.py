"""Numbers as people read them, in French or English, written with Babel's locale data.

French ``128 000``, ``57,6 ×``, ``90 %``; English ``128,000``, ``57.6×``, ``90%``.
"""

from __future__ import annotations

import decimal
import functools
import math
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from babel.numbers import NumberPattern, format_decimal, format_scientific, parse_pattern
from babel.numbers import format_percent as _babel_format_percent

from dpscale.i18n import Lang, babel_locale

__all__ = [
    "format_duration",
    "format_estimate",
    "format_energy",
    "format_gigabytes_per_second",
    "format_memory",
    "format_milliseconds",
    "format_money",
    "format_number",
    "format_percent",
    "format_points",
    "format_r2",
    "format_speedup",
]

_MAX_DECIMALS = 3  # for display: 115 200 samples/s, 57,6 ×, 0,125 s
_HUGE = 1e25  # from here on a number is shown as 1,2E27: all its digits would say nothing more
_TINY = 1e-9  # below this (and above 0), 1,2E-12: fifteen decimals would still show 0
_LONG_MS = 1e6  # from here on a step time reads 1,2E9 ms: a thousand seconds, no step is that long
_LONG_DAYS = 1e6  # about 2 700 years
_ROOMY = 1e15  # below this, any value times 1000 with 6 decimals fits decimal's default 28 digits

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _any_magnitude(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run ``fn`` with room for every digit of a float (up to 1.8E308 and its decimals).

    Babel formats through decimal, whose default 28 digits cannot hold 1e27 with 3 decimals:
    it would raise InvalidOperation instead of writing the number.
    """

    @functools.wraps(fn)
    def wide(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        x = args[0] if args else 0
        if isinstance(x, int | float) and abs(x) < _ROOMY:  # the usual case: the default context holds it
            return fn(*args, **kwargs)
        with decimal.localcontext() as context:
            context.prec = 400
            return fn(*args, **kwargs)

    return wide


@functools.cache
def _parsed(pattern: str) -> NumberPattern:
    # Parsing a pattern costs more than applying it; a page formats dozens of numbers.
    return parse_pattern(pattern)


def _pattern_text(x: float, decimals: int) -> str:
    # Small numbers keep four significant digits instead of rounding to 0.
    if x and abs(x) < 1:
        decimals = max(decimals, min(15, 3 - math.floor(math.log10(abs(x)))))
    return "#,##0." + "#" * decimals if decimals else "#,##0"


def _pattern(x: float, decimals: int) -> NumberPattern:
    return _parsed(_pattern_text(x, decimals))


def format_number(x: float, lang: Lang, *, exact: bool = False, decimals: int = _MAX_DECIMALS) -> str:
    """``x`` for display (at most ``decimals`` decimals) or, with ``exact``, every digit of its repr."""
    if not exact and _keepable(x):
        return _number_kept(x, lang, decimals)
    return _format_number(x, lang, exact=exact, decimals=decimals)


# A page writes the same few numbers several times (its results, their worked example, a chart's caption),
# and every request the same defaults: a float's or an int's text is kept per (value, language, decimals).
_KEPT = 4096


def _keepable(x: object) -> bool:
    """Whether ``x``'s text may be kept: a plain float or int, not 0 (``-0.0 == 0``, kept apart otherwise) or
    NaN (never equal to itself, so never found again). A bool, a numpy scalar, a Decimal are written each time."""
    return (type(x) is float or type(x) is int) and x != 0 and x == x


@functools.lru_cache(maxsize=_KEPT, typed=True)
def _number_kept(x: float, lang: Lang, decimals: int) -> str:
    return _format_number(x, lang, exact=False, decimals=decimals)


@_any_magnitude
def _format_number(x: float, lang: Lang, *, exact: bool, decimals: int) -> str:
    if exact:
        if x and not (1e-6 <= abs(x) < 1e15):  # keep extreme magnitudes short: 1,5E-259
            return format_scientific(x, format="0.#################E0", locale=lang, decimal_quantization=False)
        return format_decimal(x, locale=lang, decimal_quantization=False, group_separator=True)
    if (abs(x) >= _HUGE or 0 < abs(x) < _TINY) and math.isfinite(x):
        return format_scientific(x, format="0.###E0", locale=babel_locale(lang))
    if type(x) in (int, float) and math.isfinite(x):
        return _grouped(x, lang, decimals)
    return format_decimal(x, format=_pattern(x, decimals), locale=babel_locale(lang))


@functools.cache
def _symbols(lang: Lang) -> tuple[str, str, str]:
    symbols = babel_locale(lang).number_symbols["latn"]
    return symbols["group"], symbols["decimal"], symbols["minusSign"]


def _grouped(x: float, lang: Lang, decimals: int) -> str:
    """What Babel writes for the pattern ``#,##0.###`` of :func:`_pattern_text`, without its per-call
    pattern machinery (a page writes dozens of numbers): the same decimal, rounded half to even."""
    places = decimals
    if x and abs(x) < 1:  # small numbers keep four significant digits, as _pattern_text says
        places = max(decimals, min(15, 3 - math.floor(math.log10(abs(x)))))
    exact = decimal.Decimal(repr(x)) if isinstance(x, float) else decimal.Decimal(x)
    rounded = exact.quantize(_STEPS[places], rounding=decimal.ROUND_HALF_EVEN)
    text = format(abs(rounded), ",f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    group, point, minus = _symbols(lang)
    text = text.replace(",", "\x00").replace(".", point).replace("\x00", group)
    return minus + text if rounded.is_signed() else text


_STEPS = [decimal.Decimal(1).scaleb(-places) for places in range(16)]


def format_estimate(value: float, error: float | None, lang: Lang) -> str:
    """A fitted value and its standard error, to the error's two significant digits: ``364.13 ± 0.47``.

    The value keeps no digit its error makes meaningless (``0 ± 0.000056``, not ``5.4E-23 ± …``).
    """
    if error is None or not math.isfinite(error) or error <= 0 or not math.isfinite(value):
        return format_number(value, lang, decimals=4)
    place = 1 - math.floor(math.log10(error))  # decimals that keep two digits of the error
    decimals = max(0, min(place, 15))
    if math.log10(max(abs(value), error)) + decimals > 24:  # more digits than anyone reads: as they come
        return f"{format_number(value, lang, decimals=4)} ± {format_number(error, lang, decimals=4)}"
    value_text = format_number(round(value, place) + 0.0, lang, decimals=decimals)  # + 0.0: no "-0"
    return f"{value_text} ± {format_number(round(error, place), lang, decimals=decimals)}"


def format_r2(r2: float, lang: Lang) -> str:
    """R² with the digits that tell close fits apart: ``0.99998`` rather than a rounded ``1``.

    As many decimals as reach the first digit of 1 − R² and one more (3 to 8); ``1`` only when exact.
    """
    if not math.isfinite(r2):
        return "—"
    if r2 >= 1:
        return format_number(1, lang)
    decimals = min(8, max(3, math.ceil(-math.log10(1 - r2)) + 1))
    return format_number(math.floor(r2 * 10**decimals) / 10**decimals, lang, decimals=decimals)  # never up to 1


def format_percent(fraction: float, lang: Lang, *, decimals: int = 1) -> str:
    """0.9 → ``90 %`` (fr) or ``90%`` (en); at most ``decimals`` decimals of a percent."""
    if _keepable(fraction):
        return _percent_kept(fraction, lang, decimals)
    return _format_percent(fraction, lang, decimals)


@functools.lru_cache(maxsize=_KEPT, typed=True)
def _percent_kept(fraction: float, lang: Lang, decimals: int) -> str:
    return _format_percent(fraction, lang, decimals)


@_any_magnitude
def _format_percent(fraction: float, lang: Lang, decimals: int) -> str:
    pattern = "#,##0." + "#" * decimals + "%" if decimals else "#,##0%"
    text = _babel_format_percent(fraction, format=_parsed(pattern), locale=babel_locale(lang))
    if lang == "fr":  # CLDR's French pattern puts a no-break space before the sign
        text = text.replace("%", "\u00a0%") if "\u00a0%" not in text else text
    return text


def format_speedup(speedup: float, lang: Lang, *, decimals: int = _MAX_DECIMALS) -> str:
    """57.6 → ``57,6 ×`` (fr, no-break space) or ``57.6×`` (en)."""
    number = format_number(speedup, lang, decimals=decimals)
    return f"{number}\u00a0×" if lang == "fr" else f"{number}×"


_DURATION_UNITS = (("duration-day", 86_400), ("duration-hour", 3_600), ("duration-minute", 60), ("duration-second", 1))


@_any_magnitude
def format_duration(seconds: float, lang: Lang) -> str:
    """A duration in its two largest units, rounded to the smaller: ``3 days 4 hr``, ``3 j 4 h``.

    Under a minute it keeps decimals (``0.25 sec``); a run of weeks still reads in days.
    """
    from babel.units import format_unit

    if seconds >= _LONG_DAYS * 86_400:  # 1,2E12 d: every digit of the days would say nothing more
        days = decimal.Decimal(repr(float(seconds))) / 86_400
        return str(format_unit(days, "duration-day", "short", format="0.##E0", locale=babel_locale(lang)))
    if seconds < 60:
        pattern = "0.##E0" if 0 < seconds < _TINY else _pattern_text(seconds, _MAX_DECIMALS)
        return str(format_unit(seconds, "duration-second", "short", format=pattern, locale=babel_locale(lang)))
    for i, (unit, size) in enumerate(_DURATION_UNITS[:-1]):
        if seconds >= size:
            small_unit, small_size = _DURATION_UNITS[i + 1]
            total = round(seconds / small_size)
            per = size // small_size
            big, small = divmod(total, per)
            parts = [format_unit(big, unit, "short", locale=babel_locale(lang))]
            if small:
                parts.append(format_unit(small, small_unit, "short", locale=babel_locale(lang)))
            return " ".join(parts)
    raise AssertionError("unreachable")  # pragma: no cover


@_any_magnitude
def format_money(amount: float, currency: str, lang: Lang) -> str:
    """``$308.64`` (en), ``308,64 $US`` (fr): the locale's way of writing an amount."""
    from babel.numbers import format_currency

    return str(format_currency(amount, currency, locale=babel_locale(lang)))


@_any_magnitude
def format_energy(kwh: float, lang: Lang) -> str:
    """Kilowatt-hours with the locale's unit symbol: ``1,234 kWh``, ``1 234 kWh``."""
    from babel.units import format_unit

    return str(format_unit(kwh, "energy-kilowatt-hour", "short", format="#,##0.#", locale=babel_locale(lang)))


@_any_magnitude
def format_milliseconds(seconds: float, lang: Lang) -> str:
    """A step-sized time in milliseconds, three significant digits: ``284 ms``, ``11.1 ms``, ``0.229 ms``."""
    ms = decimal.Decimal(repr(float(seconds))) * 1000  # as written, and no float overflow to infinity
    # Three significant digits at every size, so that a column reads alike: 0.113 ms beside 1.13 ms.
    if ms >= _LONG_MS or 0 < ms < _TINY:
        pattern = "0.##E0"
    else:
        decimals = max(0, 2 - math.floor(math.log10(ms))) if ms > 0 else 0
        pattern = "#,##0." + "#" * decimals if decimals else "#,##0"
    locale = babel_locale(lang)
    patterns = _unit_patterns("duration-millisecond", lang)
    text = _parsed(pattern).apply(ms, locale)  # what format_unit's format_decimal writes
    return str((patterns.get(locale.plural_form(ms)) or patterns["other"]).format(text))


@functools.cache
def _unit_patterns(unit: str, lang: Lang) -> dict[str, str]:
    """The short patterns of ``unit`` in ``lang`` by plural form, as babel's format_unit finds them."""
    from babel.units import _find_unit_pattern

    locale = babel_locale(lang)
    found = _find_unit_pattern(unit, locale=locale)
    if found is None:  # pragma: no cover - a unit of CLDR's, named in this module
        raise LookupError(unit)
    return dict(locale._data["unit_patterns"][found]["short"])


def format_gigabytes_per_second(bytes_per_second: float, lang: Lang, *, decimals: int) -> str:
    """A bandwidth in bytes per second, written in GB/s (the unit nccl-tests prints) without the unit: ``12.5``."""
    return format_number(bytes_per_second / 1e9, lang, decimals=decimals)


@_any_magnitude
def format_points(fraction: float, lang: Lang) -> str:
    """A change of efficiency in percentage points, signed: ``+5.3``, ``−10,2``."""
    text = format_decimal(abs(decimal.Decimal(fraction)) * 100, format=_parsed("0.0"), locale=babel_locale(lang))
    shown = round(fraction * 100, 1)  # the sign of what is shown: ±0.0, not +0.0 for a gain of 0.001 point
    sign = "+" if shown > 0 else "−" if shown < 0 else "±"
    return f"{sign}{text}"


@_any_magnitude
def format_memory(nbytes: float, lang: Lang) -> str:
    """Bytes in binary gigabytes, one decimal (``14.9 GiB``, ``14,9 Gio``: the French symbol); under
    one, in binary megabytes (``390.6 MiB``, ``390,6 Mio``), so that a small model does not read 0."""
    size = decimal.Decimal(repr(float(nbytes)))
    giga = not size.is_finite() or abs(size) >= 2**30
    number = format_decimal(size / (2**30 if giga else 2**20), format=_parsed("#,##0.0"), locale=babel_locale(lang))
    unit = ("Gio" if giga else "Mio") if lang == "fr" else ("GiB" if giga else "MiB")
    return f"{number}\u00a0{unit}"
