from __future__ import annotations

import math
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpscale
from dpscale import InvalidInput, MissingInput, devices_for, efficiency_from, per_device_for, scale, solve
from dpscale.scaling import Scaling
from tests.conftest import assert_close

devices_st = st.integers(min_value=1, max_value=10**6)
throughput_st = st.floats(min_value=1e-6, max_value=1e12, allow_nan=False, allow_infinity=False)
efficiency_st = st.floats(min_value=1e-6, max_value=1.0, exclude_min=False)


def test_seed_worked_example_is_exact() -> None:
    s = scale(64, 2000, 0.9)
    assert s.ideal_throughput == 128_000
    assert s.actual_throughput == 115_200
    assert s.speedup == 57.6
    assert repr(s.speedup) == "57.6"
    assert s.lost_throughput == 12_800
    assert s.unit == "samples/s"


def test_to_dict_has_the_stable_keys() -> None:
    assert scale(64, 2000, 0.9, unit="tokens/s").to_dict() == {
        "devices": 64,
        "per_device_throughput": 2000.0,
        "efficiency": 0.9,
        "ideal_throughput": 128000.0,
        "actual_throughput": 115200.0,
        "speedup": 57.6,
        "lost_throughput": 12800.0,
        "unit": "tokens/s",
    }


def test_decimal_products_have_no_float_noise() -> None:
    # 3 × 0.1 is 0.30000000000000004 in binary floating point; the seed's page shows 0.3.
    assert scale(3, 1, 0.1).speedup == 0.3
    assert scale(7, 0.1, 0.7).actual_throughput == 0.49


def test_result_is_frozen() -> None:
    s = scale(8, 100, 0.5)
    with pytest.raises(AttributeError):
        s.devices = 9  # type: ignore[misc]


def test_repr_html_is_a_table_and_escapes_the_unit() -> None:
    page = scale(64, 2000, 0.9, unit="<b>img/s</b>")._repr_html_()
    assert page.startswith("<table")
    assert "115,200" in page
    assert "57.6×" in page
    assert "<b>" not in page
    assert "&lt;b&gt;img/s&lt;/b&gt;" in page


@pytest.mark.parametrize(
    ("field", "args"),
    [
        ("devices", (0, 2000, 0.9)),
        ("devices", (-3, 2000, 0.9)),
        ("devices", (1.5, 2000, 0.9)),
        ("devices", (True, 2000, 0.9)),
        ("devices", (math.nan, 2000, 0.9)),
        ("devices", (math.inf, 2000, 0.9)),
        ("devices", ("64", 2000, 0.9)),
        ("per_device_throughput", (64, 0, 0.9)),
        ("per_device_throughput", (64, -1, 0.9)),
        ("per_device_throughput", (64, math.nan, 0.9)),
        ("per_device_throughput", (64, math.inf, 0.9)),
        ("per_device_throughput", (64, 1e308, 0.9)),
        ("efficiency", (64, 2000, 0)),
        ("efficiency", (64, 2000, 1.01)),
        ("efficiency", (64, 2000, 90)),
        ("efficiency", (64, 2000, -0.5)),
        ("efficiency", (64, 2000, math.nan)),
        ("efficiency", (64, 2000, None)),
    ],
)
def test_bad_input_names_the_field(field: str, args: tuple[object, object, object]) -> None:
    with pytest.raises(InvalidInput) as caught:
        scale(*args)  # type: ignore[arg-type]
    err = caught.value
    assert err.field == field
    assert isinstance(err, ValueError)
    assert isinstance(err, dpscale.DpscaleError)
    assert field in str(err)
    assert err.accepted in str(err)


def test_efficiency_90_hints_at_a_fraction() -> None:
    with pytest.raises(InvalidInput, match=r"did you mean 0\.9"):
        scale(64, 2000, 90)


def test_devices_given_as_whole_float_are_accepted() -> None:
    assert scale(4.0, 10, 1).devices == 4


@pytest.mark.parametrize(
    "unit",
    ["  ", "", "x" * 41, "a\x01b", "\ufffe", "a\nb", "a\u2028b", "\u202eevil", "a\u200bb", "a\ud800", 3],
    ids=[
        "spaces",
        "empty",
        "too long",
        "control",
        "non-character",
        "newline",
        "line separator",
        "bidi",
        "zero-width",
        "surrogate",
        "not text",
    ],
)
def test_bad_unit(unit: object) -> None:
    with pytest.raises(InvalidInput) as caught:
        scale(1, 1, 1, unit=unit)  # type: ignore[arg-type]
    assert caught.value.field == "unit"
    with pytest.raises(InvalidInput):  # built directly, the result checks it too: charts draw only what it holds
        Scaling(1, 1.0, 1.0, unit)  # type: ignore[arg-type]


@pytest.mark.parametrize("unit", ["samples/s", "tok/s [bf16]", "échantillons/s", "img/s\u00a0×\u202f2", "😀/s"])
def test_a_unit_is_kept_as_written_trimmed(unit: str) -> None:
    assert scale(1, 1, 1, unit=f" {unit} ").unit == unit
    assert Scaling(1, 1.0, 1.0, f"{unit} ").unit == unit


def test_invalid_input_survives_pickling() -> None:
    err = pickle.loads(pickle.dumps(InvalidInput("devices", 0, "a whole number", hint="x")))
    assert (err.field, err.value, err.accepted, err.hint) == ("devices", 0, "a whole number", "x")


def test_efficiency_from_measurement() -> None:
    sol = efficiency_from(64, 2000, 115_200)
    assert sol.unknown == "efficiency"
    assert sol.value == 0.9
    assert sol.scaling.actual_throughput == 115_200
    assert not sol.scaling.superlinear


def test_superlinear_is_flagged_not_clipped() -> None:
    sol = efficiency_from(8, 100, 1000)
    assert sol.scaling.efficiency == 1.25
    assert sol.scaling.superlinear
    assert sol.scaling.lost_throughput == -200
    assert sol.to_dict()["superlinear"] is True


def test_devices_for_rounds_up_and_reports_what_it_gives() -> None:
    sol = devices_for(100_000, 2000, 0.9)
    assert sol.scaling.devices == 56  # 55.56 devices rounded up
    assert sol.scaling.actual_throughput == 100_800
    assert sol.surplus_throughput == 800
    exact = devices_for(115_200, 2000, 0.9)
    assert exact.scaling.devices == 64  # no float noise pushing 64.000…01 to 65
    assert exact.surplus_throughput == 0


def test_per_device_for() -> None:
    sol = per_device_for(64, 0.9, 115_200)
    assert sol.value == 2000
    assert sol.scaling.actual_throughput == 115_200


@pytest.mark.parametrize(
    ("kwargs", "unknown", "value"),
    [
        ({"per_device_throughput": 2000, "efficiency": 0.9, "actual_throughput": 115_200}, "devices", 64),
        ({"devices": 64, "efficiency": 0.9, "actual_throughput": 115_200}, "per_device_throughput", 2000),
        ({"devices": 64, "per_device_throughput": 2000, "actual_throughput": 115_200}, "efficiency", 0.9),
        ({"devices": 64, "per_device_throughput": 2000, "efficiency": 0.9}, "actual_throughput", 115_200),
    ],
)
def test_solve_finds_the_missing_one(kwargs: dict[str, float], unknown: str, value: float) -> None:
    sol = solve(**kwargs)  # type: ignore[arg-type]
    assert sol.unknown == unknown
    assert sol.value == value


@pytest.mark.parametrize(
    ("kwargs", "field", "missing"),
    [
        ({}, "devices", True),
        ({"devices": 64}, "per_device_throughput", True),
        ({"devices": 64, "actual_throughput": 1000.0}, "per_device_throughput", True),
        (
            {"devices": 1, "per_device_throughput": 1, "efficiency": 1, "actual_throughput": 1},
            "actual_throughput",
            False,
        ),
    ],
)
def test_solve_needs_exactly_three(kwargs: dict[str, float], field: str, missing: bool) -> None:
    with pytest.raises(InvalidInput) as caught:
        solve(**kwargs)  # type: ignore[arg-type]
    assert caught.value.field == field
    assert isinstance(caught.value, MissingInput) is missing
    expected = "three of devices, per_device_throughput, efficiency and actual_throughput" if missing else "all given"
    assert expected in str(caught.value)
    assert "None" not in str(caught.value)


@given(devices_st, throughput_st, efficiency_st)
def test_invariants(d: int, v: float, e: float) -> None:
    s = scale(d, v, e)
    for x in (s.ideal_throughput, s.actual_throughput, s.speedup, s.lost_throughput):
        assert math.isfinite(x)
    assert s.actual_throughput <= s.ideal_throughput
    assert s.speedup <= d
    assert s.lost_throughput >= 0
    assert_close(s.speedup * v, s.actual_throughput, rel=1e-12)
    assert_close(s.ideal_throughput - s.actual_throughput, s.lost_throughput, rel=1e-9, abs_=1e-9 * s.ideal_throughput)


@given(devices_st, throughput_st, efficiency_st)
def test_efficiency_round_trips(d: int, v: float, e: float) -> None:
    a = scale(d, v, e).actual_throughput
    assert_close(efficiency_from(d, v, a).scaling.efficiency, e, rel=1e-12)


@given(throughput_st, throughput_st, efficiency_st)
def test_devices_for_is_the_fewest(target: float, v: float, e: float) -> None:
    try:
        sol = devices_for(target, v, e)
    except InvalidInput:
        return  # only when the device count would overflow the arithmetic
    d = sol.scaling.devices
    assert sol.scaling.actual_throughput >= target * (1 - 1e-12)
    if d > 1:
        assert scale(d - 1, v, e).actual_throughput < target * (1 + 1e-12)


@given(
    st.one_of(st.integers(), st.floats(), st.none(), st.booleans(), st.text(max_size=5)),
    st.one_of(st.integers(), st.floats(), st.none()),
    st.one_of(st.integers(), st.floats(), st.none()),
)
def test_no_input_gives_nan_or_infinity(d: object, v: object, e: object) -> None:
    try:
        s = scale(d, v, e)  # type: ignore[arg-type]
    except InvalidInput:
        return
    for x in (s.ideal_throughput, s.actual_throughput, s.speedup, s.lost_throughput):
        assert math.isfinite(x)
