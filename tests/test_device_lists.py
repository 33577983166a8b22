"""Lists of device counts (dpscale.device_lists): ranges, steps, bounds, and the list quoted whole when refused."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dpscale.device_lists import parse_device_list
from dpscale.errors import InvalidInput
from dpscale.i18n import Lang


@pytest.mark.parametrize(
    ("text", "counts"),
    [
        ("8,16,64", [8, 16, 64]),
        ("8;16;64", [8, 16, 64]),
        ("1..16", [1, 2, 4, 8, 16]),
        ("8..32+8", [8, 16, 24, 32]),
        ("8,16,128,256", [8, 16, 128, 256]),  # three digits after a comma, no leading 0: counts
        ("8, 016", [8, 16]),  # a space after the comma: a list's own spacing
        ("1;024", [1, 24]),  # a semicolon separates, whatever follows
        ("1 024", [1024]),
    ],
)
def test_a_device_list_reads_its_counts(text: str, counts: list[int]) -> None:
    assert parse_device_list(text, "en") == counts


@pytest.mark.parametrize(
    ("text", "joined"),
    [("1,024", "1024"), ("8,2,048", "2048"), ("1..4,096", "4096"), ("1,024 ", "1024"), ("8,1,024\t", "1024")],
)
@pytest.mark.parametrize("lang", ["en", "fr"])
def test_a_thousands_comma_is_refused_rather_than_read_as_two_counts(text: str, joined: str, lang: Lang) -> None:
    # 1,024 read as 1 and 24 would answer another question: no count begins with 0, so it is a thousands group.
    with pytest.raises(InvalidInput) as caught:
        parse_device_list(text, lang)
    assert caught.value.value == text
    assert f"write {joined} without a comma" in caught.value.localized("en")
    assert f"écrivez {joined} sans virgule" in caught.value.localized("fr")


def test_a_long_stepped_range_is_refused_before_it_is_built() -> None:
    # 1..1e9+1 would make a billion ints (gigabytes) before the count limit was checked.
    with pytest.raises(InvalidInput, match="at most 4096 device counts"):
        parse_device_list("1..1000000000+1", "en")


@given(text=st.text(max_size=30), lang=st.sampled_from(["fr", "en"]))
@example(text="%(,", lang="fr")  # make fuzz SEED=3087713602: the count '%(' was quoted, not the list '%(,'
@example(text="8,16,x", lang="en")
def test_a_device_list_is_refused_quoting_it_as_typed(text: str, lang: Lang) -> None:
    try:
        parse_device_list(text, lang)
    except InvalidInput as exc:
        refused = exc
    else:
        return
    assert refused.value == text  # the whole list, not the count in it that is wrong
    for shown in (refused.localized("fr"), refused.localized("en")):
        assert shown.startswith("devices")
        assert "%(" not in shown.replace(repr(text), "")  # no template left unfilled, nothing but the text
