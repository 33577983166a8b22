"""Real torch.distributed runs (gloo on the CPU, launched by torchrun). In CI they must run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    try:
        import torch.distributed as dist

        missing = None if dist.is_available() and dist.is_gloo_available() else "torch.distributed with gloo"
    except ImportError:
        missing = "torch (pip install 'dpscale[measure]')"
    if missing is None:
        return
    if os.environ.get("CI"):
        raise pytest.UsageError(f"distributed tests need {missing}; make test installs it")
    skip = pytest.mark.skip(reason=f"outside CI without {missing}")
    for item in items:
        if "distributed" in item.keywords:
            item.add_marker(skip)


def workers_left() -> list[str]:
    """Command lines of dpscale workers still running (there must be none after a run)."""
    done = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True)
    return [line for line in done.stdout.splitlines() if "dpscale.measure.worker" in line and "ps -eo" not in line]


def processes_mentioning(marker: str) -> list[str]:
    """Command lines of the running processes whose arguments mention ``marker`` (a test's own folder)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            argv = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except (OSError, IndexError):
            continue  # ended while we looked
        if marker.encode() in argv and state != "Z":
            words = argv.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{entry.name}: {words[:200]}")
    return found
