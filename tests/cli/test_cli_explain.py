"""``dpscale explain`` on the command line: the table, the JSON, and one line on stderr for a bad trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import run
from tests.explain.test_explain import GLOO, ONE_STEP, op, step, write


def two_ranks(folder: Path) -> Path:
    fast = [step(1, 0, 100), op("aten::mm", 0, 40), op("gloo:all_reduce", 40, 55, tid=GLOO, cat="user_annotation")]
    slow = [step(1, 0, 100), op("aten::mm", 0, 70), op("gloo:all_reduce", 70, 25, tid=GLOO, cat="user_annotation")]
    write(folder / "rank0.json", fast, rank=0, world=2)
    write(folder / "rank1.json", slow, rank=1, world=2)
    return folder


def test_table_by_rank_and_levers(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "explain", str(two_ranks(tmp_path)))
    assert (code, err) == (0, "")
    assert "Slowest rank" in out
    assert "Exposed comm." in out
    assert "0.04 ms" in out  # rank 0's compute, 40 µs
    assert "balance the work across ranks" in out
    assert "60%" in out  # the efficiency the run implies: (45 + 75) / 200


def test_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "explain", str(two_ranks(tmp_path)), "--json")
    assert (code, err) == (0, "")
    payload = json.loads(out)
    assert payload["slowest_rank"] == 1
    assert [r["rank"] for r in payload["ranks"]] == [0, 1]
    assert {"calibration", "levers", "efficiency", "steps"} <= set(payload)
    assert payload["calibration"]["single_device_step"] == pytest.approx(60e-6)


def test_french(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "explain", str(write(tmp_path / "r0.json", ONE_STEP)), "--lang", "fr")
    assert code == 0
    assert "Rang le plus lent" in out
    assert "0,035\u202fms" in out  # compute, 35 µs, with French spacing


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00", "UTF-8"),
        (b'{"traceEvents": [{"ph": "X", "na', "cut short"),
        (b'{"traceEvents": []}', "ProfilerStep"),
        (b"\x1f\x8b\x08\x00garbage", "gzip"),
    ],
)
def test_bad_trace_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, expected: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    code, out, err = run(capsys, "explain", str(bad))
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("error: trace:")
    assert "bad.json" in err
    assert expected in err


def test_missing_file_and_different_steps(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "explain", str(tmp_path / "nowhere.json"))
    assert code == 2
    assert err.count("\n") == 1
    write(tmp_path / "r0.json", [step(1, 0, 10), step(2, 10, 10)], rank=0, world=2)
    write(tmp_path / "r1.json", [step(1, 0, 10)], rank=1, world=2)
    code, _, err = run(capsys, "explain", str(tmp_path), "--lang", "fr")
    assert code == 2
    assert err.count("\n") == 1
    assert "les mêmes étapes du profileur" in err


def test_the_columns_add_to_the_step_and_the_wait_is_inside_exposed_communication(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Rank 0: 40 µs compute + 55 exposed (30 of them waiting for rank 1) + 5 other = 100; rank 1: 70 + 25 + 5.
    code, out, _ = run(capsys, "explain", str(two_ranks(tmp_path)))
    assert code == 0
    lines = [line.split("   ") for line in out.splitlines()]
    header = next([c.strip() for c in line if c.strip()] for line in lines if "Rank" in line[0])
    assert header == [
        "Rank",
        "Steps",
        "Step",
        "Compute",
        "Exposed comm.",
        "Other",
        "Alone (compute + other)",
        "Overlap",
    ]
    assert "Wait" not in header
    assert "0.055 ms (0.03 ms waiting)" in out
    rows = [[c.strip() for c in line if c.strip()] for line in lines if len(line) > 5 and line[-1].strip() == "0%"]
    assert len(rows) == 2
    for cells in rows:
        step, compute, exposed, other, alone = (float(c.split()[0]) for c in cells[2:7])
        assert compute + exposed + other == pytest.approx(step)
        assert alone == pytest.approx(compute + other)
    assert "0.045 ms to 0.075 ms by rank, mean 0.06 ms" in out  # not a mean alone of a fast and a slow rank


def test_the_traces_are_its_definitions_one_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from dpscale.calculators.explain import EXPLAIN

    assert [item.name for item in EXPLAIN.on("cli")] == ["trace"]
    assert EXPLAIN.on("page") == EXPLAIN.on("api") == ()
    code, out, _ = run(capsys, "explain", "--help")
    assert code == 0
    assert "Usage: dpscale explain [OPTIONS] {TRACE...}" in out  # every argument left, at least one
    assert "[required]" in out
    code, _, err = run(capsys, "explain")
    assert code == 2
    assert err == "error: dpscale explain: Missing argument 'TRACE...'. (see --help)\n"
    rank0, rank1 = two_ranks(tmp_path) / "rank0.json", tmp_path / "rank1.json"
    code, out, err = run(capsys, "explain", str(rank0), str(rank1), "--json")
    assert (code, err) == (0, "")
    assert [r["rank"] for r in json.loads(out)["ranks"]] == [0, 1]
