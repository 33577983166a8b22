"""Every entry point of the library, fed extreme numbers: a result that JSON and a notebook can show
whole, or InvalidInput naming the field. Never another exception, NaN or infinity."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dpscale import InvalidInput, devices_for, efficiency_from, per_device_for, scale
from dpscale import batch as batches
from dpscale import pipeline as pipelines
from dpscale.fit import fit
from dpscale.plan import devices_for_deadline, plan
from dpscale.predict import presets
from dpscale.predict.levers import levers
from dpscale.predict.model import Cluster, Workload, predict

EXTREMES = [0, -1, 1, 2, 3.7, 0.5, 1.5, 1e-300, 5e-324, 1e-10, 1e9, 1e15, 1e25, 1e149, 1e150, 1e300, 1.7e308]
_extreme = st.sampled_from([*EXTREMES, float("nan"), float("inf")])
numbers = st.one_of(_extreme, _extreme, _extreme, st.floats(allow_nan=False))  # mostly the edges themselves
counts = st.one_of(st.sampled_from([0, 1, 2, 3, 8, 64, 10**9, 10**12, 2**63, -3, 1.5, True]), st.integers(1, 10**6))
maybe = st.one_of(st.none(), numbers)
DGX = Cluster(presets.link("intra", "nvlink3"), 8, presets.link("inter", "ib-hdr", nics=8))


def shown_whole(call: Callable[[], Any]) -> None:
    refused: InvalidInput | None = None
    try:
        result = call()
    except InvalidInput as exc:
        refused = exc
    if refused is not None:
        assert refused.field
        assert refused.localized("fr")
        return
    for item in result if isinstance(result, list) else [result]:
        json.dumps(item.to_dict(), allow_nan=False)  # raises on NaN or infinity
        if hasattr(item, "_repr_html_"):
            assert item._repr_html_().startswith(
                ("<table", "<p", "<h4")
            )  # its tables, or the sentence it is about first


EDGES = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@EDGES
@given(counts, numbers, numbers)
@example(8, 1e-300, 1e9)  # E = 1.25e308: its speedup d·E once reached JSON as infinity
@example(1, 1e-300, 1e9)  # devices_for: 1e309 devices
@example(3, 1e9, 1.7976931348623157e308)  # efficiency_from: A = d·v·E again, rounded past the largest float
def test_scaling(d: Any, v: Any, x: Any) -> None:
    shown_whole(lambda: scale(d, v, x))
    shown_whole(lambda: efficiency_from(d, v, x))
    shown_whole(lambda: per_device_for(d, x, v))
    shown_whole(lambda: devices_for(v, x, x))


@EDGES
@given(counts, counts, counts, st.one_of(st.none(), counts), numbers)
@example(10**9, 10**9, 10**9, None, 1.0)  # a global batch of 1e27 once broke Babel's formatting
@example(1, 2, 1, 1, 1.7e308)  # a step of 2·1.7e308 s
@example(2**63, 2, 1, None, 1e-300)  # 2**63 stages for a bubble of 1e-300
def test_batch_and_pipeline(b: Any, k: Any, d: Any, length: Any, x: Any) -> None:
    shown_whole(lambda: batches.effective_batch(b, k, d, sequence_length=length))
    shown_whole(lambda: batches.accumulation_for(x, b, d))
    shown_whole(lambda: pipelines.bubble(b, k, micro_batch_time=None if length is None else x))
    shown_whole(lambda: pipelines.micro_batches_for(b, x, schedule="interleaved", chunks=k))


@EDGES
@given(numbers, counts, numbers, numbers, maybe, maybe)
@example(1e300, 64, 1.5, 1, None, 1e25)  # an energy of infinite kWh
@example(1e18, 10**6, 1, 0.5, 1e300, None)  # an infinite cost
def test_plan(work: Any, d: Any, v: Any, e: Any, price: Any, watts: Any) -> None:
    shown_whole(lambda: plan(work, d, v, e, price_per_device_hour=price, watts_per_device=watts))
    shown_whole(lambda: devices_for_deadline(work, v, v, e, price_per_device_hour=price, watts_per_device=watts))


@EDGES
@given(numbers, numbers, numbers, maybe, counts)
@example(2**63, 256, 25.6e6, None, 64)  # a Python int past numpy's integers
@example(1e300, 256, 25.6e6, None, 10**9)  # A = n·v·E past floating point
@example(0.5, 1e307, 1e300, 0.5, 64)  # a what-if (twice the batch to load) that overflows
@example(1, 1.7e308, 1, None, 64)  # a finite compute time of 1.7e308 s plus the wait for stragglers: T_step = ∞
def test_predict(v: Any, b: Any, params: Any, loader: Any, n: Any) -> None:
    def both() -> list[Any]:
        w = Workload(v, b, params, 2.0, 1, loader)
        return [predict([1, 8, n], w, DGX), *levers([8, n], w, DGX)]

    shown_whole(both)


@EDGES
@given(st.lists(st.tuples(st.sampled_from([1, 2, 4, 8, 16]), numbers), min_size=2, max_size=6), counts)
@example([(1, 1e9), (1, 1e300), (1, 5e-324), (8, 2), (2, 1e15)], 16)  # an infinite AICc
@example([(1, 367.29), (4, 1449.48), (8, 2887.65), (16, 5716.79)], 10**12)  # a size past any chart
def test_fit(points: list[tuple[int, Any]], at: Any) -> None:
    with warnings.catch_warnings():  # numpy's overflow warnings while SciPy tries absurd data
        warnings.simplefilter("ignore")
        shown_whole(lambda: fit(points, at=[at]))
