"""`dpscale explain` on a generated 200 MB trace: its time against ``json.load``'s, its peak memory against the file;
and what hostile uploads cost (issue 23): one request's peak memory, and predictions' latency while they come.

Each peak is taken in a fresh process (its high-water resident size, VmHWM, after the work, less
the interpreter's with the imports done), so one measurement's memory does not hide the other's.
Not ``ru_maxrss``: a process started from a larger one inherits its parent's. A hostile request
is read as the server's job reads it (dpscale.explain.own_process: one Budget for its files), in a fresh
process too.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

from bench.timing import report
from bench.traces import gzip_bomb, huge_names, many_kernels, many_steps, reversed_operators, write_trace

SIZE_MB = 200
_PEAK = """
import json, sys
from dpscale.explain import explain
def peak():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
before = peak()
if sys.argv[1] == "explain":
    explain(sys.argv[2])
else:
    with open(sys.argv[2]) as f:
        json.load(f)
print(peak() - before)
"""


def _peak(what: str, path: Path) -> int:
    done = subprocess.run([sys.executable, "-c", _PEAK, what, str(path)], capture_output=True, text=True, check=True)
    return int(done.stdout.strip())


_REQUEST = """
import json, sys, time
import numpy
from dpscale.errors import InvalidInput
from dpscale.explain import explain_timelines, read_trace
from dpscale.explain.limits import Budget
from dpscale.explain.timeline import drawn_most, step_drawing
def peak():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
before = peak()
start = time.perf_counter()
budget = Budget() if sys.argv[1] == "server" else None
try:
    timelines = [read_trace(path, budget=budget) for path in sys.argv[2:]]
    found = explain_timelines(timelines)
    [step_drawing(t, most=drawn_most(len(timelines))) for t in timelines]
    said = "read"
except InvalidInput as exc:
    said = str(exc).split("gzipped): ")[-1]
print(json.dumps({"peak": peak() - before, "seconds": time.perf_counter() - start, "said": said}))
"""
REQUEST_MOST = 512 * 2**20  # the most one request's explanation may hold, whatever its files (issue 23)


def _request(how: str, paths: list[Path]) -> dict[str, object]:
    """Peak memory, time and outcome of one request's files read as ``how`` ("server": one budget; "cli": none)."""
    done = subprocess.run(
        [sys.executable, "-c", _REQUEST, how, *map(str, paths)], capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout))


def _unzipped(path: Path) -> int:
    """Characters of JSON a gzipped file holds, counted a piece at a time."""
    inflate, total = zlib.decompressobj(wbits=31), 0
    with path.open("rb") as packed:
        while piece := packed.read(1 << 20):
            total += len(inflate.decompress(piece))
            while inflate.unconsumed_tail:
                total += len(inflate.decompress(inflate.unconsumed_tail))
    return total


def bench_hostile() -> bool:
    """Issue 23's uploads, read as the server reads one request: peak memory at most 4x their JSON and 512 MiB."""
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bomb = gzip_bomb(folder / "bomb0.json.gz")
        bombs = [bomb] + [Path(shutil.copy(bomb, folder / f"bomb{i}.json.gz")) for i in range(1, 8)]
        names = huge_names(folder / "names.json.gz")
        cases = [
            ("10 000 names of 100 KB", [names], "server"),
            ("10 000 names of 100 KB, dpscale explain", [names], "cli"),
            ("20 M kernels", [many_kernels(folder / "kernels.json.gz")], "server"),
            ("8 gzip bombs of 1 GiB", bombs, "server"),
            (
                "at the budget: 4 M operators out of order, 4 M kernels",
                [
                    reversed_operators(folder / "reversed.json.gz", 3_990_000),
                    many_kernels(folder / "some_kernels.json.gz", 3_990_000),
                ],
                "server",
            ),
            (
                "at the budget: 2 ranks of 100 000 steps",
                [many_steps(folder / f"steps{rank}.json.gz", 99_998, rank) for rank in range(2)],
                "server",
            ),
        ]
        sizes = {path: _unzipped(path) for path in {p for _, paths, _ in cases for p in paths}}
        for name, paths, how in cases:
            found = _request(how, paths)
            text = sum(sizes[p] for p in paths)
            peak = int(str(found["peak"]))
            bound = min(4 * text, REQUEST_MOST)
            ok &= report(
                f"hostile: {name} / bound",
                peak / bound,
                1.0,
                f"({peak / 2**20:.0f} MiB of {bound / 2**20:.0f} MiB, {text / 1e6:.0f} MB of JSON, "
                f"{found['seconds']:.1f} s: {found['said']})",
            )
    return ok


def bench_predict_under_uploads() -> bool:
    """GET /api/v1/predict's p99 while 40 hostile uploads come, against its p99 with none.

    Forty clients post a gzip bomb (1 MB, 1 GiB of JSON) again and again, each a second after its
    answer (not its Retry-After), from a process of their own: at most 2 are explained at once and
    6 wait; the others are refused, 503, before their body is read.
    """
    from bench import web

    with tempfile.TemporaryDirectory() as tmp:
        bomb = gzip_bomb(Path(tmp) / "bomb.json.gz")
        idle, attacked, statuses, held = web.predict_under_uploads(web.PREDICT, str(bomb), uploads=40, seconds=20)
    counts = {code: statuses.count(code) for code in sorted(set(statuses))}
    ok = report(
        "predict p99: 40 hostile uploads / none",
        attacked.p99_ms / idle.p99_ms,
        3.0,
        f"({attacked.p99_ms:.1f} ms vs {idle.p99_ms:.1f} ms; {attacked.errors} errors; uploads answered {counts})",
    )
    print(
        f"{'  (the server after them)':<44} {held / 2**20:+.0f} MiB resident: each job's memory left with its process"
    )
    return ok


def bench_explain() -> bool:
    from bench.timing import interleaved
    from dpscale.explain import explain

    with tempfile.TemporaryDirectory() as tmp:
        path = write_trace(Path(tmp) / "rank0.json", SIZE_MB)
        size = path.stat().st_size

        def load() -> object:
            with path.open() as f:
                return json.load(f)

        t = interleaved({"json.load": load, "explain": lambda: explain(path)}, rounds=3)
        peak, loaded = _peak("explain", path), _peak("json.load", path)
    fast = report(
        f"explain {size / 1e6:.0f} MB trace / json.load",
        t["explain"] / t["json.load"],
        1.5,
        f"({t['explain']:.2f} s vs {t['json.load']:.2f} s)",
    )
    small = report(
        "explain peak memory / trace file size",
        peak / size,
        4.0,
        f"({peak / 1e6:.0f} MB; json.load alone: {loaded / size:.1f}x)",
    )
    hostile = bench_hostile()
    predictions = bench_predict_under_uploads()
    return fast and small and hostile and predictions
