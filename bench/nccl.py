"""`make bench`'s nccl-tests rows: a file of every collective's runs imported, as a user's sweep script leaves it."""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench.timing import BIN, interleaved, process, report

SIZES = tuple(8 * 2**k for k in range(32))  # 8 B to 16 GiB, -f 2
SHAPES = ((8, 8), (16, 8), (32, 8))  # ranks, ranks per host: one node, two, four
OTHERS = ("alltoall", "sendrecv", "broadcast", "reduce", "gather")  # read past with a note each


def sweep(path: Path) -> int:
    """Write the 23 runs to ``path``: 3 collectives × 3 shapes × 2 types, and 5 other tests; return the count."""
    from tests import synthetic_nccl as synthetic

    runs = []
    for collective in ("all_reduce", "reduce_scatter", "all_gather"):
        for ranks, per_host in SHAPES:
            timed = synthetic.alpha_beta(20e-6, 150e9, collective, ranks)
            text = synthetic.text(collective, ranks, per_host, timed, SIZES)
            runs += [text, _in_half(text)]
    base = synthetic.text("all_reduce", 8, 8, synthetic.alpha_beta(20e-6, 150e9, "all_reduce", 8), SIZES)
    runs += [base.replace("all_reduce_perf", f"{test}_perf") for test in OTHERS]
    path.write_text("".join(runs), encoding="utf-8")
    return len(runs)


def _in_half(text: str) -> str:
    """The same run in 16-bit elements: twice the count for each size."""
    lines = []
    for line in text.splitlines():
        cells = line.split()
        if len(cells) > 3 and cells[2] == "float" and cells[0].isdigit():
            line = line.replace(f"{cells[1]:>12s}     float", f"{int(cells[0]) // 2:12d}      half", 1)
        lines.append(line)
    return "\n".join(lines) + "\n"


def bench_import() -> bool:
    with tempfile.TemporaryDirectory() as folder:
        log, out = Path(folder) / "sweep.log", Path(folder) / "network.json"
        count = sweep(log)
        t = interleaved(
            {
                "import": process(str(BIN / "dpscale"), "probe", "--import", str(log), "--out", str(out)),
                "bare": process(str(BIN / "python"), "-c", "pass"),
            },
            rounds=7,
        )
    return report(
        f"probe --import of {count} runs (8 B-16 GiB) / 0.5 s",
        t["import"] / 0.5,
        1.0,
        f"whole process {t['import'] * 1e3:.0f} ms (python -c pass: {t['bare'] * 1e3:.0f} ms)",
    )
