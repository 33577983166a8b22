"""How a bench measures and says what it measured: functions timed in turns, ratios against targets."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["BIN", "interleaved", "process", "report"]

BIN = Path(sys.executable).parent


def interleaved(fns: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Median seconds of each function, the functions taking turns so that noise hits all alike."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(ts) for name, ts in times.items()}


def process(*argv: str) -> Callable[[], object]:
    def run() -> object:
        return subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)

    return run


def report(name: str, ratio: float, target: float, detail: str, *, at_least: bool = False, aim: bool = False) -> bool:
    """Print one ratio against its target (an aim, with ``aim``: reported, but not a failure of the run)."""
    ok = ratio >= target if at_least else ratio <= target
    sign = ">=" if at_least else "<="
    kind, verdict = ("aim", "below aim") if aim else ("target", "MISSED")
    print(f"{name:<44} {ratio:6.2f}x  ({kind} {sign} {target}x)  {'ok' if ok else verdict}  {detail}")
    return ok or aim
