"""nccl-tests' outputs read and fitted: ``dpscale probe --import``.

The fixtures under tests/data/nccl are logs written for these tests in nccl-tests' formats (an
8-GPU node and two such nodes, text of a current and of an older version, -I's per-iteration
columns, -J's JSON); their times follow NCCL's protocol changes with size, so that no straight
line fits them exactly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpscale.cli import main
from dpscale.collectives.costs import all_gather_time, all_reduce_time, reduce_scatter_time
from dpscale.collectives.link import Link
from dpscale.errors import InvalidInput
from dpscale.nccltests import import_logs, read_log
from dpscale.nccltests.profiling import as_link
from dpscale.predict.presets import from_profile, read_profile
from dpscale.records import NetworkProfile, write_profile

DATA = Path(__file__).parents[1] / "data" / "nccl"
ONE_NODE = DATA / "all_reduce_1node.txt"
TWO_NODES = DATA / "all_reduce_2nodes.txt"
RS = DATA / "reduce_scatter_1node.txt"
AG = DATA / "all_gather_2nodes.json"

HEADER = """# nccl-tests version 2.17.1 nccl-headers=22703 nccl-library=22703
# Collective test starting: all_reduce_perf
# Using devices
#  Rank  0 Group  0 Pid   1001 on      node1 device  0 [0000:18:00] NVIDIA A100-SXM4-80GB
#  Rank  1 Group  0 Pid   1001 on      node1 device  1 [0000:2a:00] NVIDIA A100-SXM4-80GB
#
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
"""


def row(time: str = "50.00", algbw: str = "20.97", busbw: str = "36.70", wrong: str = "0", redop: str = "sum") -> str:
    """One size of a table, both halves alike."""
    half = f"  {time:>7s}  {algbw:>6s}  {busbw:>6s}  {wrong:>6s}"
    return f"{1048576:12d}  {262144:12d}  {'float':>8s}  {redop:>6s}  {-1:6d}{half}{half}\n"


ROW = row()


def write(tmp_path: Path, text: str, name: str = "all_reduce_perf.log") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def measured(path: Path, size: int) -> float:
    times = sorted(r.seconds for r in read_log(path).rows if r.bytes == size)
    return times[len(times) // 2]


@pytest.mark.parametrize(
    ("path", "collective", "ranks", "hosts", "rows", "first"),
    [
        (ONE_NODE, "all_reduce", 8, 1, 62, 13.14e-6),
        (TWO_NODES, "all_reduce", 16, 2, 62, None),
        (RS, "reduce_scatter", 8, 1, 24, 11.10e-6),  # the time column, not -I's i_min beside it
        (AG, "all_gather", 16, 2, 22, None),
    ],
)
def test_fixtures_read(path: Path, collective: str, ranks: int, hosts: int, rows: int, first: float | None) -> None:
    log = read_log(path)
    assert (log.collective, log.ranks, log.hosts, log.devices_per_host) == (collective, ranks, hosts, ranks // hosts)
    assert log.device_name == "NVIDIA H100 80GB HBM3"
    assert len(log.rows) == rows  # both halves of every size
    assert {r.in_place for r in log.rows} == {False, True}
    if first is not None:
        assert log.rows[0].seconds == pytest.approx(first)


@pytest.mark.parametrize(
    ("token", "seconds"), [("6.21", 6.21e-6), ("135.8", 135.8e-6), ("47535", 0.047535), ("1.2e+05", 0.12)]
)
def test_times_in_every_printed_format(tmp_path: Path, token: str, seconds: float) -> None:
    log = read_log(write(tmp_path, HEADER + row(token, "1.00", "1.00", "N/A")))
    assert [r.seconds for r in log.rows] == pytest.approx([seconds, seconds])
    assert log.rows[0].algbw == pytest.approx(1e9)


def test_the_collective_from_busbw_over_algbw_when_the_log_does_not_say(tmp_path: Path) -> None:
    # An older nccl-tests prints no "Collective test starting" line; the file name says nothing.
    text = TWO_NODES.read_text(encoding="utf-8")
    assert "Collective test starting" not in text
    assert read_log(write(tmp_path, text, "run-0412.out")).collective == "all_reduce"
    bare = HEADER.replace("# Collective test starting: all_reduce_perf\n", "")
    for redop, busbw, collective in (
        ("none", "10.00", "all_gather"),
        ("sum", "10.00", "reduce_scatter"),
        ("sum", "60.00", None),
    ):
        path = write(tmp_path, bare + row("50.00", "20.00", busbw, redop=redop), "run-0413.out")
        if collective is None:  # busbw is neither 2(n−1)/n nor (n−1)/n of algbw
            with pytest.raises(InvalidInput, match="named after its test"):
                read_log(path)
        else:
            assert read_log(path).collective == collective


def test_split_groups_each_run_their_own_collective(tmp_path: Path) -> None:
    ranks = "".join(
        f"#  Rank {r:2d} Group {r % 2:2d} Pid   1001 on {'ab'[r // 4]:>10s} device {r % 4:2d} [0x1b] NVIDIA A100\n"
        for r in range(8)
    )
    text = HEADER.replace(HEADER.splitlines()[3] + "\n" + HEADER.splitlines()[4] + "\n", ranks)
    log = read_log(write(tmp_path, text + ROW))
    assert (log.ranks, log.hosts, log.devices_per_host) == (4, 2, 2)


def profile_of(*paths: Path) -> NetworkProfile:
    return import_logs([read_log(p) for p in paths]).profile


@pytest.mark.parametrize("paths", [(ONE_NODE,), (ONE_NODE, TWO_NODES), (TWO_NODES, ONE_NODE, RS, AG)])
def test_predict_gives_back_each_logs_time(tmp_path: Path, paths: tuple[Path, ...]) -> None:
    # Through the file predict --network reads and the function predict prices all-reduces with.
    out = tmp_path / "network.json"
    write_profile(out, profile_of(*paths))
    intra, inter, per_node = from_profile(str(out))
    assert per_node == 8
    for path in paths:
        log = read_log(path)
        if log.collective != "all_reduce":
            continue
        for size, tolerance in ((max(r.bytes for r in log.rows), 0.03), (min(r.bytes for r in log.rows), 0.05)):
            model = float(all_reduce_time(size, log.ranks, intra=intra, inter=inter, per_node=per_node))
            assert model == pytest.approx(measured(path, size), rel=tolerance), (path.name, size)


def test_tiers_come_from_the_runs_that_measured_them() -> None:
    one = profile_of(ONE_NODE)
    assert one.inter is None
    assert one.intra is not None
    assert (one.world_size, one.nodes, one.devices_per_node) == (8, 1, 8)
    both = profile_of(ONE_NODE, TWO_NODES)
    assert both.intra == one.intra  # the node's links come from the one-node run only
    assert both.inter is not None
    assert (both.world_size, both.nodes) == (16, 2)
    # 478 GB/s of busbw on H100s, above NVLink 4's 450: reduced in the NVSwitches (NVLS), which move S at
    # 0.85 × 5/6 of the links' rate (NCCL's tuning model): the node's links are the plateau's algbw over that.
    plateau = max(r.algbw for r in read_log(ONE_NODE).rows)
    assert one.intra is not None
    assert one.intra.in_network
    assert 0.9 < one.intra.bandwidth * 0.85 * 5 / 6 / plateau < 1.1
    # α counted by the steps of the algorithm that runs: in a node the ring's 2(n−1) = 14 (13.1–13.6 µs in all)
    assert 0.5e-6 < one.intra.latency < 14e-6 / 14  # type: ignore[union-attr]
    every = profile_of(ONE_NODE, TWO_NODES, RS, AG)
    assert set(every.collectives) == {"all_reduce", "reduce_scatter", "all_gather"}
    assert every.collectives["reduce_scatter"][1] is None
    assert every.collectives["all_gather"][0] is None
    assert (every.intra, every.inter) == every.collectives["all_reduce"]


def test_reduce_scatter_and_all_gather_give_back_their_times() -> None:
    # Through the functions predict prices sharded data parallelism with.
    every = profile_of(ONE_NODE, TWO_NODES, RS, AG)
    fitted = every.collectives["reduce_scatter"][0]
    assert fitted is not None
    node = Link(fitted.bandwidth, fitted.latency)
    (rs,) = import_logs([read_log(RS)]).checks
    assert rs.largest[2] == pytest.approx(float(reduce_scatter_time(rs.largest[0], 8, intra=node)))
    for size, seconds, model in (rs.largest, rs.smallest):
        assert model == pytest.approx(seconds, rel=0.05), size
    intra = Link(every.intra.bandwidth, every.intra.latency)  # type: ignore[union-attr]
    network = every.collectives["all_gather"][1]
    assert network is not None
    inter = Link(network.bandwidth, network.latency)
    for size in (max(r.bytes for r in read_log(AG).rows), min(r.bytes for r in read_log(AG).rows)):
        model = float(all_gather_time(size, 16, intra=intra, inter=inter, per_node=8))
        assert model == pytest.approx(measured(AG, size), rel=0.05), size
    assert import_logs([read_log(RS)]).profile.sizes == ()  # no all-reduce was timed


def test_profile_round_trip_and_old_profiles_unchanged() -> None:
    every = profile_of(ONE_NODE, TWO_NODES, RS, AG)
    data = json.loads(json.dumps(every.to_dict()))
    assert data["intra"]["in_network"] is True  # the one-node run was reduced in the switches
    assert NetworkProfile.from_dict(data) == every  # in_network kept by the record, as predict reads it
    assert data["source"] == "nccl-tests"
    assert data["device_name"] == "NVIDIA H100 80GB HBM3"
    probed = {
        "world_size": 2, "nodes": 1, "devices_per_node": 2, "backend": "gloo", "device_type": "cpu",
        "torch": "2.4.0", "intra": {"bandwidth": 1.8e9, "latency": 1e-3, "efficiency": 1.0}, "inter": None,
        "sizes": [{"bytes": 8, "seconds": 1e-3, "algbw": 8e3, "busbw": 8e3}], "time": "2024-05-01T12:00:00Z",
    }  # fmt: skip
    assert NetworkProfile.from_dict(probed).to_dict() == probed


def test_sizes_hold_the_widest_all_reduce() -> None:
    every = profile_of(ONE_NODE, TWO_NODES)
    assert len(every.sizes) == 31
    assert every.sizes[0].bytes == 8
    largest = every.sizes[-1]
    assert largest.busbw == pytest.approx(largest.algbw * 2 * 15 / 16)


@pytest.mark.parametrize(
    ("text", "where", "expected"),
    [
        (HEADER + ROW.replace("50.00", "5O.00", 1), "line 9", "a number in column time"),
        (HEADER + ROW.replace("50.00", "nan", 1), "line 9", "a number in column time"),
        (HEADER + ROW.replace("50.00", "1_000", 1), "line 9", "a number in column time"),
        (HEADER + ROW.rsplit("  ", 3)[0] + "\n", "line 9", "a row of 13 columns"),
        (HEADER + row(wrong="7"), "line 9", "results that are right"),
        (HEADER + ROW + HEADER + row(wrong="7"), "line 18", "results that are right"),  # in a second run
        (HEADER.replace("#  Rank  1", "#  Rank  0") + ROW, "line 5", "each rank listed once"),
        (
            HEADER.replace("node1 device  1", "node2 device  1").replace(
                "#  Rank  1", "#  Rank  2 Group  0 Pid 1 on node2 device 2 [0x1] X\n#  Rank  1"
            )
            + ROW,
            "",
            "the same number of ranks on every host",
        ),
        ("\n".join(line for line in HEADER.splitlines() if "Rank  1" not in line) + "\n" + ROW, "", "at least 2 ranks"),
        ("\n".join(line for line in HEADER.splitlines() if "Rank" not in line) + "\n" + ROW, "", "'# Using devices'"),
        (HEADER, "", "at least one size"),
        ("hello\nworld\n", "", "all_reduce_perf, reduce_scatter_perf or all_gather_perf"),
        (HEADER.replace("all_reduce_perf", "alltoall_perf") + ROW, "", "all_reduce_perf, reduce_scatter_perf"),
        ("", "", "all_reduce_perf, reduce_scatter_perf or all_gather_perf"),
        (HEADER + "x" * 70_000 + "\n", "line 9", "lines of at most"),
        (HEADER + "12\x0034\n", "line 9", "not binary data"),
    ],
)
def test_bad_logs_name_the_file_line_and_what_was_expected(
    tmp_path: Path, text: str, where: str, expected: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(InvalidInput) as error:
        read_log(path)
    assert path.name in str(error.value)
    assert where in str(error.value)
    assert expected in str(error.value)


def test_times_that_do_not_grow_with_size_are_refused(tmp_path: Path) -> None:
    rows = "".join(
        row(f"{t:.2f}").replace(" 1048576", f"{s:8d}", 1)
        for s, t in ((1024, 90.0), (1048576, 60.0), (1073741824, 30.0))
    )
    with pytest.raises(InvalidInput, match="grow with the message size"):
        import_logs([read_log(write(tmp_path, HEADER + rows))])


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d.pop("config"), "config"),
        (lambda d: d["config"]["devices"][3].update(rank="3"), r"config.devices\[3\].rank"),
        (lambda d: d["results"][2]["in_place"].update(time="nan"), r"results\[2\].in_place.time"),
        (lambda d: d["results"][0].update(size=-5), None),
        (lambda d: d["results"][1]["out_of_place"].update(nwrong=4.0), r"results\[1\].out_of_place.nwrong"),
        (lambda d: d.update(results={}), "results"),
    ],
)
def test_bad_json_names_the_key(tmp_path: Path, change: object, expected: str | None) -> None:
    data = json.loads(AG.read_text(encoding="utf-8"))
    change(data)  # type: ignore[operator]
    path = write(tmp_path, json.dumps(data), "all_gather.json")
    if expected is None:  # a size that is not one: refused as not a whole number of bytes
        with pytest.raises(InvalidInput, match="bytes"):
            read_log(path)
        return
    with pytest.raises(InvalidInput, match=expected):
        read_log(path)


def test_json_with_infinity_or_nesting_is_refused(tmp_path: Path) -> None:
    text = AG.read_text(encoding="utf-8").replace('"time":', '"time":Infinity,"x":', 1)
    with pytest.raises(InvalidInput, match="finite"):
        read_log(write(tmp_path, text, "ag.json"))
    with pytest.raises(InvalidInput, match="nested too deeply"):
        read_log(write(tmp_path, "{" + '"a":' + "[\n" * 100_000, "deep.json"))
    huge = AG.read_text(encoding="utf-8").replace('"env":[', '"env":["' + "X=" + "y" * 100_000 + '",', 1)
    assert read_log(write(tmp_path, huge, "ag.json")).ranks == 16  # -J writes one line, the environment in it


def test_node_shapes_must_agree(tmp_path: Path) -> None:
    text = TWO_NODES.read_text(encoding="utf-8")
    for r in range(4, 8):  # ranks 4-7 move to a third host: 3 hosts of 4, 4 and 8 ranks
        text = text.replace(
            f"#  Rank  {r} Group  0 Pid  {48990 + r} on    gpu-a01",
            f"#  Rank  {r} Group  0 Pid  {48990 + r} on    gpu-a03",
        )
    with pytest.raises(InvalidInput, match="same number of ranks on every host"):
        read_log(write(tmp_path, text, "all_reduce_perf_3.txt"))


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    out, err = capsys.readouterr()
    code = exited.value.code
    return (code if isinstance(code, int) else 1), out, err


def test_cli_writes_the_profile(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "sub" / "network.json"
    code, printed, err = run_cli(
        capsys, "probe", "--import", str(ONE_NODE), "--import", str(TWO_NODES), "--out", str(out)
    )
    assert code == 0
    # nothing on stderr but, where the CLI says the fit's notes, the H100s' reduction in the switches
    assert all(line.startswith("note:") and "NVLink SHARP" in line for line in err.splitlines())
    assert "Fitted from nccl-tests (NVIDIA H100 80GB HBM3)" in printed
    assert "all_reduce_2nodes.txt" in printed
    assert f"Profile written to {out}" in printed
    written = read_profile(str(out))
    expected = profile_of(ONE_NODE, TWO_NODES)
    assert (written.intra, written.inter) == (as_link(expected.intra), as_link(expected.inter))
    assert written.intra is not None
    assert written.intra.in_network  # the H100s' NVLS, as the fit found it
    code, printed, err = run_cli(capsys, "probe", "--import", str(RS), "--out", str(out), "--json")
    assert code == 0
    assert json.loads(printed)["collectives"]["reduce_scatter"]["inter"] is None


def test_cli_fits_every_run_of_a_file_and_notes_what_it_left_out(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """One file holding a node's run, the two nodes' run and an alltoall: both tiers fitted, the alltoall noted."""
    alltoall = ONE_NODE.read_text(encoding="utf-8").replace("all_reduce_perf", "alltoall_perf")
    both = tmp_path / "sweep.log"
    both.write_text(
        ONE_NODE.read_text(encoding="utf-8") + TWO_NODES.read_text(encoding="utf-8") + alltoall, encoding="utf-8"
    )
    out = tmp_path / "network.json"
    code, printed, err = run_cli(capsys, "probe", "--import", str(both), "--out", str(out))
    assert code == 0, err
    assert "sweep.log:1 " in printed  # each run checked under its own first line
    written = read_profile(str(out))
    expected = profile_of(ONE_NODE, TWO_NODES)
    assert (written.intra, written.inter) == (as_link(expected.intra), as_link(expected.inter))
    # the reader's note (the alltoall left out) and the fit's (the node's run reduced in its switches)
    assert err.count("note:") == 2
    assert "alltoall" in err
    assert "reduced in the switches" in err


def test_cli_bad_log_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + ROW.replace("50.00", "fast", 1))
    code, printed, err = run_cli(capsys, "probe", "--import", str(path), "--out", str(tmp_path / "n.json"))
    assert code == 2
    assert printed == ""
    assert err.count("\n") == 1
    assert f"{path}, line 9" in err
    assert "a number in column time" in err
    code, _, err = run_cli(capsys, "probe", "--import", str(tmp_path / "none.txt"))
    assert code == 2
    assert "none.txt" in err
    code, _, err = run_cli(capsys, "probe", "--import", str(ONE_NODE), "--out", str(tmp_path))
    assert code == 2
    assert err.startswith("error: out:")


def test_import_needs_no_torch(tmp_path: Path) -> None:
    # torch made unimportable: the import still runs, as on a laptop far from the cluster.
    script = (
        "import sys; sys.modules['torch'] = None; from dpscale.cli import main; "
        f"main(['probe', '--import', {str(ONE_NODE)!r}, '--out', {str(tmp_path / 'n.json')!r}, '--json'])"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["source"] == "nccl-tests"


def test_one_size_is_not_enough_to_fit(tmp_path: Path) -> None:
    # nccl-tests' defaults (-b 32M -e 32M) time a single size: no line through one point.
    with pytest.raises(InvalidInput, match="several sizes"):
        import_logs([read_log(write(tmp_path, HEADER + ROW))])


def test_a_log_read_from_a_pipe(tmp_path: Path) -> None:
    # dpscale probe --import <(ssh node cat log): a stream that cannot be read twice.
    fifo = tmp_path / "all_reduce.fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"cat {ONE_NODE} > {fifo}"])
    try:
        log = read_log(fifo)
    finally:
        writer.wait(timeout=30)
    assert (log.collective, log.ranks, len(log.rows)) == ("all_reduce", 8, 62)


@pytest.mark.parametrize("label", ["0: ", "[1,0]<stdout>:"])
def test_lines_labelled_by_srun_or_mpirun(tmp_path: Path, label: str) -> None:
    # srun -l and mpirun --tag-output put the task before every line.
    text = "".join(label + line + "\n" for line in ONE_NODE.read_text(encoding="utf-8").splitlines())
    log = read_log(write(tmp_path, text))
    assert (log.collective, log.ranks, len(log.rows)) == ("all_reduce", 8, 62)


@pytest.mark.parametrize(
    "header",
    [
        "#  size  count  type  time  algbw  busbw\n",  # no #wrong after busbw
        "#  size  count  type  time\n",
        "#  size  algbw  busbw  time\n",
    ],
)
def test_a_header_without_its_columns_is_not_a_table(tmp_path: Path, header: str) -> None:
    text = HEADER.splitlines(keepends=True)
    body = "".join(text[:6]) + header + "0: \n" + "    1048576    262144    float    50.00    20.97    36.70\n"
    with pytest.raises(InvalidInput, match="all_reduce_perf, reduce_scatter_perf or all_gather_perf"):
        read_log(write(tmp_path, body))


LINES = ONE_NODE.read_text(encoding="utf-8").splitlines()


@given(
    st.lists(
        st.one_of(
            st.sampled_from(LINES),
            st.sampled_from(LINES).map(lambda line: line[: len(line) // 2]),
            st.text(alphabet='# 0123456789.e+-N/Aabcdeimnprstuwz:[]{}"', max_size=80),
        ),
        max_size=40,
    )
)
def test_any_mix_of_log_lines_is_read_or_refused(tmp_path_factory: pytest.TempPathFactory, lines: list[str]) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "all_reduce_perf.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        log = read_log(path)
    except InvalidInput:
        return
    assert log.ranks >= 2
    assert all(row.seconds > 0 and row.bytes > 0 for row in log.rows)
    try:
        import_logs([log])
    except InvalidInput:
        return


@pytest.mark.parametrize(
    ("collectives", "field"),
    [
        ("all", "collectives"),
        ({"all_reduce": [1]}, "collectives"),
        ({"all_reduce": {"intra": {"latency": 1}}}, "bandwidth"),
    ],
)
def test_a_profile_with_bad_collectives_is_refused(collectives: object, field: str) -> None:
    data = profile_of(ONE_NODE).to_dict()
    data["collectives"] = collectives
    with pytest.raises(InvalidInput) as error:
        NetworkProfile.from_dict(data)
    assert error.value.field == field


def test_a_run_across_nodes_alone_gives_the_network_tier_only() -> None:
    # Without a one-node run the node's links are taken as free: the network carries all the time.
    alone = profile_of(TWO_NODES)
    assert alone.intra is None
    assert alone.inter is not None
    with_node = profile_of(ONE_NODE, TWO_NODES).inter
    assert with_node is not None
    # a ring's bytes across nodes move at the slower of the node's links and its network: the network here
    assert alone.inter.bandwidth == pytest.approx(with_node.bandwidth, rel=0.01)
    assert alone.inter.latency > with_node.latency  # the node's steps' latency now sits on the network
    (check,) = import_logs([read_log(TWO_NODES)]).checks
    assert check.largest[2] == pytest.approx(check.largest[1], rel=0.03)
