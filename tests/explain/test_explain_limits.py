"""What reading a trace may cost, whatever the file holds: each limit, met by a file made to pass it.

Nothing here races the clock: each case feeds a crafted file (a gzip bomb, events with huge names,
more events than a limit allows) and checks the refusal, or what was kept (tracemalloc's peak
against the bound the structures give by construction).
"""

from __future__ import annotations

import gzip
import io
import json
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dpscale import InvalidInput
from dpscale.explain import explain, limits, rank_trace, read_trace, stream
from dpscale.explain.limits import Budget
from tests.cli.test_cli import run
from tests.conftest import assert_close
from tests.explain.test_explain import ONE_STEP, op, step, write

MIB = 2**20


def trace_text(lines: Iterator[str], *, head: str = "") -> Iterator[str]:
    """A trace's JSON, a piece at a time: one profiler step over everything, then ``lines``, one event each."""
    yield "{" + head + '"traceEvents": [\n'
    yield json.dumps(step(1, 0, 1e12))
    for line in lines:
        yield ",\n" + line
    yield "\n]}"


def write_text(path: Path, pieces: Iterator[str], *, zipped: bool = False) -> Path:
    opener: Callable[..., Any] = gzip.open if zipped else open
    with opener(path, "wt", encoding="utf-8") as out:
        for piece in pieces:
            out.write(piece)
    return path


def kernels(count: int) -> Iterator[str]:
    return (
        f'{{"ph": "X", "cat": "kernel", "name": "k", "pid": 1, "tid": 7, "ts": {2 * i}, "dur": 1}}'
        for i in range(count)
    )


def peak_of(work: Callable[[], Any]) -> tuple[Any, int]:
    """What ``work`` returns (or raises), and the most memory Python held at once while it ran, in bytes."""
    tracemalloc.start()
    try:
        try:
            found: Any = work()
        except InvalidInput as exc:
            found = exc
        return found, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# -- one rule for a byte-order mark, as the browser reads it ------------------------------------


@pytest.mark.parametrize("zipped", [False, True])
def test_a_byte_order_mark_is_read_as_the_browser_reads_it(tmp_path: Path, zipped: bool) -> None:
    plain = write(tmp_path / "plain.json", ONE_STEP).read_bytes()
    marked = b"\xef\xbb\xbf" + plain
    path = tmp_path / ("bom.json.gz" if zipped else "bom.json")
    path.write_bytes(gzip.compress(marked) if zipped else marked)
    found = read_trace(path)
    expected = read_trace(tmp_path / "plain.json")
    assert (found.steps, found.compute, found.communication) == (
        expected.steps,
        expected.compute,
        expected.communication,
    )


def test_the_command_line_reads_a_trace_with_a_byte_order_mark(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + write(tmp_path / "r0.json", ONE_STEP).read_bytes())
    code, out, err = run(capsys, "explain", str(path), "--json")
    assert (code, err) == (0, "")
    assert_close(json.loads(out)["ranks"][0]["compute"], 35e-6)


# -- an event Python cannot decode is counted and left out, the file is read ---------------------


def test_an_integer_past_pythons_digits_leaves_its_event_out(tmp_path: Path) -> None:
    events = [json.dumps(e) for e in ONE_STEP]
    events.insert(2, '{"ph": "X", "name": "aten::mm", "ts": 1, "dur": %s}' % ("9" * 5000))
    path = write_text(tmp_path / "digits.json", iter(['{"traceEvents": [', ",".join(events), "]}"]))
    found = explain(path)
    assert found.ranks[0].skipped == 1
    assert_close(found.ranks[0].compute.mean, 35e-6)
    assert any("1 events could not be read" in note for note in found.to_dict()["notes"])


def test_nesting_deeper_than_python_reads_leaves_its_event_out(tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    events = [json.dumps(e) for e in ONE_STEP]
    events.insert(1, '{"ph": "X", "name": "aten::mm", "ts": 1, "dur": 2, "args": {"shapes": ' + deep + "}}")
    head = '"distributedInfo": {"rank": 0, "deep": ' + deep + "}, "  # a top-level value: left out, not fatal
    path = write_text(tmp_path / "deep.json", iter(["{" + head + '"traceEvents": [', ",".join(events), "]}"]))
    found = explain(path)
    assert found.ranks[0].skipped == 1
    assert_close(found.ranks[0].compute.mean, 35e-6)


def test_the_stream_steps_over_what_python_cannot_decode() -> None:
    digits, deep = "1" * 5000, "[" * 5000 + "]" * 5000
    text = '{"traceEvents": [{"a": 1}, {"b": ' + digits + '}, {"c": [' + deep + "]}, 7]}"
    found = [e for batch in stream.events(io.StringIO(text), 10**6, lambda k, v: None) for e in batch]
    assert found == [{"a": 1}, stream.UNREADABLE, stream.UNREADABLE, 7]


def test_a_batch_that_fails_is_read_one_event_at_a_time_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every event's name holds '},{': the last '}' of each batch seems to end an event and does not.
    events = [{"ph": "X", "name": "x},{" * (i % 5), "ts": i, "dur": 1} for i in range(5000)]
    text = json.dumps({"traceEvents": events})
    scanned = 0
    original = stream._scan

    def counted(given: str, at: int) -> Any:
        nonlocal scanned
        if at == 0 and given.startswith("["):  # a batch, wrapped in brackets
            scanned += len(given)
        return original(given, at)

    monkeypatch.setattr(stream, "_scan", counted)
    monkeypatch.setattr(stream, "BATCH", 4096)
    monkeypatch.setattr(stream, "CHUNK", 8192)
    found = [e for batch in stream.events(io.StringIO(text), 10**8, lambda k, v: None) for e in batch]
    assert found == events
    assert scanned <= 2 * len(text)  # each character in at most a batch or two: linear, whatever the names


# -- what a file may hold -----------------------------------------------------------------------


def test_ten_thousand_huge_names_keep_none_of_them(tmp_path: Path) -> None:
    # The attack of issue 23, smaller: each event has a name of its own, 20 000 characters long.
    names = (json.dumps(op("a" * 20_000 + str(i), i + 1, 1, tid=1)) for i in range(2000))
    path = write_text(tmp_path / "names.json.gz", trace_text(names), zipped=True)
    found, peak = peak_of(lambda: read_trace(path))
    assert found.skipped == 0
    assert peak < 16 * MIB  # 40 MB of names were read: none is kept


@pytest.mark.parametrize(
    ("limit", "events", "said"),
    [
        ("MAX_KEPT", kernels, "at most 1000 timed events"),
        ("MAX_EVENTS", lambda n: (f'{{"ph": "i", "ts": {i}}}' for i in range(n)), "at most 1000 events"),
        ("MAX_STEPS", lambda n: (json.dumps(step(i + 2, i, 1)) for i in range(n)), "at most 1000 profiler steps"),
        ("MAX_THREADS", lambda n: (json.dumps(op("aten::mm", i, 1, tid=i)) for i in range(n)), "at most 1000 threads"),
    ],
)
def test_a_file_past_a_limit_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: str, events: Callable[[int], Iterator[str]], said: str
) -> None:
    monkeypatch.setattr(rank_trace, limit, 1000)
    path = write_text(tmp_path / "many.json", trace_text(events(5000)))
    with pytest.raises(InvalidInput) as caught:
        read_trace(path, name="many.json")
    assert caught.value.field == "trace"
    assert said in str(caught.value)
    assert "many.json" in str(caught.value)
    read_trace(write_text(tmp_path / "some.json", trace_text(events(900))))  # under it: read


def test_a_file_of_more_kernels_than_allowed_is_refused_before_it_is_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The attack of issue 23 scaled down: the limit at 20 000, a file of 400 000 kernels (20 MB).
    monkeypatch.setattr(rank_trace, "MAX_KEPT", 20_000)
    path = write_text(tmp_path / "kernels.json.gz", trace_text(kernels(400_000)), zipped=True)
    refused, peak = peak_of(lambda: read_trace(path))
    assert isinstance(refused, InvalidInput)
    assert "at most 20000 timed events" in str(refused)
    assert peak < 8 * MIB  # a window of text, a batch and 20 000 kernels' 16 bytes: not the file's 20 MB


def test_memory_is_a_small_multiple_of_the_text_and_16_bytes_a_kernel(tmp_path: Path) -> None:
    count = 100_000
    path = write_text(tmp_path / "kernels.json", trace_text(kernels(count)))
    found, peak = peak_of(lambda: read_trace(path))
    assert len(found.compute) == 2 * count  # disjoint: each kernel kept, as two floats
    size = path.stat().st_size
    assert size > 5 * MIB
    assert peak < 4 * size
    assert peak < 3 * MIB + 5 * 16 * count  # the window and a batch, then the kernels and their union's work


def test_an_out_of_order_cpu_trace_is_sorted_in_flat_arrays(tmp_path: Path) -> None:
    events = [op("aten::mm", 1000 - i, 0.5) for i in range(1000)] + [step(1, 0, 2000)]
    found = read_trace(write(tmp_path / "reversed.json", events))
    assert len(found.compute) == 2 * 1000
    assert_close(sum(found.compute[1::2]) - sum(found.compute[0::2]), 500.0)


# -- what the files of one request may hold together (the server's budget) ----------------------


def bomb(path: Path, mib: int) -> Path:
    """A gzip bomb: ``mib`` MiB of white space inside a trace's brackets, some thousand times smaller."""
    with gzip.open(path, "wb", compresslevel=9) as out:
        out.write(b'{"traceEvents": [')
        for _ in range(mib):
            out.write(b" " * MIB)
        out.write(b"]}")
    return path


def test_a_gzip_bomb_is_refused_at_its_ratio(tmp_path: Path) -> None:
    path = bomb(tmp_path / "bomb.json.gz", 256)
    assert path.stat().st_size < MIB  # 256 MiB of JSON inside
    budget = Budget()
    refused, peak = peak_of(lambda: read_trace(path, budget=budget))
    assert isinstance(refused, InvalidInput)
    assert "unzips to at most 100 times its size" in str(refused)
    read = limits.MAX_REQUEST_TEXT - budget.text
    assert read <= max(100 * path.stat().st_size, limits.GZIP_FLOOR) + stream.CHUNK  # stopped there, not at 256 MiB
    assert peak < 16 * MIB
    assert "at most 1073741824 characters of JSON" not in str(refused)


def test_the_files_of_one_request_share_a_budget(tmp_path: Path) -> None:
    first = write(tmp_path / "r0.json", ONE_STEP, rank=0, world=2)
    second = write(tmp_path / "r1.json", ONE_STEP, rank=1, world=2)
    size = first.stat().st_size
    budget = Budget(most_text=int(1.5 * size))
    read_trace(first, budget=budget)
    with pytest.raises(InvalidInput) as caught:
        read_trace(second, name="r1.json", budget=budget)
    assert "characters of JSON in all the files sent at once" in str(caught.value)
    assert "r1.json" in str(caught.value)
    budget = Budget(most_kept=len(ONE_STEP) + 2)
    read_trace(first, budget=budget)
    with pytest.raises(InvalidInput) as caught:
        read_trace(second, budget=budget)
    assert "timed events (operators, kernels, collectives) in all the files sent at once" in str(caught.value)
    budget = Budget(most_steps=1)
    read_trace(first, budget=budget)
    with pytest.raises(InvalidInput) as caught:
        read_trace(second, budget=budget)
    assert "profiler steps in all the files sent at once" in str(caught.value)


def test_a_cpu_trace_read_twice_is_counted_once(tmp_path: Path) -> None:
    path = write(tmp_path / "reversed.json", list(reversed(ONE_STEP)))
    budget = Budget()
    read_trace(path, budget=budget)
    assert limits.MAX_REQUEST_TEXT - budget.text == path.stat().st_size
    assert limits.MAX_REQUEST_KEPT - budget.kept == len(ONE_STEP)


def test_the_limits_say_why_their_values() -> None:
    assert limits.MAX_KEPT * 40 < 256 * MIB  # a file's kept events, at 40 bytes at most each
    assert limits.MAX_REQUEST_KEPT * 40 + limits.MAX_REQUEST_STEPS * 400 < 512 * MIB
    assert limits.MAX_NAMES * limits.MAX_NAME * 4 <= 16 * MIB  # names remembered, at 4 bytes a character


def test_a_step_of_many_intervals_is_drawn_at_a_screens_resolution(tmp_path: Path) -> None:
    from dpscale.explain.timeline import MAX_DRAWN, drawn_most, step_drawing

    events = [step(1, 0, 100_000)] + [op("aten::mm", 10 * i, 4) for i in range(5000)]
    found = read_trace(write(tmp_path / "r0.json", events))
    whole = step_drawing(found, most=10_000)
    assert len(whole.compute) == 5000  # under the bound: every interval, as before
    drawn = step_drawing(found)
    assert len(drawn.compute) <= MAX_DRAWN + 1
    assert drawn.compute[0][0] == whole.compute[0][0]
    assert drawn.compute[-1][1] == whole.compute[-1][1]
    coarse = step_drawing(found, most=100)
    assert len(coarse.compute) <= 101
    assert sum(b - a for a, b in coarse.compute) >= sum(b - a for a, b in whole.compute)  # nothing left out
    assert drawn_most(1) == MAX_DRAWN
    assert drawn_most(4096) * 2 * 4096 <= 2 * 100_000  # a page of 4096 ranks draws some 100 000 at most


def test_the_command_line_says_a_limit_in_one_line_and_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rank_trace, "MAX_KEPT", 1000)
    path = write_text(tmp_path / "kernels.json", trace_text(kernels(5000)))
    code, out, err = run(capsys, "explain", str(path))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert "kernels.json" in err
    assert "at most 1000 timed events" in err


@pytest.mark.parametrize(("chunk", "batch_size"), [(7, 1), (64, 16), (4096, 2**16), (2**20, 2**16)])
def test_what_python_cannot_decode_is_stepped_over_wherever_the_chunks_end(
    monkeypatch: pytest.MonkeyPatch, chunk: int, batch_size: int
) -> None:
    monkeypatch.setattr(stream, "CHUNK", chunk)
    monkeypatch.setattr(stream, "BATCH", batch_size)
    good = [{"ph": "X", "name": "a},{b", "ts": i, "dur": [1, {"x": "]"}]} for i in range(3)]
    digits = '{"ph": "X", "ts": ' + "7" * 4400 + ', "name": "}]"}'
    deep = '{"args": ' + "[" * 1500 + '"]}"' + "]" * 1500 + ', "ts": -12.5e3}'
    parts = [json.dumps(good[0]), digits, json.dumps(good[1]), deep, "-" + "1" * 4400, json.dumps(good[2])]
    text = '{"schemaVersion": ' + "9" * 4400 + ', "traceEvents": [\n ' + ",\n ".join(parts) + '], "x": 1}'
    kept: list[tuple[str, Any]] = []
    found = [e for batch in stream.events(io.StringIO(text), 10**7, lambda k, v: kept.append((k, v))) for e in batch]
    unreadable = stream.UNREADABLE
    assert found == [good[0], unreadable, good[1], unreadable, unreadable, good[2]]
    assert kept == [("schemaVersion", unreadable), ("traceEvents", None), ("x", 1)]
