"""nccl-tests' outputs in every layout people post them in: ``dpscale probe --import`` reads them all.

Two kinds of logs: the real ones under tests/data/nccl/validation (public posts, their sources in
its INDEX.csv), read to the ranks, hosts and collective INDEX.csv says; and logs written here in
each layout nccl-tests has printed (old: no ``Group``, an ``error`` column, the all-gather without
``redop``; middle: ``Group``, ``root``, ``#wrong``; new: ``# nccl-tests version``, ``# Collective
test starting``), under each launcher's line prefixes, several runs to a file, with sizes of 0,
cut or missing rank lists and 4-digit ranks, read to the runs they were written from.
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpscale.cli import main
from dpscale.errors import InvalidInput
from dpscale.nccltests import import_logs
from dpscale.nccltests.logfiles import Log, read_log, read_logs, read_text
from dpscale.records import NetworkProfile

VALIDATION = Path(__file__).parents[1] / "data" / "nccl" / "validation"
INDEX = list(csv.DictReader((VALIDATION / "INDEX.csv").read_text(encoding="utf-8").splitlines()))

PROGRAMS = {
    "all_reduce": "all_reduce_perf",
    "all_gather": "all_gather_perf",
    "reduce_scatter": "reduce_scatter_perf",
    "alltoall": "alltoall_perf",
    "sendrecv": "sendrecv_perf",
    "broadcast": "broadcast_perf",
}
GATHERING = ("all_gather", "reduce_scatter", "alltoall")  # size = count × ranks × word size


def factor(collective: str, n: int) -> float:
    """busbw ÷ algbw, as nccl-tests computes it."""
    if collective == "all_reduce":
        return 2 * (n - 1) / n
    return (n - 1) / n if collective in GATHERING else 1.0


SIZES = [2**k for k in range(3, 35)]  # 8 B to 16 GiB, as -b 8 -e 16G -f 2
PREFIXES = [
    "",
    "[1,0]<stdout>:",  # mpirun --tag-output
    "(head, rank=0, pid=3808) [1,0]<stdout>:",  # SkyPilot over Open MPI
    " 0: ",  # srun -l
    "[0] ",  # MPICH, Intel MPI -prepend-rank
    "2024-05-01T12:00:00.123456Z ",  # kubectl logs --timestamps
    "[pod/nccl-launcher-7x2/mpi] ",  # kubectl logs --prefix
    "node001: ",  # pdsh
    "launcher-1  | ",  # docker compose
]
LAYOUTS = ["old", "middle", "new"]


@dataclass(frozen=True)
class Run:
    """A run to write: which test, over how many hosts of how many ranks, in which layout."""

    collective: str
    hosts: int
    per_host: int
    layout: str = "new"
    sizes: tuple[int, ...] = tuple(SIZES)
    gpus: int = 1  # -g: ranks each process drives
    device: str = "NVIDIA H100 80GB HBM3"
    checked: bool = True  # -c 1: results checked

    @property
    def ranks(self) -> int:
        return self.hosts * self.per_host


def seven(value: float, layout: str) -> str:
    """A time in µs as nccl-tests prints it in seven characters."""
    if layout == "new":  # getFloatStr: as many decimals as fit
        for decimals in (2, 1, 0):
            text = f"{value:7.{decimals}f}"
            if len(text) <= 7:
                return text
        return f"{value:7.1e}"
    return f"{value:7.0f}" if value > 10000 else f"{value:7.1f}" if value > 100 else f"{value:7.2f}"


def header(run: Run) -> list[str]:
    """The table's header lines in ``run``'s layout."""
    if run.layout == "old":
        first = {"broadcast": ["root"], "all_gather": [], "alltoall": [], "sendrecv": []}.get(run.collective, ["redop"])
        names = ["size", "count", "type", *first]
        half = ["time", "algbw", "busbw", "error"]
    else:
        names = ["size", "count", "type", "redop", "root"]
        half = ["time", "algbw", "busbw", "#wrong"]
    return [
        "#" + " " * 60 + "out-of-place                       in-place          ",
        "# " + "  ".join(f"{n:>10s}" for n in names + half + half),
        "# " + "  ".join(f"{n:>10s}" for n in ["(B)", "(elements)", *[""] * (len(names) - 2)] + ["(us)"] * 8),
    ]


def table(run: Run) -> tuple[list[str], list[tuple[int, float, bool]]]:
    """The table's rows as nccl-tests prints them, and the rows a reader should give back (bytes, s, in place)."""
    n = run.ranks
    lines, rows = [], []
    latency = 20.0 + 8.0 * (run.hosts > 1)
    bandwidth = 300e9 if run.hosts == 1 else 40e9
    for asked in run.sizes:
        count = asked // 4 // n if run.collective in GATHERING else asked // 4
        size = count * 4 * (n if run.collective in GATHERING else 1)
        seconds = [(latency + size / bandwidth * 1e6) * (1 + 0.01 * half) for half in (0, 1)]
        redop = "sum" if run.collective in ("all_reduce", "reduce_scatter", "sendrecv") else "none"
        root = 0 if run.collective == "broadcast" else -1
        if run.layout == "old":
            first = {"broadcast": f"  {root:6d}", "all_gather": "", "alltoall": "", "sendrecv": ""}
            line = f"{size:12d}  {count:12d}  {'float':>6s}" + first.get(run.collective, f"  {redop:>6s}")
        else:
            line = f"{size:12d}  {count:12d}  {'float':>8s}  {redop:>6s}  {root:6d}"
        for half, micro in enumerate(seconds):
            time = seven(micro, run.layout)
            algbw = size / 1e9 / (float(time) * 1e-6) if float(time) > 0 else 0.0
            busbw = algbw * factor(run.collective, n)
            unchecked = not run.checked or (half == 1 and run.collective in ("alltoall", "sendrecv"))
            wrong = "N/A" if unchecked else ("2e-07" if run.layout == "old" else "0")
            line += f"  {time}  {algbw:6.2f}  {busbw:6.2f}  {wrong:>5s}"
            if size > 0:
                rows.append((size, float(time) * 1e-6, half == 1))
        lines.append(line)
    return lines, rows


def ranks_block(run: Run, listed: Sequence[int | str] | None = None) -> list[str]:
    """The '# Using devices' lines; ``listed``: the ranks shown, and any line (a cut) in their place."""
    out = []
    for item in range(run.ranks) if listed is None else listed:
        if isinstance(item, str):
            out.append(item)
            continue
        r = item
        host, device, pid = f"node{r // run.per_host + 1:03d}", r % run.per_host, 4000 + r // run.gpus
        where = f"Pid {pid:6d} on {host:>10s} device {device:2d}"
        if run.layout == "new":
            out.append(f"#  Rank {r:2d} Group {0:2d} {where} [0000:{device:02x}:00] {run.device}")
        elif run.layout == "middle":
            out.append(f"#  Rank {r:2d} Group {0:2d} {where} [0x{device:02x}] {run.device}")
        else:
            out.append(f"#   Rank {r:2d} {where} [0x{device:02x}] {run.device}")
    return out


def written(
    run: Run, *, listed: Sequence[int | str] | None = None, devices: bool = True, extra: Sequence[str] = ()
) -> tuple[list[str], list[tuple[int, float, bool]]]:
    """The lines of ``run`` in its layout, and the rows it holds."""
    program = PROGRAMS[run.collective]
    lines: list[str] = []
    if run.layout == "new":
        lines += [
            "# nccl-tests version 2.17.1 nccl-headers=22703 nccl-library=22703",
            f"# Collective test starting: {program}",
        ]
    graph = " agg iters: 1 validation: 1 graph: 0" if run.layout != "old" else " validation: 1"
    lines.append(
        f"# nThread 1 nGpus {run.gpus} minBytes {min(run.sizes)} maxBytes {max(run.sizes)} step: 2(factor)"
        f" warmup iters: 5 iters: 20{graph}"
    )
    lines.append("#")
    if devices:
        lines += ["# Using devices", *ranks_block(run, listed)]
    lines += list(extra)
    lines += ["#", *header(run)]
    body, rows = table(run)
    lines += body
    lines += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 12.3456 ", "#"]
    if run.layout == "new":
        lines.append(f"# Collective test concluded: {program}")
    return lines, rows


def text_of(lines: Sequence[str], prefix: str = "") -> str:
    return "".join(f"{prefix}{line}\n" for line in lines)


def same(log: Log, run: Run, rows: list[tuple[int, float, bool]]) -> None:
    assert (log.collective, log.ranks, log.hosts, log.devices_per_host) == (
        run.collective,
        run.ranks,
        run.hosts,
        run.per_host,
    )
    assert [(r.bytes, r.in_place) for r in log.rows] == [(b, i) for b, _, i in rows]
    assert [r.seconds for r in log.rows] == pytest.approx([s for _, s, _ in rows])


def write(tmp_path: Path, text: str, name: str = "run.log") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# The real logs, as posted.


@pytest.mark.parametrize("entry", INDEX, ids=[e["file"] for e in INDEX])
def test_every_real_log_reads_as_its_index_says(entry: dict[str, str]) -> None:
    (log,) = read_logs(VALIDATION / entry["file"])
    assert log.collective == entry["collective"]
    assert (log.ranks, log.hosts, log.devices_per_host) == (
        int(entry["ranks"]),
        int(entry["hosts"]),
        int(entry["gpus_per_host"]),
    )
    assert log.device_name is not None
    assert log.device_name.endswith(entry["gpu"])
    sizes = [r.bytes for r in log.rows]
    assert max(sizes) == int(entry["sizes_max"])
    assert min(sizes) == max(int(entry["sizes_min"]), 1) or int(entry["sizes_min"]) == 0  # sizes of 0 left out
    assert all(r.bytes > 0 and r.seconds > 0 for r in log.rows)
    assert log.notes == ()  # nothing inferred, nothing left out
    assert read_log(VALIDATION / entry["file"]) == log


@pytest.mark.parametrize("entry", INDEX, ids=[e["file"] for e in INDEX])
def test_probe_imports_every_real_log(
    entry: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "profile.json"
    with pytest.raises(SystemExit) as exited:
        main(["probe", "--import", str(VALIDATION / entry["file"]), "--out", str(out)])
    printed, err = capsys.readouterr()
    assert exited.value.code in (0, None), err
    # the one note: an all-reduce above the GPU's NVLink line rate, where the index says NVLS ran
    assert err == "" if "NVLS" not in entry["network"] else err.startswith("note: ") and err.count("\n") == 1
    assert ("reduced in the switches" in err) == ("NVLS" in entry["network"])
    assert entry["file"] in printed
    profile = NetworkProfile.from_dict(json.loads(out.read_text(encoding="utf-8")))
    assert (profile.world_size, profile.nodes, profile.devices_per_node) == (
        int(entry["ranks"]),
        int(entry["hosts"]),
        int(entry["gpus_per_host"]),
    )
    intra, inter = profile.collectives[entry["collective"]]
    assert (intra is None, inter is None) == (entry["hosts"] != "1", entry["hosts"] == "1")  # the tier it measured


def test_the_oldest_all_gather_without_redop_or_root_and_its_zero_sizes() -> None:
    (log,) = read_logs(VALIDATION / "015_azure-a100-1node-allgather.log")
    assert min(r.bytes for r in log.rows) == 32  # five rows of 0 B left out
    assert len(log.rows) == 2 * 29


def test_a_real_log_under_srun_labels_reads_the_same(tmp_path: Path) -> None:
    for entry in INDEX:
        text = (VALIDATION / entry["file"]).read_text(encoding="utf-8")
        labelled = "".join(f"{i % 3:2d}: {line}\n" for i, line in enumerate(text.splitlines()))
        path = write(tmp_path, labelled, entry["file"])
        (log,) = read_logs(path)
        assert log == replace(read_log(VALIDATION / entry["file"]), name=str(path))


# Logs written in each layout.


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("collective", ["all_reduce", "all_gather", "reduce_scatter"])
def test_each_layout_under_each_prefix_reads_to_its_run(
    tmp_path: Path, layout: str, prefix: str, collective: str
) -> None:
    run = Run(collective, hosts=2, per_host=4, layout=layout)
    lines, rows = written(run)
    (log,) = read_logs(write(tmp_path, text_of(lines, prefix)))  # named run.log: the layout tells the collective
    same(log, run, rows)
    assert log.device_name == "NVIDIA H100 80GB HBM3"
    assert log.notes == ()


@given(
    layout=st.sampled_from(LAYOUTS),
    prefix=st.sampled_from(PREFIXES),
    collective=st.sampled_from(["all_reduce", "all_gather", "reduce_scatter"]),
    hosts=st.integers(1, 6),
    per_host=st.sampled_from([1, 2, 4, 8]),
    low=st.integers(0, 20),
    span=st.integers(4, 14),
)
def test_any_shape_in_any_layout_reads_to_its_run(
    tmp_path_factory: pytest.TempPathFactory,
    layout: str,
    prefix: str,
    collective: str,
    hosts: int,
    per_host: int,
    low: int,
    span: int,
) -> None:
    if hosts * per_host < 2:
        per_host = 2
    run = Run(collective, hosts, per_host, layout=layout, sizes=tuple(SIZES[low : low + span]))
    lines, rows = written(run)
    if not rows:
        return
    path = tmp_path_factory.mktemp("layouts") / "run.log"
    path.write_text(text_of(lines, prefix), encoding="utf-8")
    (log,) = read_logs(path)
    same(log, run, rows)


def several(layout: str, *, commands: bool) -> tuple[str, list[tuple[Run, list[tuple[int, float, bool]]]]]:
    """Six runs of a script in one file: the three collectives dpscale reads among three it does not."""
    runs = [
        Run("all_reduce", 1, 8, layout),
        Run("alltoall", 2, 8, layout),
        Run("all_gather", 2, 8, layout),
        Run("sendrecv", 2, 8, layout),
        Run("broadcast", 2, 8, layout),
        Run("reduce_scatter", 2, 8, layout),
        Run("all_reduce", 2, 8, layout),
    ]
    lines: list[str] = []
    read = []
    for run in runs:
        if commands:
            program = PROGRAMS[run.collective]
            lines.append(f"+ mpirun -np {run.ranks} -H node001:8,node002:8 ./build/{program} -b 8 -e 16G -f 2 -g 1")
        lines.append("node001:4242:4242 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.1<0>")
        body, rows = written(run)
        lines += body
        lines.append(
            "[node001:04242] 7 more processes have sent help message help-mpi-btl-openib.txt / no device params found"
        )
        if run.collective in ("all_reduce", "all_gather", "reduce_scatter"):
            read.append((run, rows))
    return text_of(lines), read


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("commands", [False, True])
def test_several_runs_in_one_file_each_read_others_left_out_with_a_note(
    tmp_path: Path, layout: str, commands: bool
) -> None:
    text, expected = several(layout, commands=commands)
    path = write(tmp_path, text, "nccl-sweep.log")
    logs = read_logs(path)
    assert len(logs) == len(expected) == 4
    for log, (run, rows) in zip(logs, expected, strict=True):
        same(log, run, rows)
    assert len({log.name for log in logs}) == 4  # each run named by its first line
    assert all(log.name.startswith(f"{path}:") for log in logs)
    notes = [str(note) for note in logs[0].notes]
    assert [note.split(": a run of ")[1].split(",")[0] for note in notes] == ["alltoall", "sendrecv", "broadcast"]
    assert all(note.startswith("nccl-sweep.log, line ") for note in notes)
    main_run = read_log(path)  # one run for the file: its widest all-reduce, the notes with it
    assert (main_run.collective, main_run.ranks) == ("all_reduce", 16)
    assert main_run.notes[: len(notes)] == logs[0].notes
    fitted = import_logs(logs).profile
    assert set(fitted.collectives) == {"all_reduce", "all_gather", "reduce_scatter"}
    assert (fitted.intra is not None, fitted.inter is not None) == (True, True)


def test_a_file_of_only_other_collectives_is_refused(tmp_path: Path) -> None:
    lines = written(Run("alltoall", 1, 8))[0] + written(Run("sendrecv", 1, 8))[0]
    with pytest.raises(InvalidInput, match="all_reduce_perf, reduce_scatter_perf or all_gather_perf"):
        read_logs(write(tmp_path, text_of(lines)))


def test_a_run_that_stopped_before_its_table_is_left_out(tmp_path: Path) -> None:
    first, rows = written(Run("all_reduce", 1, 8, "middle"))
    crashed = [*first[:12], "node001:4242:4242 [0] NCCL WARN Cuda failure 'out of memory'"]
    logs = read_logs(write(tmp_path, text_of(first + crashed)))
    assert len(logs) == 1
    same(logs[0], Run("all_reduce", 1, 8), rows)
    assert "a run without results, left out" in str(logs[0].notes[0])


def test_a_wrong_row_of_a_second_run_is_refused_at_its_line(tmp_path: Path) -> None:
    first = written(Run("all_reduce", 1, 8, "middle"))[0]
    second = written(Run("all_gather", 1, 8, "middle"))[0]
    row = next(i for i, line in enumerate(second) if line.lstrip()[:1].isdigit() and " 1048576 " in f" {line} ")
    second[row] = second[row][:-5] + "    3"
    path = write(tmp_path, text_of(first + second))
    with pytest.raises(InvalidInput) as error:
        read_logs(path)
    assert f"{path}, line {len(first) + row + 1}" in str(error.value)
    assert "results that are right (#wrong is 3)" in str(error.value)


def test_the_oldest_error_column_is_a_tolerance(tmp_path: Path) -> None:
    lines, rows = written(Run("all_reduce", 1, 8, "old"))
    same(read_log(write(tmp_path, text_of(lines))), Run("all_reduce", 1, 8), rows)  # 2e-07: within float's 1e-5
    wrong = [line.replace("2e-07", "3e-01") if " 4096 " in f" {line} " else line for line in lines]
    path = write(tmp_path, text_of(wrong))
    with pytest.raises(InvalidInput, match=r"line \d+: .*within nccl-tests' tolerance \(error 3e-01\)"):
        read_log(path)


def test_zero_sizes_64_bit_sizes_and_unchecked_results(tmp_path: Path) -> None:
    run = Run("all_gather", 1, 8, "new", sizes=(0, 0, 8, 16, 32, 2**34, 2**40), checked=False)
    lines, rows = written(run)
    log = read_log(write(tmp_path, text_of(lines)))
    same(log, run, rows)
    assert min(r.bytes for r in log.rows) == 32  # 0, 8 and 16 B over 8 ranks: a count of 0, left out
    assert max(r.bytes for r in log.rows) == 2**40


def test_ncclinfo_mpi_notices_and_snips_anywhere(tmp_path: Path) -> None:
    run = Run("all_reduce", 2, 8, "middle")
    lines, rows = written(run)
    noise = [
        "node001:4242:4250 [0] NCCL INFO Channel 00/32 :    0   7   6   5   4   3   2   1   9  10",
        '[node001:04242] Set MCA parameter "orte_base_help_aggregate" to 0 to see all help / error messages',
        "--(snip)--",
        "Warning: Permanently added 'node002' (ED25519) to the list of known hosts.",
        "2 more processes have sent help message",
    ]
    mixed = [line for pair in zip(lines, noise * len(lines), strict=False) for line in pair]
    log = read_log(write(tmp_path, text_of(mixed)))
    same(log, run, rows)


def test_gpu_names_without_nvidia(tmp_path: Path) -> None:
    for device in ("A100-SXM4-40GB", "Tesla V100-SXM2-16GB", "AMD Instinct MI300X"):
        lines, _ = written(Run("all_reduce", 1, 8, "old", device=device))
        assert read_log(write(tmp_path, text_of(lines))).device_name == device


def test_ranks_with_four_digits(tmp_path: Path) -> None:
    run = Run("all_reduce", 128, 8, "new", sizes=tuple(SIZES[::4]))
    lines, rows = written(run)
    labelled = "".join(f"{i % 1024:4d}: {line}\n" for i, line in enumerate(lines))
    log = read_log(write(tmp_path, labelled))
    same(log, run, rows)


# Rank lists cut short, or missing.


def test_a_rank_list_snipped_in_the_middle(tmp_path: Path) -> None:
    run = Run("all_reduce", 2, 8, "middle")
    lines, rows = written(run, listed=[0, 1, 2, 3, "--(snip)--", 12, 13, 14, 15])
    log = read_log(write(tmp_path, text_of(lines)))
    same(log, run, rows)
    assert "16 ranks on 2 hosts, read without a whole '# Using devices' list" in str(log.notes[0])


def test_a_rank_list_snipped_across_hosts_tells_them_by_device(tmp_path: Path) -> None:
    # Ranks 0-3 on node001 and 12-15 on node004: 4 hosts of 4, as rank 12's device 0 says (not 2 of 8).
    run = Run("all_reduce", 4, 4, "new")
    lines, rows = written(run, listed=[0, 1, 2, 3, "# ...", 12, 13, 14, 15])
    same(read_log(write(tmp_path, text_of(lines))), run, rows)


def test_a_rank_list_nccl_tests_cut_itself(tmp_path: Path) -> None:
    # One process driving 32 GPUs (-g 32): nccl-tests prints 2 KiB of its rank lines, then "...".
    run = Run("all_reduce", 1, 32, "new", gpus=32)
    listed: list[int | str] = [*range(22), "#  Rank 22 Group  0 Pid   4000 on    node001 device 22 [00..."]
    lines, rows = written(run, listed=listed)
    same(read_log(write(tmp_path, text_of(lines))), run, rows)


def test_a_rank_list_cut_at_its_end_reads_with_nccl_info(tmp_path: Path) -> None:
    run = Run("all_reduce", 2, 8, "middle")
    info = ["node001:4242:4242 [0] NCCL INFO comm 0x55d3a1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0"]
    lines, rows = written(run, listed=[*range(10), "# ..."], extra=info)
    same(read_log(write(tmp_path, text_of(lines))), run, rows)


@pytest.mark.parametrize("cut", [[*range(10), "--(snip)--"], list(range(10))])
def test_a_rank_list_cut_at_its_end_counts_its_ranks_by_busbw(tmp_path: Path, cut: list[int | str]) -> None:
    run = Run("all_reduce", 2, 8, "middle")  # busbw ÷ algbw = 2 × 15/16 at every size past 1 GB/s: 16 ranks
    lines, rows = written(run, listed=cut)
    log = read_log(write(tmp_path, text_of(lines)))
    same(log, run, rows)
    assert "16 ranks on 2 hosts" in str(log.notes[0])


@pytest.mark.parametrize(
    ("cut", "said"),
    [
        ([*range(10), "--(snip)--"], "a '# Using devices' list of every rank, or NCCL INFO lines with nranks"),
        (list(range(10)), "the same number of ranks on every host (found node001: 8, node002: 2)"),  # unmarked
    ],
)
def test_a_rank_list_cut_at_its_end_with_nothing_else_is_refused_naming_what_is_missing(
    tmp_path: Path, cut: list[int | str], said: str
) -> None:
    small = Run("all_reduce", 2, 8, "middle", sizes=tuple(SIZES[:8]))  # no algbw past 1 GB/s: busbw tells nothing
    lines, _ = written(small, listed=cut)
    path = write(tmp_path, text_of(["node001:42:42 [0] NCCL INFO Bootstrap : Using ib0", *lines]))
    with pytest.raises(InvalidInput) as error:
        read_log(path)
    assert said in str(error.value)
    if cut[-1] == "--(snip)--":
        assert f"{path}, line 2" in str(error.value)  # where the run starts, past NCCL's line before it
        assert "(listed: ranks 0-9)" in str(error.value)


def test_a_gathering_run_cut_at_its_end_counts_its_ranks_by_its_table(tmp_path: Path) -> None:
    run = Run("all_gather", 2, 8, "new")
    lines, rows = written(run, listed=list(range(10)))  # size = count × 16 × 4: 16 ranks; node001 holds 8
    same(read_log(write(tmp_path, text_of(lines))), run, rows)


def test_no_rank_list_one_process(tmp_path: Path) -> None:
    # The all-gather's sizes and counts say 8 ranks; nGpus 8 says one process drove them: one host.
    run = Run("all_gather", 1, 8, "old", gpus=8)
    lines, rows = written(run, devices=False)
    log = read_log(write(tmp_path, text_of(lines)))
    same(log, run, rows)
    assert log.device_name is None


def test_no_rank_list_with_nccl_info(tmp_path: Path) -> None:
    run = Run("all_reduce", 2, 8, "middle")
    info = [
        f"node{h:03d}:4242:4242 [{d}] NCCL INFO comm 0x55d3a1 rank {8 * (h - 1) + d} nranks 16 cudaDev {d} busId 18000"
        " - Init COMPLETE"
        for h in (1, 2)
        for d in range(8)
    ]
    lines, rows = written(run, devices=False, extra=info)
    same(read_log(write(tmp_path, text_of(lines))), run, rows)


def test_no_rank_list_all_reduce_ranks_from_busbw_hosts_refused(tmp_path: Path) -> None:
    lines, _ = written(Run("all_reduce", 2, 8, "middle"), devices=False)
    path = write(tmp_path, text_of(lines))
    with pytest.raises(InvalidInput) as error:
        read_log(path)
    assert "saying on which hosts the 16 ranks ran" in str(error.value)  # busbw ÷ algbw says 16 ranks
    small = Run("all_reduce", 2, 8, "middle", sizes=tuple(SIZES[:6]))  # no algbw past 1 GB/s: no rank count
    with pytest.raises(InvalidInput, match="saying how many ranks ran"):
        read_log(write(tmp_path, text_of(written(small, devices=False)[0])))


def test_a_page_sends_several_runs(tmp_path: Path) -> None:
    text, _ = several("new", commands=False)
    log = read_text(text, "nccl_log", most=2**20)
    assert (log.collective, log.ranks, log.hosts) == ("all_reduce", 16, 2)
    assert log.name.startswith("nccl_log:")


def test_a_sweep_of_23_runs_reads_every_collective_it_can(tmp_path: Path) -> None:
    # A script's sweep over every test on one node and two, 8 B to 16 GiB, NCCL_DEBUG=INFO: read at once.
    order = ["all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv", "broadcast"]
    lines: list[str] = []
    expected = []
    for i in range(23):
        collective, hosts = order[i % 6], 1 + (i // 6) % 2
        layout = LAYOUTS[i % 3] if collective in ("all_reduce", "all_gather", "reduce_scatter") else "new"
        run = Run(collective, hosts, 8, layout)
        lines.append(f"+ mpirun -np {run.ranks} ./build/{PROGRAMS[collective]} -b 8 -e 16G -f 2 -g 1")
        lines += [
            f"node{h + 1:03d}:42{d}:42{d} [{d}] NCCL INFO comm 0x55 rank {8 * h + d} nRanks {run.ranks} nNodes {hosts}"
            f" localRanks 8 localRank {d} MNNVL 0"
            for h in range(hosts)
            for d in range(8)
        ]
        body, rows = written(run)
        lines += body
        if collective in ("all_reduce", "all_gather", "reduce_scatter"):
            expected.append((run, rows))
    path = write(tmp_path, text_of(lines), "sweep.log")
    started = time.perf_counter()
    logs = read_logs(path)
    assert time.perf_counter() - started < 2.0  # about 25 ms: a table line is read once, without backtracking
    assert len(logs) == len(expected) == 12
    for log, (run, rows) in zip(logs, expected, strict=True):
        same(log, run, rows)
    assert len(logs[0].notes) == 11
    assert (read_log(path).collective, read_log(path).ranks) == ("all_reduce", 16)
    profile = import_logs(logs).profile
    assert set(profile.collectives) == {"all_reduce", "all_gather", "reduce_scatter"}


def test_a_long_cut_rank_list_is_read_quickly(tmp_path: Path) -> None:
    # 60 000 ranks listed, each on a host of its own, cut in the middle: no search through them all.
    listed: list[int | str] = [*range(30000), "--(snip)--", *range(30001, 60000)]
    run = Run("all_reduce", 60000, 1, "middle", sizes=tuple(SIZES[:6]))
    lines, _ = written(run, listed=listed)
    started = time.perf_counter()
    log = read_log(write(tmp_path, text_of(lines)))  # read as 60 000 ranks on as many hosts
    assert time.perf_counter() - started < 10.0
    assert (log.ranks, log.hosts, log.devices_per_host) == (60000, 60000, 1)


def test_rank_lines_of_the_first_versions_without_pid(tmp_path: Path) -> None:
    run = Run("all_reduce", 1, 8, "old", device="Tesla P100-SXM2-16GB")
    listed = [f"#   Rank {r:2d} on       dgx1 device {r:2d} [0x{r + 6:02x}] Tesla P100-SXM2-16GB" for r in range(8)]
    lines, rows = written(run, listed=listed)
    log = read_log(write(tmp_path, text_of(lines)))
    same(log, run, rows)
    assert (log.device_name, log.notes) == ("Tesla P100-SXM2-16GB", ())


def test_a_sentence_naming_a_program_is_not_its_command(tmp_path: Path) -> None:
    # "alltoall_perf finished" between two runs names no run: the all-reduce after it is read.
    alltoall = written(Run("alltoall", 1, 8, "middle"))[0]
    run = Run("all_reduce", 1, 8, "middle")
    lines, rows = written(run)
    text = text_of([*alltoall, "alltoall_perf finished in 12 s; next: ./all_reduce_perf", *lines])
    (log,) = read_logs(write(tmp_path, text))
    same(log, run, rows)
    assert "a run of alltoall, left out" in str(log.notes[0])


def test_nccl_teardown_lines_stay_with_their_run(tmp_path: Path) -> None:
    # The two-node run's teardown, printed after its footer, says nothing of the one-node run without a list.
    two = written(Run("all_reduce", 2, 8, "middle"))[0]
    teardown = [
        f"node00{h}:42:42 [0] NCCL INFO comm 0x55 rank {8 * (h - 1)} nranks 16 cudaDev 0 busId 18000 - Destroy COMPLETE"
        for h in (1, 2)
    ] + ["node002:42:42 [0] NCCL INFO ENV/Plugin: Closing env plugin ncclEnvDefault"]
    one = Run("all_gather", 1, 8, "middle", gpus=8)
    lines, rows = written(one, devices=False)
    logs = read_logs(write(tmp_path, text_of([*two, *teardown, *lines])))
    same(logs[1], one, rows)


def test_no_rank_list_one_process_of_all_reduce(tmp_path: Path) -> None:
    # -g 8 in one process and no list: nThread × nGpus ranks on one host, as busbw ÷ algbw agrees (7/4).
    run = Run("all_reduce", 1, 8, "middle", gpus=8)
    lines, rows = written(run, devices=False)
    same(read_log(write(tmp_path, text_of(lines))), run, rows)
    disagreeing = Run("all_reduce", 2, 8, "middle", gpus=8)  # 16 ranks by busbw ÷ algbw: not one process's 8
    with pytest.raises(InvalidInput, match="saying on which hosts the 16 ranks ran"):
        read_log(write(tmp_path, text_of(written(disagreeing, devices=False)[0])))


def test_json_files_of_several_runs_a_line_each(tmp_path: Path) -> None:
    one = json.loads((VALIDATION.parent / "all_gather_2nodes.json").read_text(encoding="utf-8"))
    other = {**one, "args": ["./build/alltoall_perf", "-b", "8"]}
    path = write(tmp_path, "\n".join(json.dumps(d) for d in (one, other, one)) + "\n", "runs.json")
    logs = read_logs(path)
    assert [(log.name, log.collective, log.ranks) for log in logs] == [
        (f"{path}:1", "all_gather", 16),
        (f"{path}:3", "all_gather", 16),
    ]
    assert [str(note) for note in logs[0].notes] == [
        "runs.json, line 2: a run of alltoall, left out (dpscale reads all_reduce, reduce_scatter and all_gather)"
    ]
    broken = write(tmp_path, json.dumps(one) + "\n{nope}\n", "broken.json")
    with pytest.raises(InvalidInput, match=r"broken.json, line 2"):
        read_logs(broken)


@given(
    layout=st.sampled_from(LAYOUTS),
    hosts=st.integers(1, 8),
    per_host=st.sampled_from([1, 2, 4, 8]),
    head=st.integers(1, 20),
    tail=st.integers(1, 20),
    marker=st.sampled_from(["--(snip)--", "# ...", "[...]", "(output truncated)"]),
)
def test_any_list_snipped_in_its_middle_reads_to_its_run(
    tmp_path_factory: pytest.TempPathFactory,
    layout: str,
    hosts: int,
    per_host: int,
    head: int,
    tail: int,
    marker: str,
) -> None:
    run = Run("all_reduce", hosts, max(per_host, 2 // hosts), layout, sizes=tuple(SIZES[20:28]))
    if head + tail >= run.ranks:
        return
    listed: list[int | str] = [*range(head), marker, *range(run.ranks - tail, run.ranks)]
    lines, rows = written(run, listed=listed)
    path = tmp_path_factory.mktemp("snipped") / "run.log"
    path.write_text(text_of(lines), encoding="utf-8")
    log = read_log(path)
    same(log, run, rows)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("collective", ["all_reduce", "all_gather"])
def test_each_layout_comes_back_at_each_of_its_shapes(tmp_path: Path, layout: str, collective: str) -> None:
    # The first check: logs of known α and β written in each layout at 8 ranks on 1 host, 16 on 2 and
    # 32 on 4, imported together: predict gives each back within 5 % at every size from 64 KiB (the old
    # layout prints times to a microsecond past 10 ms).
    from dpscale.predict import pricing
    from dpscale.predict.definition import PREDICT
    from dpscale.records import write_profile

    runs = [Run(collective, hosts, 8, layout) for hosts in (1, 2, 4)]
    paths = []
    for run in runs:
        path = tmp_path / f"{collective}_{run.ranks}.log"
        path.write_text(text_of(written(run)[0]), encoding="utf-8")
        paths.append(path)
    out = tmp_path / "network.json"
    write_profile(out, import_logs([read_log(p) for p in paths]).profile)
    job = {"batch": 32.0, "params": 250e6, "per_device_throughput": 40.0, "devices": [8, 16, 32]}
    cluster = PREDICT.build({**job, "network": str(out)}).cluster
    for run in runs:
        measured: dict[int, list[float]] = {}
        for size, seconds, _ in written(run)[1]:
            measured.setdefault(size, []).append(seconds)
        for size, times in measured.items():
            if size < 64 * 1024:
                continue
            given = float(pricing.priced(cluster, collective, run.ranks, size))  # type: ignore[arg-type]
            assert given == pytest.approx(sum(times) / 2, rel=0.05), (run.ranks, size)
