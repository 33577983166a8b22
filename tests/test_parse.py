from __future__ import annotations

import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dpscale import AmbiguousInput, InvalidInput
from dpscale.format import format_number, format_percent
from dpscale.i18n import Lang
from dpscale.parse import parse_count, parse_decimal, parse_efficiency, parse_number

NBSP, NNBSP = "\u00a0", "\u202f"


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("2000", "en", 2000),
        ("2,000", "en", 2000),
        ("2 000", "en", 2000),
        ("2 000", "fr", 2000),
        (f"2{NBSP}000", "fr", 2000),
        (f"2{NNBSP}000", "fr", 2000),
        ("2,5", "fr", 2.5),
        ("0,9", "fr", 0.9),
        ("0.9", "en", 0.9),
        ("0.9", "fr", 0.9),  # a point is never a group separator in French
        ("1e3", "en", 1000),
        ("1e3", "fr", 1000),
        ("  12 800  ", "fr", 12800),
        ("1,234,567.5", "en", 1234567.5),
    ],
)
def test_parse_number(text: str, lang: Lang, expected: float) -> None:
    assert parse_number(text, lang, field="per_device_throughput") == expected


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("0,9", "en"),
        ("abc", "en"),
        ("", "fr"),
        ("20 00", "en"),
        ("1,2,3", "en"),
        ("0", "en"),
        ("-5", "fr"),
        ("nan", "en"),
        ("inf", "en"),
        ("90%", "en"),
        ("1" * 200, "en"),
    ],
)
def test_parse_number_rejects(text: str, lang: Lang) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_number(text, lang, field="per_device_throughput")
    assert caught.value.field == "per_device_throughput"
    assert caught.value.value == text


def test_english_comma_decimal_gets_a_hint() -> None:
    with pytest.raises(InvalidInput, match="point"):
        parse_number("0,9", "en", field="x")


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("90 %", "fr", 0.9),
        (f"90{NBSP}%", "fr", 0.9),
        ("90%", "fr", 0.9),
        ("90%", "en", 0.9),
        ("90 %", "en", 0.9),
        ("0,9", "fr", 0.9),
        ("0.9", "en", 0.9),
        ("1", "en", 1.0),
        ("100%", "en", 1.0),
        ("96,6 %", "fr", 0.966),
        ("12.5%", "en", 0.125),
    ],
)
def test_parse_efficiency(text: str, lang: Lang, expected: float) -> None:
    assert parse_efficiency(text, lang) == expected


def test_bare_90_is_ambiguous_and_suggests_both_spellings() -> None:
    with pytest.raises(AmbiguousInput) as caught:
        parse_efficiency("90", "en")
    assert caught.value.field == "efficiency"
    assert "90%" in str(caught.value)
    assert "0.9" in str(caught.value)


@pytest.mark.parametrize("text", ["0", "0%", "101%", "150", "-0.5", "abc", "%", "1e3"])
def test_parse_efficiency_rejects(text: str) -> None:
    with pytest.raises(InvalidInput):
        parse_efficiency(text, "en")


@pytest.mark.parametrize(("text", "expected"), [("64", 64), ("1 024", 1024), ("1,024", 1024), ("1e3", 1000)])
def test_parse_count(text: str, expected: int) -> None:
    assert parse_count(text, "en", field="devices") == expected


@pytest.mark.parametrize("text", ["0", "1.5", "-3", "x", "1e400"])
def test_parse_count_rejects(text: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_count(text, "en", field="devices")
    assert caught.value.field == "devices"


finite = st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False)


@pytest.mark.parametrize("lang", ["fr", "en"])
@given(x=finite)
def test_parse_format_round_trip(lang: Lang, x: float) -> None:
    assert parse_number(format_number(x, lang, exact=True), lang, field="x") == x


@pytest.mark.parametrize("lang", ["fr", "en"])
@given(pct=st.integers(min_value=1, max_value=1000))
def test_percent_round_trip(lang: Lang, pct: int) -> None:
    fraction = pct / 1000
    assert math.isclose(parse_efficiency(format_percent(fraction, lang), lang), fraction, rel_tol=1e-12)


@pytest.mark.parametrize(
    ("text", "lang", "seconds"),
    [
        ("14 d", "en", 14 * 86400),
        ("36h", "en", 36 * 3600),
        ("90 min", "en", 5400),
        ("1,5 j", "fr", 1.5 * 86400),
        ("2 semaines", "fr", 14 * 86400),
        ("120 ms", "en", 0.12),
        ("2 weeks", "en", 14 * 86400),
    ],
)
def test_parse_duration(text: str, lang: str, seconds: float) -> None:
    from dpscale.parse import parse_duration

    assert parse_duration(text, lang, field="deadline") == pytest.approx(seconds)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["10", "soon", "-3 h", "3 kg", "", "1.5 j"])
def test_parse_duration_refuses(text: str) -> None:
    from dpscale.parse import parse_duration

    with pytest.raises(InvalidInput) as caught:
        parse_duration(text, "en", field="deadline")
    assert caught.value.field == "deadline"
    assert "duration with its unit" in caught.value.accepted


@pytest.mark.parametrize(
    ("typed", "source", "target", "written"),
    [
        ("1 day", "en", "fr", "1 jour"),
        ("3 seconds", "en", "fr", "3 secondes"),
        ("3 jours", "fr", "en", "3 days"),
        ("2 secondes", "fr", "en", "2 seconds"),
        ("80 Go", "fr", "en", "80 GB"),
        ("80GiB", "en", "fr", "80Gio"),
        ("1,5 j", "fr", "en", "1.5 d"),
    ],
)
def test_a_quantity_is_respelled_for_the_other_language(typed: str, source: Lang, target: Lang, written: str) -> None:
    from dpscale._french import respelled

    assert respelled(typed, source, target) == written


def _read(text: str, lang: Lang) -> str:
    """What parse_decimal and parse_count make of ``text``: the Decimal as it is written (its exponent too) and
    the count, or the errors as they say them."""
    said = []
    for parse in (parse_decimal, parse_count):
        try:
            said.append(repr(parse(text, lang, field="devices")))
        except InvalidInput as exc:
            typed = exc.value.strip() if isinstance(exc.value, str) else exc.value  # the text as typed, unpadded
            said.append(f"{type(exc).__name__} on {exc.field}: {typed!r}, {exc.expected!r} {exc.advice!r}")
    return " | ".join(said)


# parse_decimal reads plain ASCII digits (64, 2000) without its general path: the same Decimal, to its
# exponent, the same count (parse_count) and the same errors as the general path (reached here by the spaces
# around the text, stripped there).
@given(st.text(alphabet="0123456789", min_size=1, max_size=101), st.sampled_from(["fr", "en"]))
@example("0" * 100, "fr")
@example("1" * 101, "en")
@example("007", "fr")
@example("0", "en")
@example("1000000001", "fr")
@example("٦٤", "fr")  # digits, not ASCII ones: the general path's, as before
@example("６４", "en")
@example("²", "fr")
def test_plain_digits_read_as_the_general_path_reads_them(digits: str, lang: Lang) -> None:
    assert _read(digits, lang) == _read(f" {digits}\u00a0", lang)
