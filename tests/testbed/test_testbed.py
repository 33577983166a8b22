"""The short testbed check: one link rate, one gradient size, on two shaped network namespaces.

The tolerance: in the bandwidth-bound regime (here the link takes about 50× the compute) the
issue's target is 2 points of E; E itself is about 0.02 there, and repeated runs on this machine
moved it by well under a point (see the README's grid), so 2 points is a real test, not a wide net.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import dpscale
from tests.testbed.netns import available, two_hosts

pytestmark = pytest.mark.distributed
REASON = available()
if REASON is not None:
    if os.environ.get("CI"):
        raise RuntimeError(f"the testbed must run in CI, and {REASON}")
    pytestmark = [pytest.mark.distributed, pytest.mark.skip(reason=f"outside CI: the testbed {REASON}")]


def namespaces() -> str:
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout


def test_predicted_and_measured_efficiency_agree_on_a_shaped_link() -> None:
    from tests.testbed.grid import TCP_PAYLOAD, run_point

    point = run_point(200, 1e6)
    assert point.link_over_compute >= 5  # the bandwidth-bound regime the target speaks of
    assert abs(point.predicted_shaped - point.measured) <= 0.02
    shaped = 200e6 / 8 * TCP_PAYLOAD
    assert abs(point.probe_bandwidth / shaped - 1) <= 0.10
    assert "dps" not in namespaces()


def test_namespaces_are_removed_when_a_run_fails() -> None:
    seen: list[str] = []

    def failing_run() -> None:
        with two_hosts(100, prefix="dpsfail"):
            seen.append(namespaces())
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        failing_run()
    assert "dpsfail-a" in seen[0]
    assert "dpsfail" not in namespaces()


def test_probe_fits_each_tier_across_two_hosts_of_two_ranks(tmp_path: object) -> None:
    import json
    import subprocess

    from tests.testbed.grid import BIN, TCP_PAYLOAD

    with two_hosts(200) as (a, b):
        procs = []
        for rank, host in enumerate((a, b)):
            argv = host.command(
                [str(BIN), "probe", "--nproc", "2", "--nnodes", "2", "--node-rank", str(rank), "--rdzv-endpoint",
                 f"{a.address}:29613", "--local-addr", host.address, "--threads", "1", "--max-bytes", "4MiB",
                 "--reps", "3", "--timeout", "60s", "--json", "--out", f"{tmp_path}/net-{rank}.json"]
            )  # fmt: skip
            procs.append(subprocess.Popen(argv, env={**os.environ, **host.env()}, stdout=subprocess.PIPE, text=True))
        outputs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    profile = json.loads(outputs[0])
    assert profile["world_size"] == 4
    assert profile["nodes"] == 2
    shaped = 200e6 / 8 * TCP_PAYLOAD
    assert abs(profile["inter"]["bandwidth"] / shaped - 1) <= 0.15  # one rank per node across the link
    assert profile["intra"]["bandwidth"] > 2 * profile["inter"]["bandwidth"]  # shared memory beats the link


def test_fsdp_full_shard_on_a_shaped_link() -> None:
    """The same check with PyTorch's FSDP (zero3): two all-gathers and a reduce-scatter per layer.

    At 100 Mbit/s the link takes at least five times the compute even on a busy machine. Measured
    E comes out under the prediction (1.5 points at 200 Mbit/s, see the README's grid), inside the
    same 2-point target: what FSDP pays on a CPU beyond the link (copying each layer in and out
    of its flat buffers, gloo's reduce-scatter, the host's work to gather every layer) is not in
    the model, which prices the collectives on the link alone.
    """
    from tests.testbed.grid import run_point

    point = run_point(100, 1e6, sharding="zero3")  # slower than DDP's check: FSDP's own compute is longer
    assert point.sharding == "zero3"
    assert point.link_over_compute >= 5
    assert abs(point.predicted_shaped - point.measured) <= 0.02
    assert "dps" not in namespaces()


def test_a_link_bound_jobs_exposed_communication_is_the_links_time(tmp_path: Path) -> None:
    """dpscale explain on the profiler traces of a DDP job whose gradients cross a 100 Mbit/s link.

    The physics: with 2 ranks, each ends holding the sum of both gradients, so the other rank's
    S gradient bytes must reach it whatever the algorithm (gloo's ring sends exactly S each way:
    half in the reduce-scatter, half in the all-gather), and the shaper lets R·1448/1500 bytes of
    TCP payload a second through each way: the wire time is W = S / (R·1448/1500). So:

    - communication in flight per step ≥ W, less the shaper's burst (50 kB here, 4 ms of the link);
    - exposed communication ≥ W − compute: overlap can hide the transfer behind compute only;
    - exposed communication ≤ 1.5·W + 20 ms: beyond W go TCP's acknowledgements (about 2 % of
      the link), gloo's sums and a few round trips per DDP bucket (tens of µs each on a veth);
      the slowest rank waits for no one, so its exposed communication is transfer alone.

    At 4 MB of gradients (1M parameters) W is 0.33 s against tens of ms of compute: the job is
    link-bound. 10 % is left below W for the shaper's burst and the clocks.
    """
    import json
    import sys

    from dpscale.explain import explain
    from tests.testbed.grid import TCP_PAYLOAD

    rate_mbit = 100
    root = Path(__file__).resolve().parents[2]
    source = str(Path(dpscale.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, str(root)])}
    with two_hosts(rate_mbit) as hosts:
        procs = [
            subprocess.Popen(
                host.command([sys.executable, "-m", "tests.testbed.traced_link", str(tmp_path), str(rank), "1e6"]),
                cwd=root,
                env={**env, **host.env()},
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for rank, host in enumerate(hosts)
        ]
        try:
            logs = [proc.communicate(timeout=300)[0] for proc in procs]  # a failsafe: the job takes seconds
        finally:
            for proc in procs:
                proc.kill()
    assert [proc.returncode for proc in procs] == [0, 0], [log[-2000:] for log in logs]
    gradient_bytes = json.loads((tmp_path / "job.json").read_text())["bytes"]
    wire = gradient_bytes / (rate_mbit * 1e6 / 8 * TCP_PAYLOAD)
    found = explain(tmp_path / "traces")
    assert [rank.steps for rank in found.ranks] == [4, 4]
    measured = found.calibration  # the slowest rank's: transfer without waiting
    seen = {"wire": wire, **{f"rank {r.rank}": r.to_dict() for r in found.ranks}}
    assert measured.compute_time < 0.5 * wire, seen  # link-bound, as the bounds below assume
    assert measured.communication_time >= 0.9 * wire, seen
    for rank in found.ranks:  # every rank has the other's gradients to receive
        assert rank.exposed_communication.mean >= 0.9 * wire - rank.compute.mean, seen
    assert 0.9 * wire - measured.compute_time <= measured.exposed_communication <= 1.5 * wire + 0.02, seen
    assert found.bottleneck == "communication"
    assert not {host.namespace for host in hosts} & set(namespaces().split())
