from __future__ import annotations

import numpy as np
import pytest

from dpscale import InvalidInput, scale, sweep


def test_sweep_matches_the_scalar_model() -> None:
    d = np.array([1, 8, 64, 512])
    v = np.array([[100.0], [2000.0]])
    s = sweep(d, v, 0.9)
    assert s.shape == (2, 4)
    for i, vi in enumerate(v[:, 0]):
        for j, dj in enumerate(d):
            one = scale(int(dj), float(vi), 0.9)
            assert s.actual_throughput[i, j] == pytest.approx(one.actual_throughput, rel=1e-15)
            assert s.ideal_throughput[i, j] == pytest.approx(one.ideal_throughput, rel=1e-15)
            assert s.speedup[i, j] == pytest.approx(one.speedup, rel=1e-15)
            assert s.lost_throughput[i, j] == pytest.approx(one.lost_throughput, rel=1e-9)


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (([1, 0, 3], 1.0, 0.5), "devices[1]"),
        (([1, 2.5], 1.0, 0.5), "devices[1]"),
        (([1, np.inf], 1.0, 0.5), "devices[1]"),
        (([1, 2], [1.0, np.nan], 0.5), "per_device_throughput[1]"),
        (([1, 2], [1.0, -1.0], 0.5), "per_device_throughput[1]"),
        (([1, 2], 1.0, [0.5, 1.5]), "efficiency[1]"),
        (([1, 2], 1.0, [0.0, 0.5]), "efficiency[0]"),
        (([1, 2], 1.0, [np.nan, 0.5]), "efficiency[0]"),
        (([1, 2], 1e308, 1.0), "per_device_throughput[1]"),
        (([True, False], 1.0, 0.5), "devices"),
        ((["a"], 1.0, 0.5), "devices"),
        (([1, 2, 3], [1.0, 2.0], 0.5), "shape"),
    ],
)
def test_sweep_bad_input_names_the_element(args: tuple[object, object, object], field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        sweep(*args)
    assert caught.value.field == field


def test_sweep_over_a_grid() -> None:
    d, e = np.meshgrid(np.arange(1, 1025), np.linspace(0.5, 1.0, 11))
    s = sweep(d, 1000.0, e)
    assert (s.actual_throughput <= s.ideal_throughput).all()
    assert (s.speedup <= d).all()


def test_large_sweep_takes_the_blocked_path_and_agrees() -> None:
    n = 300_000  # above the blocked path's threshold
    d = np.arange(1, n + 1)
    v = np.full(n, 2000.0)
    e = np.linspace(0.5, 1.0, n)
    s = sweep(d, v, e)
    np.testing.assert_allclose(s.actual_throughput, d * v * e, rtol=1e-15)
    for i in (0, 63, n - 1):
        assert s.actual_throughput[i] == pytest.approx(scale(int(d[i]), 2000.0, float(e[i])).actual_throughput)


@pytest.mark.parametrize(
    ("array", "index", "value", "field"),
    [
        ("d", 250_001, 0, "devices"),
        ("v", 1, -1.0, "per_device_throughput"),
        ("e", 299_999, 1.5, "efficiency"),
        ("e", 200_000, np.nan, "efficiency"),
        ("v", 12, np.inf, "per_device_throughput"),
    ],
)
def test_large_sweep_names_the_bad_element(array: str, index: int, value: float, field: str) -> None:
    n = 300_000
    arrays = {"d": np.arange(1, n + 1), "v": np.full(n, 2000.0), "e": np.full(n, 0.9)}
    arrays[array][index] = value
    with pytest.raises(InvalidInput) as caught:
        sweep(arrays["d"], arrays["v"], arrays["e"])
    assert caught.value.field == f"{field}[{index}]"
