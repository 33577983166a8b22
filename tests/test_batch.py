from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpscale import InvalidInput
from dpscale.batch import accumulation_for, devices_for_batch, effective_batch, growth, scaled_learning_rate

counts = st.integers(min_value=1, max_value=4096)


def test_global_batch_and_tokens() -> None:
    b = effective_batch(32, 4, 64, sequence_length=2048)
    assert (b.per_device_batch, b.global_batch, b.global_batch_tokens) == (128, 8192, 16_777_216)
    assert b.to_dict()["global_batch"] == 8192
    assert effective_batch(8).global_batch == 8
    assert effective_batch(8).global_batch_tokens is None


# Published configurations, each with the global batch and learning rate its paper states.
@pytest.mark.parametrize(
    ("micro", "accumulation", "devices", "base_lr", "base_batch", "global_batch", "lr"),
    [
        # Goyal et al. 2017, arXiv:1706.02677: 32 images on each of 256 GPUs, η = 0.1·kn/256 → 3.2.
        (32, 1, 256, 0.1, 256, 8192, 3.2),
        # Same paper, the 256-image baseline on 8 GPUs.
        (32, 1, 8, 0.1, 256, 256, 0.1),
    ],
)
def test_published_configurations(
    micro: int, accumulation: int, devices: int, base_lr: float, base_batch: int, global_batch: int, lr: float
) -> None:
    b = effective_batch(micro, accumulation, devices)
    assert b.global_batch == global_batch
    assert scaled_learning_rate(base_lr, base_batch, b.global_batch) == lr


@given(target=st.integers(min_value=1, max_value=10**7), micro=counts, devices=counts)
def test_accumulation_for_is_the_fewest_that_reach_the_target(target: int, micro: int, devices: int) -> None:
    solution = accumulation_for(target, micro, devices)
    k = solution.batch.accumulation
    assert solution.batch.global_batch >= target
    assert k == 1 or micro * (k - 1) * devices < target
    assert solution.difference == solution.batch.global_batch - target >= 0


@given(target=st.integers(min_value=1, max_value=10**7), micro=counts, accumulation=counts)
def test_devices_for_batch_is_the_fewest_that_reach_the_target(target: int, micro: int, accumulation: int) -> None:
    solution = devices_for_batch(target, micro, accumulation)
    d = solution.batch.devices
    assert solution.batch.global_batch >= target
    assert d == 1 or micro * accumulation * (d - 1) < target


def test_exact_solution_has_no_difference() -> None:
    s = accumulation_for(8192, 32, 64)
    assert s.exact
    assert s.batch.accumulation == 4
    assert s.to_dict()["solved_for"] == "accumulation"


def test_growth_doubles_the_batch_with_the_devices() -> None:
    rows = growth(effective_batch(32, 4, 64))
    assert [r.devices for r in rows] == [2, 4, 8, 16, 32, 64, 128, 256]
    assert [r.global_batch for r in rows] == [256 * 2**i for i in range(8)]


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: effective_batch(0), "micro_batch"),
        (lambda: effective_batch(32, 1.5), "accumulation"),  # type: ignore[arg-type]
        (lambda: effective_batch(32, 1, True), "devices"),  # type: ignore[arg-type]
        (lambda: effective_batch(32, sequence_length=-1), "sequence_length"),
        (lambda: accumulation_for(0, 32, 8), "target_global_batch"),
        (lambda: scaled_learning_rate(0, 256, 512), "base_learning_rate"),
        (lambda: scaled_learning_rate(1e308, 1, 10**6), "base_learning_rate"),
    ],
)
def test_bad_input_names_the_field(call: object, field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        call()  # type: ignore[operator]
    assert caught.value.field == field
