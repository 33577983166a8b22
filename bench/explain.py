"""`dpscale explain` on a generated 200 MB trace: its time against ``json.load``'s, its peak memory against the file.

Each peak is taken in a fresh process (its high-water resident size, VmHWM, after the work, less
the interpreter's with the imports done), so one measurement's memory does not hide the other's.
Not ``ru_maxrss``: a process started from a larger one inherits its parent's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.traces import write_trace

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


def bench_explain() -> bool:
    from bench.timing import interleaved, report
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
    return fast and small
