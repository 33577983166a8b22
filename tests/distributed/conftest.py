"""Real torch.distributed runs (gloo on the CPU, launched by torchrun). In CI they must run."""

from __future__ import annotations

import os
import subprocess

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
