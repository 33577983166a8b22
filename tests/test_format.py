from __future__ import annotations

import pytest

from dpscale.format import format_number, format_percent, format_speedup
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
