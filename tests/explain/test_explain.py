"""Explaining a run from profiler traces: the interval arithmetic, the breakdown, and every bad input."""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpscale import InvalidInput
from dpscale.explain import explain, read_trace
from dpscale.explain.intervals import difference, lengths_in, pairs, union
from tests.conftest import assert_close

MAIN, GLOO = 10, 11


def op(name: str, start: float, dur: float, *, tid: int = MAIN, cat: str = "cpu_op", **args: Any) -> dict[str, Any]:
    event = {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": start, "dur": dur}
    if args:
        event["args"] = args
    return event


def step(number: int, start: float, dur: float) -> dict[str, Any]:
    return op(f"ProfilerStep#{number}", start, dur, cat="user_annotation")


def write(path: Path, events: list[dict[str, Any]], *, rank: int | None = 0, world: int = 1) -> Path:
    trace: dict[str, Any] = {"schemaVersion": 1, "traceEvents": events}
    if rank is not None:
        trace["distributedInfo"] = {"backend": "gloo", "rank": rank, "world_size": world}
    path.write_text(json.dumps(trace, indent=2))
    return path


# One step of 100 µs: an operator with a child, an annotation holding an operator, a collective on
# gloo's thread. Compute [10, 40] ∪ [55, 60] = 35; communication [35, 90] = 55, of which [35, 40]
# and [55, 60] are hidden: exposed 45; other 100 − 35 − 45 = 20.
ONE_STEP = [
    step(1, 0, 100),
    op("aten::linear", 10, 30),
    op("aten::addmm", 20, 10),
    op("DistributedDataParallel.forward", 50, 20, cat="user_annotation"),
    op("aten::relu", 55, 5),
    op("gloo:all_reduce", 35, 55, tid=GLOO, cat="user_annotation"),
]


def test_one_step_splits_into_compute_exposed_and_other(tmp_path: Path) -> None:
    rank = explain(write(tmp_path / "r0.json", ONE_STEP)).ranks[0]
    assert_close(rank.step_time.mean, 100e-6)
    assert_close(rank.compute.mean, 35e-6)
    assert_close(rank.exposed_communication.mean, 45e-6)
    assert_close(rank.other.mean, 20e-6)
    assert_close(rank.communication.mean, 55e-6)
    assert rank.overlap is not None
    assert_close(rank.overlap, 10 / 55)
    assert rank.device == "cpu"


def test_a_step_as_a_timeline_draws_it(tmp_path: Path) -> None:
    from dpscale.explain.timeline import step_drawing

    drawn = step_drawing(read_trace(write(tmp_path / "r0.json", [*ONE_STEP, step(2, 100, 50)])), 0)
    assert drawn.step == 1
    assert_close(drawn.length, 100e-6)
    assert [tuple(round(x * 1e6, 6) for x in iv) for iv in drawn.compute] == [(10, 40), (55, 60)]
    assert [tuple(round(x * 1e6, 6) for x in iv) for iv in drawn.exposed] == [(40, 55), (60, 90)]
    assert step_drawing(read_trace(tmp_path / "r0.json")).step == 2  # the last by default
    with pytest.raises(InvalidInput):
        step_drawing(read_trace(tmp_path / "r0.json"), 2)


def test_operators_inside_a_collective_are_communication(tmp_path: Path) -> None:
    events = [step(1, 0, 100), op("c10d::allreduce_", 10, 50), op("aten::copy_", 20, 10), op("aten::mul", 70, 10)]
    rank = explain(write(tmp_path / "r0.json", events)).ranks[0]
    assert_close(rank.compute.mean, 10e-6)
    assert_close(rank.exposed_communication.mean, 50e-6)


def test_an_annotation_that_waits_inside_an_operator_is_not_compute(tmp_path: Path) -> None:
    # FSDP's backward: an autograd operator holds the region where it waits for an all-gather.
    events = [
        step(1, 0, 100),
        op("autograd::engine::evaluate_function: AddmmBackward0", 0, 80),
        op("FSDP::all_gather (0)", 10, 50, cat="user_annotation"),
        op("fsdp::all_gather_copy_in", 15, 5),
        op("gloo:all_gather", 20, 40, tid=GLOO, cat="user_annotation"),
    ]
    rank = explain(write(tmp_path / "r0.json", events)).ranks[0]
    assert_close(rank.compute.mean, 35e-6)  # [0, 10] + [15, 20] + [60, 80]
    assert_close(rank.exposed_communication.mean, 40e-6)
    assert_close(rank.other.mean, 25e-6)  # [10, 15] and [80, 100]


def test_events_out_of_order_give_the_same_breakdown(tmp_path: Path) -> None:
    in_order = explain(write(tmp_path / "a.json", ONE_STEP)).to_dict()
    shuffled = explain(write(tmp_path / "b.json", list(reversed(ONE_STEP)))).to_dict()
    for key in ("step_time", "compute", "exposed_communication", "other", "overlap"):
        assert_close(shuffled["ranks"][0][key], in_order["ranks"][0][key])


def test_gzipped_and_bare_array_traces_read_alike(tmp_path: Path) -> None:
    plain = write(tmp_path / "r0.json", ONE_STEP)
    zipped = tmp_path / "r0.json.gz"
    zipped.write_bytes(gzip.compress(plain.read_bytes()))
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(ONE_STEP))
    expected = read_trace(plain)
    for other in (zipped, bare):
        found = read_trace(other)
        assert (found.steps, found.compute, found.communication) == (
            expected.steps,
            expected.compute,
            expected.communication,
        )


def test_the_slowest_rank_and_the_others_wait(tmp_path: Path) -> None:
    # Rank 1 computes 30 µs more each step; rank 0 waits for it inside the all-reduce.
    fast = [step(1, 0, 100), op("aten::mm", 0, 40), op("gloo:all_reduce", 40, 55, tid=GLOO, cat="user_annotation")]
    slow = [step(1, 0, 100), op("aten::mm", 0, 70), op("gloo:all_reduce", 70, 25, tid=GLOO, cat="user_annotation")]
    found = explain(
        [write(tmp_path / "r0.json", fast, rank=0, world=2), write(tmp_path / "r1.json", slow, rank=1, world=2)]
    )
    assert found.slowest_rank == 1
    by_rank = {r.rank: r for r in found.ranks}
    assert_close(by_rank[1].compute.mean - by_rank[0].compute.mean, 30e-6)
    assert_close(by_rank[0].wait.mean, 30e-6)
    assert_close(by_rank[1].wait.mean, 0.0)
    assert_close(found.calibration.exposed_communication, 25e-6)
    assert_close(found.calibration.straggler_wait, 15e-6)  # 75 − mean(45, 75)
    assert_close(found.efficiency, (45 + 75) / 200)
    assert found.levers[0].name == "communication"
    payload = found.to_dict()
    assert {"rank", "steps", "step_time", "compute", "exposed_communication", "other", "overlap"} <= set(
        payload["ranks"][0]
    )
    assert payload["slowest_rank"] == 1


def test_gpu_kernels_and_the_bandwidth_of_sized_collectives(tmp_path: Path) -> None:
    events = [
        op("ProfilerStep#1", 100, 2000, tid=7, cat="gpu_user_annotation"),  # the step's range on the GPU: not a step
        step(1, 0, 1000),
        op("sm90_gemm", 0, 600, tid=7, cat="kernel"),
        op(
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
            400,
            400,
            tid=8,
            cat="kernel",
            **{"In msg nelems": 1000, "dtype": "Float"},
        ),
        op("aten::mm", 0, 900),  # the host's side: not compute on a GPU
    ]
    found = explain(write(tmp_path / "r0.json", events))
    rank = found.ranks[0]
    assert rank.device == "gpu"
    assert_close(rank.step_time.mean, 1000e-6)
    assert_close(rank.compute.mean, 600e-6)
    assert_close(rank.exposed_communication.mean, 200e-6)
    assert rank.overlap is not None
    assert_close(rank.overlap, 0.5)
    assert found.calibration.collective_bytes == 4000
    assert found.calibration.bandwidth is not None
    assert_close(found.calibration.bandwidth, 4000 / 400e-6)


def test_steps_average_with_their_spread(tmp_path: Path) -> None:
    events = [step(1, 0, 100), step(2, 100, 300), op("aten::mm", 0, 50), op("aten::mm", 100, 100)]
    rank = explain(write(tmp_path / "r0.json", events)).ranks[0]
    assert rank.steps == 2
    assert_close(rank.step_time.low, 100e-6)
    assert_close(rank.step_time.high, 300e-6)
    assert_close(rank.compute.mean, 75e-6)
    assert_close(rank.step_time.sd, 100e-6)


def test_unreadable_events_are_counted_and_left_out(tmp_path: Path) -> None:
    events = [*ONE_STEP, op("aten::bad", "soon", 5), {"ph": "X", "name": ["x"]}, 7]  # type: ignore[list-item]
    found = explain(write(tmp_path / "r0.json", events))
    assert found.ranks[0].skipped == 3
    assert_close(found.ranks[0].compute.mean, 35e-6)
    assert "3 events could not be read" in found.to_dict()["notes"][0]


def test_a_step_on_a_thread_named_by_a_list_is_left_out(tmp_path: Path) -> None:
    odd = {**step(2, 200, 100), "pid": [1]}
    found = explain(write(tmp_path / "r0.json", [*ONE_STEP, odd]))
    assert found.ranks[0].steps == 1
    assert found.ranks[0].skipped == 1


# -- bad input: one error naming the file, never a traceback ------------------------------------


def refused(*paths: Path | str) -> InvalidInput:
    with pytest.raises(InvalidInput) as caught:
        explain(list(paths))
    return caught.value


def test_not_a_trace(tmp_path: Path) -> None:
    binary = tmp_path / "model.pt"
    binary.write_bytes(b"\x80\x02\x00\xff" * 100)
    assert "model.pt" in str(refused(binary))
    text = tmp_path / "notes.json"
    text.write_text('{"loss": 1.5}')
    message = str(refused(text))
    assert "notes.json" in message
    assert "traceEvents" in message
    log = tmp_path / "log.json"
    log.write_text("epoch 1 loss 2.0\n")
    assert "not a JSON object" in str(refused(log))


def test_no_profiler_steps(tmp_path: Path) -> None:
    message = str(refused(write(tmp_path / "r0.json", [op("aten::mm", 0, 5)])))
    assert "r0.json" in message
    assert "ProfilerStep" in message


def test_ranks_with_different_steps(tmp_path: Path) -> None:
    first = write(tmp_path / "r0.json", [step(1, 0, 10), step(2, 10, 10)], rank=0, world=2)
    second = write(tmp_path / "r1.json", [step(1, 0, 10)], rank=1, world=2)
    message = str(refused(first, second))
    assert "r1.json" in message
    assert "steps 1–2" in message
    assert "step 1" in message


def test_the_same_rank_twice(tmp_path: Path) -> None:
    first = write(tmp_path / "a.json", ONE_STEP, rank=0)
    second = write(tmp_path / "b.json", ONE_STEP, rank=0)
    assert "b.json" in str(refused(first, second))


@pytest.mark.parametrize("keep", [0.3, 0.7, 0.99])
def test_a_truncated_trace(tmp_path: Path, keep: float) -> None:
    whole = write(tmp_path / "whole.json", ONE_STEP).read_bytes()
    cut = tmp_path / "cut.json"
    cut.write_bytes(whole[: int(len(whole) * keep)])
    message = str(refused(cut))
    assert "cut.json" in message
    assert "cut short" in message


def test_a_trace_read_under_another_name_is_called_by_it(tmp_path: Path) -> None:
    copy = write(tmp_path / "upload-0", ONE_STEP)
    assert read_trace(copy, name="rank0.json").file == "rank0.json"
    (tmp_path / "upload-1").write_text("{}")
    with pytest.raises(InvalidInput) as caught:
        read_trace(tmp_path / "upload-1", name="rank1.json")
    assert caught.value.value == "rank1.json"


def test_a_damaged_gzip(tmp_path: Path) -> None:
    packed = gzip.compress(write(tmp_path / "r0.json", ONE_STEP).read_bytes())
    truncated = tmp_path / "cut.json.gz"
    truncated.write_bytes(packed[: len(packed) // 2])
    assert "cut.json.gz" in str(refused(truncated))
    garbled = tmp_path / "bad.json.gz"
    garbled.write_bytes(packed[:10] + b"\x00" * 50 + packed[60:])
    assert "bad.json.gz" in str(refused(garbled))


def test_missing_files_and_empty_folders(tmp_path: Path) -> None:
    assert "nowhere.json" in str(refused(tmp_path / "nowhere.json"))
    (tmp_path / "empty").mkdir()
    assert "empty" in str(refused(tmp_path / "empty"))
    with pytest.raises(InvalidInput):
        explain([])


def test_a_folder_is_read_whole_and_shown_by_rank(tmp_path: Path) -> None:
    write(tmp_path / "a.json", ONE_STEP, rank=1, world=2)
    write(tmp_path / "b.json", ONE_STEP, rank=0, world=2)
    (tmp_path / "notes.txt").write_text("not a trace")
    assert [(r.rank, Path(r.file).name) for r in explain(tmp_path).ranks] == [(0, "b.json"), (1, "a.json")]


def test_traces_without_ranks_are_numbered_in_the_files_order(tmp_path: Path) -> None:
    found = explain([write(tmp_path / name, ONE_STEP, rank=None) for name in ("b.json", "a.json")])
    assert [(r.rank, Path(r.file).name) for r in found.ranks] == [(0, "b.json"), (1, "a.json")]
    assert "numbered in the files' order" in found.to_dict()["notes"][0]


# -- the interval arithmetic, against a brute force on whole numbers --------------------------

spans = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=12)


def covered(intervals: Any) -> set[int]:
    return {t for start, end in intervals for t in range(int(start), int(end))}


@given(spans, spans, st.tuples(st.integers(0, 40), st.integers(0, 40)))
def test_interval_arithmetic_matches_counting(
    a: list[tuple[int, int]], b: list[tuple[int, int]], w: tuple[int, int]
) -> None:
    ua, ub = union(a), union(b)
    assert covered(pairs(ua)) == covered(a)
    assert all(x[1] < y[0] for x, y in itertools.pairwise(pairs(ua)))  # sorted, disjoint, not touching
    assert covered(pairs(difference(ua, ub))) == covered(pairs(ua)) - covered(pairs(ub))
    low, high = min(w), max(w)
    assert lengths_in(ua, [(low, high)]) == [len({t for t in covered(pairs(ua)) if low <= t < high})]


def test_a_notebook_shows_the_explanation_as_tables(tmp_path: Path) -> None:
    shown = explain(write(tmp_path / "r0.json", ONE_STEP))._repr_html_()
    assert "Slowest rank" in shown
    assert "Exposed comm." in shown


# -- the stream: the same events as json.loads, wherever the chunks end ------------------------

texts = st.text(alphabet=st.sampled_from(list('ab}{,[]": \\\n\u00e9')), max_size=8)
trace_events = st.lists(
    st.fixed_dictionaries(
        {"ph": st.sampled_from(["X", "M"]), "name": texts, "ts": st.floats(0, 1e6), "dur": st.integers(0, 99)},
        optional={"args": st.dictionaries(texts, st.one_of(texts, st.integers(), st.lists(st.integers(), max_size=3)))},
    ),
    max_size=12,
)


@given(
    trace_events,
    st.sampled_from([None, 0, 2]),
    st.sampled_from([1, 7, 64, 4096]),
    st.sampled_from([1, 16, 200, 2**16]),
    st.booleans(),
)
def test_the_stream_reads_what_json_reads(
    events: list[Any], indent: int | None, chunk: int, batch_size: int, bare: bool
) -> None:
    import io

    from dpscale.explain import stream

    document: Any = events if bare else {"schemaVersion": 1, "traceEvents": events, "traceName": "x"}
    text = json.dumps(document, indent=indent, ensure_ascii=False)
    kept: list[tuple[str, Any]] = []
    original = stream.CHUNK, stream.BATCH
    stream.CHUNK, stream.BATCH = chunk, batch_size  # chunks and batches end anywhere: in strings, numbers, events
    try:
        found = [
            e for batch in stream.events(io.StringIO(text), 10**6, lambda k, v: kept.append((k, v))) for e in batch
        ]
    finally:
        stream.CHUNK, stream.BATCH = original
    assert found == events
    if not bare:
        assert kept == [("schemaVersion", 1), ("traceEvents", None), ("traceName", "x")]


def test_only_a_cpu_trace_out_of_order_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dpscale.explain import rank_trace

    reads: list[bool] = []
    original = rank_trace._read_file

    def counted(path: Path, *, in_order: bool, **given: Any) -> Any:
        reads.append(in_order)
        return original(path, in_order=in_order, **given)

    monkeypatch.setattr(rank_trace, "_read_file", counted)
    kernels = [op("sm90_gemm", 0, 60, tid=7, cat="kernel"), op("ncclDevKernel_AllReduce", 50, 20, tid=8, cat="kernel")]
    gpu = explain(write(tmp_path / "gpu.json", list(reversed(ONE_STEP)) + kernels)).ranks[0]
    assert reads == [True]  # the host threads' order does not matter on a GPU
    assert_close(gpu.compute.mean, 60e-6)
    explain(write(tmp_path / "cpu.json", list(reversed(ONE_STEP))))
    assert reads == [True, True, False]
