from __future__ import annotations

import decimal
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpscale.format import (
    format_duration,
    format_energy,
    format_milliseconds,
    format_money,
    format_number,
    format_percent,
    format_points,
    format_speedup,
)
from dpscale.i18n import Lang

NBSP, NNBSP = "\u00a0", "\u202f"


@pytest.mark.parametrize(
    ("x", "lang", "text"),
    [
        (128_000, "fr", f"128{NNBSP}000"),
        (115_200.0, "fr", f"115{NNBSP}200"),
        (128_000, "en", "128,000"),
        (115_200.0, "en", "115,200"),
        (57.6, "fr", "57,6"),
        (57.6, "en", "57.6"),
        (1736.1111111, "en", "1,736.111"),
        (0.000123456, "en", "0.0001235"),
        (0, "en", "0"),
    ],
)
def test_format_number(x: float, lang: Lang, text: str) -> None:
    assert format_number(x, lang) == text


def test_format_speedup() -> None:
    assert format_speedup(57.6, "fr") == f"57,6{NBSP}×"
    assert format_speedup(57.6, "en") == "57.6×"


@pytest.mark.parametrize(
    ("x", "lang", "text"), [(0.9, "fr", f"90{NBSP}%"), (0.9, "en", "90%"), (0.966, "fr", f"96,6{NBSP}%")]
)
def test_format_percent(x: float, lang: Lang, text: str) -> None:
    assert format_percent(x, lang) == text


def test_exact_keeps_every_digit() -> None:
    assert format_number(0.1 + 0.2, "en", exact=True) == "0.30000000000000004"


@pytest.mark.parametrize(
    ("seconds", "fr", "en"),
    [
        (0.25, "0,25\u202fs", "0.25 sec"),
        (61, "1\u00a0min 1\u202fs", "1 min 1 sec"),
        (11127, "3\u202fh 5\u00a0min", "3 hr 5 min"),
        (86400 * 3 + 3600 * 4.4, "3\u202fj 4\u202fh", "3 days 4 hr"),
        (3600, "1\u202fh", "1 hr"),
    ],
)
def test_format_duration(seconds: float, fr: str, en: str) -> None:
    from dpscale.format import format_duration

    assert format_duration(seconds, "fr") == fr
    assert format_duration(seconds, "en") == en


def test_format_money_and_energy() -> None:
    from dpscale.format import format_energy, format_money

    assert format_money(308.6, "USD", "en") == "$308.60"
    assert format_money(308.6, "EUR", "fr") == "308,60\u00a0€"
    assert format_energy(1234.56, "en") == "1,234.6 kWh"


@pytest.mark.parametrize(("x", "lang", "text"), [(1e27, "en", "1E27"), (1.2345e27, "fr", "1,234E27")])
def test_huge_numbers_are_written_short(x: float, lang: Lang, text: str) -> None:
    assert format_number(x, lang) == text
    assert format_number(9.99e24, "en") == "9,990,000,000,000,000,000,000,000"  # below 1E25: every digit


@given(
    st.floats(min_value=0, max_value=1.7e308, allow_nan=False, allow_infinity=False),
    st.sampled_from(["fr", "en"]),
)
def test_every_finite_magnitude_is_written(x: float, lang: Lang) -> None:
    # Babel formats through decimal, whose default 28 digits once made 1e27 raise InvalidOperation.
    for text in (
        format_number(x, lang),
        format_percent(x, lang),
        format_speedup(x, lang),
        format_money(x, "EUR", lang),
        format_energy(x, lang),
        format_milliseconds(x, lang),
        format_points(x, lang),
    ):
        assert text
        assert "nan" not in text.lower()


@pytest.mark.parametrize(
    ("call", "text"),
    [
        (lambda: format_number(1e-320, "en"), "1E-320"),
        (lambda: format_number(5.76e-318, "fr"), "5,76E-318"),
        (lambda: format_milliseconds(1e300, "en"), "1E303 ms"),
        (lambda: format_milliseconds(1e-320, "en"), "1E-317 ms"),
        (lambda: format_milliseconds(0.000123, "fr"), f"0,123{NNBSP}ms"),
        (lambda: format_duration(1e300, "en"), "1.16E295 days"),
        (lambda: format_duration(1e-320, "en"), "1E-320 sec"),
    ],
)
def test_tiny_and_huge_times_are_written_short(call: Callable[[], str], text: str) -> None:
    assert call() == text  # never "0" for a value above 0, never 300 digits


def test_milliseconds_keep_three_significant_digits_at_every_size() -> None:
    from dpscale.format import format_milliseconds

    shown = [format_milliseconds(s, "en") for s in (0.0001127, 0.00113, 0.0113, 0.2841)]
    assert shown == ["0.113 ms", "1.13 ms", "11.3 ms", "284 ms"]


def test_points_take_the_sign_of_what_is_shown() -> None:
    from dpscale.format import format_points

    assert format_points(0.00001, "en") == "±0.0"
    assert format_points(-0.00001, "fr") == "±0,0"
    assert format_points(0.0006, "en") == "+0.1"


@pytest.mark.parametrize(
    ("r2", "text"), [(0.999983, "0.999983"), (0.95, "0.95"), (1.0, "1"), (0.9999999999, "0.99999999")]
)
def test_r2_keeps_the_digits_that_tell_fits_apart(r2: float, text: str) -> None:
    from dpscale.format import format_r2

    assert format_r2(r2, "en") == text


@given(
    st.one_of(
        st.floats(min_value=-1e24, max_value=1e24, allow_nan=False).filter(lambda x: x == 0 or abs(x) >= 1e-9),
        st.integers(min_value=-(10**20), max_value=10**20),
    ),
    st.sampled_from(["fr", "en"]),
    st.integers(min_value=0, max_value=6),
)
def test_numbers_are_written_as_babel_writes_them(x: float, lang: Lang, decimals: int) -> None:
    # format_number writes the usual numbers itself, for speed: exactly what Babel's pattern gives.
    from babel.numbers import format_decimal

    from dpscale.format import _pattern
    from dpscale.i18n import babel_locale

    with decimal.localcontext() as context:
        context.prec = 400
        expected = format_decimal(x, format=_pattern(x, decimals), locale=babel_locale(lang))
    assert format_number(x, lang, decimals=decimals) == expected


def test_memory_reads_in_gib_and_under_one_in_mib() -> None:
    from dpscale.format import format_memory

    assert format_memory(80 * 2**30, "en") == "80.0\u00a0GiB"
    assert format_memory(14.96 * 2**30, "fr") == "15,0\u00a0Gio"
    assert format_memory(409.6e6, "en") == "390.6\u00a0MiB"  # not 0.4 GiB
    assert format_memory(0, "fr") == "0,0\u00a0Mio"


def test_memory_that_is_not_a_size_is_written_not_raised() -> None:
    from dpscale.format import format_memory

    assert format_memory(-5e9, "en") == "-4.7\u00a0GiB"
    assert "Gio" in format_memory(float("nan"), "fr")


def test_bandwidth_reads_in_gb_per_second_as_nccl_tests_prints_it() -> None:
    from dpscale.format import format_gigabytes_per_second

    assert format_gigabytes_per_second(12.5e9, "en", decimals=1) == "12.5"
    assert format_gigabytes_per_second(123_456.789e9, "fr", decimals=3) == "123\u202f456,789"
    assert format_gigabytes_per_second(0.0123e9, "en", decimals=1) == "0.0123"  # below 1, significant digits kept


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_a_kept_number_is_written_as_its_own_value(lang: Lang) -> None:
    # The texts kept per (value, language, decimals) never stand in for an equal value of another kind:
    # 1 and 1.0, 0 and -0.0, True and 1 read as each would alone; NaN, never equal to itself, still reads.
    for _ in range(2):  # the second time from what was kept
        assert format_number(0.0, lang) == "0"
        assert format_number(-0.0, lang) == "-0"
        assert format_number(0, lang) == "0"
        assert format_number(1.5, lang, decimals=0) == "2"
        assert format_number(1.5, lang, decimals=1) == ("1,5" if lang == "fr" else "1.5")
        assert format_number(float("nan"), lang) == "NaN"
        assert format_percent(0.5, lang, decimals=0) == ("50\u00a0%" if lang == "fr" else "50%")
        assert format_percent(0.505, lang, decimals=1) == ("50,5\u00a0%" if lang == "fr" else "50.5%")


@given(st.floats(allow_nan=False), st.sampled_from(["fr", "en"]), st.integers(min_value=0, max_value=4))
def test_a_kept_text_is_what_writing_gives(x: float, lang: Lang, decimals: int) -> None:
    from dpscale.format import _format_number, _format_percent

    for _ in range(2):
        assert format_number(x, lang, decimals=decimals) == _format_number(x, lang, exact=False, decimals=decimals)
        assert format_percent(x, lang, decimals=decimals) == _format_percent(x, lang, decimals)
