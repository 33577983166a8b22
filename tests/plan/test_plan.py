from __future__ import annotations

import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dpscale import InvalidInput, MissingInput
from dpscale.plan import devices_for_deadline, plan

IMAGENET = 1_281_167  # training images in ImageNet-1k (ILSVRC 2012)


def test_time_cost_and_energy() -> None:
    p = plan(IMAGENET * 90, 64, 2000, 0.9, price_per_device_hour=2.5, watts_per_device=400, currency="eur")
    assert p.seconds == pytest.approx(IMAGENET * 90 / 115_200)
    assert p.device_hours == pytest.approx(64 * p.seconds / 3600)
    assert p.cost == pytest.approx(p.device_hours * 2.5)
    assert p.energy_kwh == pytest.approx(p.device_hours * 0.4)
    assert p.currency == "EUR"
    assert p.to_dict()["actual_throughput"] == 115_200


def test_optional_money_and_energy_stay_none() -> None:
    p = plan(1e6, 8, 100, 0.5)
    assert p.cost is None
    assert p.energy_kwh is None


@given(
    work=st.floats(1e3, 1e12),
    deadline=st.floats(60, 1e7),
    v=st.floats(1, 1e5),
    e=st.floats(0.05, 1.0),
)
@example(work=1000.0, deadline=60.0, v=1.0, e=1 / 3)  # make fuzz: E just under 1/3, so 50 devices miss by 1e-14 s
def test_deadline_gives_the_fewest_devices(work: float, deadline: float, v: float, e: float) -> None:
    if work / (10**6 * v * e) > deadline:  # a million devices are not enough
        with pytest.raises(InvalidInput, match="deadline_seconds"):
            devices_for_deadline(work, deadline, v, e)
        return
    found = devices_for_deadline(work, deadline, v, e)
    d = found.plan.scaling.devices
    assert found.plan.seconds <= deadline * (1 + 1e-12)
    assert d == 1 or plan(work, d - 1, v, e).seconds > deadline
    exact = work / (deadline * v * e)  # the closed form, within rounding either way
    assert math.ceil(exact - 1e-9) <= d <= math.ceil(exact + 1e-9)


def test_deadline_with_a_falling_efficiency_curve() -> None:
    def amdahl(n: int) -> float:  # 0.1 % serial: E(n) = 1 / (1 + 0.001·(n − 1))
        return 1 / (1 + 0.001 * (n - 1))

    found = devices_for_deadline(1e9, 3600, 2000, amdahl, price_per_device_hour=2)
    d = found.plan.scaling.devices
    assert found.plan.seconds <= 3600 < plan(1e9, d - 1, 2000, amdahl).seconds
    costs = [o.cost for o in found.options]
    assert costs == sorted(costs)  # more devices at a falling E: every doubling costs more
    assert d in [o.scaling.devices for o in found.options]


def test_unreachable_deadline_says_why() -> None:
    with pytest.raises(InvalidInput) as caught:
        devices_for_deadline(1e9, 3600, 2000, lambda n: 1 / (1 + 0.01 * (n - 1)), max_devices=1024)
    assert caught.value.field == "deadline_seconds"
    assert "1,024 devices" in caught.value.accepted
    assert "e+" not in caught.value.accepted  # numbers as people write them, not 2.778e+05
    assert "1\u202f024 appareils" in caught.value.localized("fr")


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: plan(0, 8, 100, 0.9), "work"),
        (lambda: plan(1e6, 8, 100, 1.2), "efficiency"),
        (lambda: plan(1e6, 8, 100, 0.9, price_per_device_hour=-1), "price_per_device_hour"),
        (lambda: plan(1e6, 8, 100, 0.9, currency="dollars"), "currency"),
        (lambda: plan(1e6, 8, 100, 0.9, currency="ZZZ"), "currency"),  # three letters, but no currency
        (lambda: plan(1e6, 8, 100, lambda n: 2.0), "efficiency"),
        (lambda: devices_for_deadline(1e6, 0, 100, 0.9), "deadline_seconds"),
    ],
)
def test_bad_input_names_the_field(call: object, field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        call()  # type: ignore[operator]
    assert caught.value.field == field


def test_total_work_is_size_times_epochs_and_stays_finite() -> None:
    from dpscale.plan import total_work

    assert total_work(1_281_167, 90) == 1_281_167 * 90
    with pytest.raises(InvalidInput) as caught:
        total_work(1e300, 1e300)
    assert caught.value.field == "epochs"
    with pytest.raises(InvalidInput, match="epochs"):
        total_work(1e6, 0)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"watts_per_device": 1e300}, "watts_per_device"),
        ({"price_per_device_hour": 1e300}, "price_per_device_hour"),
    ],
)
def test_cost_and_energy_that_overflow_are_refused(kwargs: dict[str, float], field: str) -> None:
    # 1e9 device-hours at 1e300 W would be an infinite energy, and inf is no JSON number.
    with pytest.raises(InvalidInput) as caught:
        plan(1e18, 1_000_000, 1, 0.5, **kwargs)
    assert caught.value.field == field


def test_the_planner_says_how_many_devices_hold_the_model() -> None:
    from dpscale.calculators.plan import PLAN

    base = {"work": 1e12, "per_device_throughput": 3000.0, "efficiency": 0.9, "devices": 64}
    result = PLAN.build(
        {**base, "params": 8e9, "device_memory": 80 * 2**30, "sharding": "full_shard", "param_bytes": 2.0}
    )
    assert result.memory is not None
    assert result.memory.sharding == "zero3"
    assert result.memory.fewest_devices == 2
    assert result.memory.fits
    assert result.to_dict()["memory"]["fewest_devices"] == 2
    whole = PLAN.build({**base, "params": 8e9, "device_memory": 80 * 2**30})  # ddp: every device holds it all
    assert whole.memory is not None
    assert whole.memory.fewest_devices is None
    assert not whole.memory.fits
    with pytest.raises(MissingInput, match="device_memory"):
        PLAN.build({**base, "params": 8e9})
