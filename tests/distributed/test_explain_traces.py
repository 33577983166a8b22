"""dpscale explain on the traces of real 2-rank gloo jobs (DDP and FSDP), rank 1 given extra work each step."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import dpscale
from dpscale.explain import explain

pytestmark = pytest.mark.distributed
ROOT = Path(__file__).resolve().parents[2]


def traced(kind: str, folder: Path) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Run the job; each rank's own timings (its steps' wall time, rank 1's extra work)."""
    source = str(Path(dpscale.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, str(ROOT)])}
    subprocess.run(
        [sys.executable, "-m", "tests.distributed.traced_job", str(folder), kind],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=240,
        capture_output=True,
    )
    return tuple(json.loads((folder / f"timed{r}.json").read_text()) for r in (0, 1))  # type: ignore[return-value]


Run = tuple[Path, dict[str, list[float]], dict[str, list[float]]]


@pytest.fixture(scope="module")
def run_of(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Run]:
    """The job of each kind, run once for the module's tests: its folder and each rank's own timings."""
    done: dict[str, Run] = {}

    def run(kind: str) -> Run:
        if kind not in done:
            folder = tmp_path_factory.mktemp(kind)
            done[kind] = (folder, *traced(kind, folder))
        return done[kind]

    return run


@pytest.mark.parametrize("kind", ["ddp", "fsdp"])
def test_the_rank_with_extra_work_is_slowest_and_the_other_waits(run_of: Callable[[str], Run], kind: str) -> None:
    folder, timed0, timed1 = run_of(kind)
    found = explain(folder / "traces")  # rank0.json and rank1.json.gz
    fast, slow = found.ranks
    assert (fast.rank, slow.rank, found.slowest_rank) == (0, 1, 1)
    assert fast.steps == slow.steps == 4
    extra = statistics.fmean(timed1["extra"])
    # The extra work (operators held for EXTRA_SECONDS by the clock, however busy the machine: see
    # traced_job) shows as rank 1's compute, and rank 0, whose own work is milliseconds, waits about
    # as long for it in the step's collectives. Half of it at least: the rest of each rank's work is
    # what scheduling noise moves, and it is small beside the extra work.
    assert 0.5 * extra < slow.compute.mean - fast.compute.mean < 1.5 * extra
    assert 0.5 * extra < fast.wait.mean < 1.5 * extra
    assert fast.exposed_communication.mean > slow.exposed_communication.mean
    # The parts sum to the step time each rank measured for itself.
    for rank, own in ((fast, timed0), (slow, timed1)):
        parts = rank.compute.mean + rank.exposed_communication.mean + rank.other.mean
        assert parts == pytest.approx(statistics.fmean(own["steps"]), rel=0.05)
    assert 0 < found.efficiency < 1
    balance = {lever.name: lever for lever in found.levers}["balance"]
    assert balance.saving == pytest.approx(found.calibration.straggler_wait)
    # the wait meaned over both ranks: rank 0's, at least half the extra work (above), and rank 1's none
    assert balance.saving > 0.25 * extra


def test_predict_from_the_traces_gives_the_run_back_at_its_size(run_of: Callable[[str], Run], tmp_path: Path) -> None:
    """predict --from-trace: one device's speed, the variation and the link's share from the run itself."""
    folder = run_of("ddp")[0]
    from dpscale.predict.definition import PREDICT

    params = 256 * 512 + 512 + 512 * 512 + 512 + 512 * 256 + 256  # the traced job's three layers
    values = {"devices": [1, 2, 8], "batch": 64.0, "params": float(params), "intra_bandwidth": 1e9}
    request = PREDICT.build({**values, "from_trace": str(folder / "traces")})
    measured = explain(folder / "traces").calibration
    assert request.traced is not None
    assert request.traced.devices == 2
    assert request.workload.per_device_throughput == pytest.approx(64 / measured.single_device_step)
    # rank 1 is slower at every step by construction: a fixed imbalance of that rank, the same at
    # every size; only what is left of the variation within ranks is random and grows with n
    traced = request.traced
    assert (traced.slowest_rank, traced.measured_jitter) == (1, pytest.approx(measured.step_time_cv))
    assert traced.imbalance is not None
    assert traced.imbalance > 0
    assert request.cluster.jitter == pytest.approx(traced.jitter)
    assert traced.jitter < measured.step_time_cv
    prediction = request.predict()
    assert prediction.assumptions["from_trace"]["devices"] == 2
    assert prediction.efficiency[0] == 1
    assert prediction.efficiency[2] <= prediction.efficiency[1]
    with pytest.raises(dpscale.InvalidInput):
        PREDICT.build({**values, "from_trace": str(tmp_path / "missing")})
