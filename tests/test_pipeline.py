from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpscale import InvalidInput
from dpscale.pipeline import bubble, micro_batches_for, schedule


@pytest.mark.parametrize(
    ("p", "m", "kind", "v", "fraction"),
    [
        (4, 8, "1f1b", 1, Fraction(3, 11)),
        (4, 8, "gpipe", 1, Fraction(3, 11)),
        (8, 16, "interleaved", 2, Fraction(7, 39)),
        (1, 5, "gpipe", 1, Fraction(0)),
    ],
)
def test_bubble_fraction(p: int, m: int, kind: str, v: int, fraction: Fraction) -> None:
    b = bubble(p, m, schedule=kind, chunks=v)
    assert b.fraction == float(fraction)
    assert b.efficiency == float(1 - fraction)
    assert b.overhead == float(Fraction(p - 1, v * m))


@pytest.mark.parametrize("p", [2, 4, 8, 16, 64])
def test_gpipe_claim_that_four_micro_batches_per_stage_make_the_bubble_small(p: int) -> None:
    # Huang et al. 2019 (GPipe, arXiv:1811.06965, section 2.3): the bubble overhead
    # O((K−1)/(M+K−1)) is negligible when M ≥ 4·K; the formula gives under 20 % there.
    assert bubble(p, 4 * p, schedule="gpipe").fraction < 0.2


def test_interleaving_divides_the_overhead_by_the_chunks() -> None:
    # Narayanan et al. 2021 (arXiv:2104.04473, section 2.2.2): bubble time (p−1)·t/v.
    plain = bubble(8, 32, micro_batch_time=0.1)
    interleaved = bubble(8, 32, schedule="interleaved", chunks=4, micro_batch_time=0.1)
    assert interleaved.overhead == pytest.approx(plain.overhead / 4)
    assert interleaved.idle_time == pytest.approx(plain.idle_time / 4)  # type: ignore[operator]


def test_step_time() -> None:
    b = bubble(4, 8, micro_batch_time=0.12)
    assert b.step_time == pytest.approx(11 * 0.12)
    assert b.idle_time == pytest.approx(3 * 0.12)
    assert bubble(4, 8).step_time is None


def test_activations_held() -> None:
    assert bubble(4, 8, schedule="gpipe").activations_in_flight == 8
    assert bubble(4, 8).activations_in_flight == 4
    assert bubble(4, 2).activations_in_flight == 2


@given(p=st.integers(1, 8), m=st.integers(1, 8), kind=st.sampled_from(["gpipe", "1f1b"]))
def test_simulated_schedule_matches_the_formula(p: int, m: int, kind: str) -> None:
    """The bubble of a step laid out block by block equals (p−1)/(m+p−1)."""
    slots = schedule(p, m, kind)
    makespan = max(s.end for s in slots)
    busy = {stage: sum(s.end - s.start for s in slots if s.stage == stage) for stage in range(p)}
    assert all(b == 3 * m for b in busy.values())  # each micro-batch: forward 1 + backward 2
    assert Fraction(makespan - 3 * m, makespan) == Fraction(p - 1, m + p - 1)
    for stage in range(p):  # a stage never runs two blocks at once
        mine = sorted((s.start, s.end) for s in slots if s.stage == stage)
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(mine))


def test_1f1b_holds_fewer_activations_than_gpipe_in_the_simulation() -> None:
    def peak(kind: str) -> int:
        slots = [s for s in schedule(4, 8, kind) if s.stage == 0]
        events = sorted(
            [(s.start, 1) for s in slots if s.phase == "forward"]
            + [(s.end, -1) for s in slots if s.phase == "backward"]
        )
        level = top = 0
        for _, delta in events:
            level += delta
            top = max(top, level)
        return top

    assert peak("gpipe") == 8
    assert peak("1f1b") == 4


@given(p=st.integers(1, 64), f=st.floats(0.01, 0.99), v=st.integers(1, 4))
def test_micro_batches_for_is_the_fewest(p: int, f: float, v: int) -> None:
    found = micro_batches_for(p, f, schedule="interleaved" if v > 1 else "1f1b", chunks=v)
    assert found.fraction <= f + 1e-12
    if v == 1 and found.micro_batches > 1:
        m = found.micro_batches - 1  # one fewer exceeds the target, in exact arithmetic on f as written
        assert Fraction(p - 1, m + p - 1) > Fraction(repr(f))


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: bubble(0, 4), "stages"),
        (lambda: bubble(4, 0), "micro_batches"),
        (lambda: bubble(4, 8, schedule="zigzag"), "schedule"),
        (lambda: bubble(4, 8, chunks=2), "chunks"),
        (lambda: bubble(4, 6, schedule="interleaved", chunks=2), "micro_batches"),
        (lambda: bubble(4, 8, micro_batch_time=-1), "micro_batch_time"),
        (lambda: micro_batches_for(4, 0), "max_bubble"),
        (lambda: schedule(4, 8, "interleaved"), "schedule"),
        (lambda: schedule(16, 16), "stages"),
    ],
)
def test_bad_input_names_the_field(call: object, field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        call()  # type: ignore[operator]
    assert caught.value.field == field
