"""dpscale measure under PyTorch's FSDP (fully_shard) on a real 2-process gloo group."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpscale import InvalidInput
from dpscale.measure.launcher import measure
from dpscale.records import Measurement
from tests.distributed.conftest import workers_left

pytestmark = pytest.mark.distributed
# 16 M parameters: 64 MB of weights, which every rank holds whole at least once (as it builds them).
LARGE = {"workload": "mlp", "params": 16e6, "batch": 8, "steps": 3, "warmup": 1, "repeats": 1}


def test_fsdp_full_shard_runs_and_says_so_with_each_peak_memory(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    sharded = measure([2], out=out, sharding="full_shard", **LARGE)  # type: ignore[arg-type]
    replicated = measure([2], out=out, sharding="ddp", **LARGE)  # type: ignore[arg-type]
    assert sharded[0].sharding == "zero3"  # FSDP's name read as the strategy it is
    assert replicated[0].sharding == "ddp"
    for record in (sharded[0], replicated[0]):
        assert record.throughput > 0
        assert record.peak_memory is not None
        assert record.peak_memory > 64e6
    # (A CPU's resident size does not show the sharding: FSDP's copies while it shards, and an
    # allocator that keeps what was freed, weigh more than half of 64 MB. A GPU's allocator does.)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [Measurement.from_dict(json.loads(line)).sharding for line in lines] == ["zero3", "ddp"]
    assert workers_left() == []


@pytest.mark.parametrize("sharding", ["zero2", "hybrid"])
def test_fsdp_shard_grad_op_and_hybrid_run(tmp_path: Path, sharding: str) -> None:
    small = {"workload": "transformer", "params": 2e5, "batch": 4, "steps": 2, "warmup": 1, "repeats": 1}
    found = measure([2], out=tmp_path / "runs.jsonl", sharding=sharding, **small)  # type: ignore[arg-type]
    assert found[0].sharding == sharding
    assert found[0].devices == 2
    assert found[0].throughput > 0


def test_zero1_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="FSDP runs no ZeRO-1"):
        measure([2], out=tmp_path / "runs.jsonl", sharding="zero1", **LARGE)  # type: ignore[arg-type]
    assert not (tmp_path / "runs.jsonl").exists()
