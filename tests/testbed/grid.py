"""Predicted against measured E on the shaped two-host testbed (see netns.py).

For each link rate and gradient size: the 1-rank throughput on this machine (one core, as each
host's rank gets), then ``dpscale probe`` and ``dpscale measure`` across the two namespaces, then
``dpscale.predict`` for the same workload given the shaped rate (and, separately, the probe's
fitted α and β). Run ``python -m tests.testbed.grid`` as root for the README's table.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpscale.collectives.link import Link
from dpscale.measure.launcher import Launch, measure
from dpscale.predict.model import Cluster as Links
from dpscale.predict.model import Workload, predict
from tests.testbed.netns import Host, two_hosts

BIN = Path(sys.executable).parent / "dpscale"
BATCH = 32
PORT = 29611
TCP_PAYLOAD = 1448 / 1500  # tbf limits whole packets; TCP carries 1448 bytes of every 1500


@dataclass(frozen=True)
class Point:
    sharding: str
    rate_mbit: float
    params: int
    single_throughput: float
    measured: float
    predicted_shaped: float
    predicted_probe: float
    probe_bandwidth: float
    probe_latency: float
    link_over_compute: float

    def row(self) -> str:
        return (
            f"| {self.sharding} | {self.rate_mbit:g} "
            f"| {self.params / 1e6:.1f}M | {self.link_over_compute:.0f}× | {self.measured:.3f} | "
            f"{self.predicted_shaped:.3f} | {(self.predicted_shaped - self.measured) * 100:+.1f} | "
            f"{self.predicted_probe:.3f} | {self.probe_bandwidth * 8 / 1e6:.0f} Mbit/s |"
        )


def _both(hosts: tuple[Host, Host], command: list[str], timeout: float) -> str:
    """Run a dpscale command on both hosts as a 2-node job; node 0's standard output."""
    a = hosts[0]
    procs = []
    for rank, host in enumerate(hosts):
        argv = host.command(
            [str(BIN), *command, "--nnodes", "2", "--node-rank", str(rank), "--rdzv-endpoint", f"{a.address}:{PORT}",
             "--local-addr", host.address, "--threads", "1", "--timeout", "60s", "--json"]
        )  # fmt: skip
        procs.append(
            subprocess.Popen(
                argv, env={**os.environ, **host.env()}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        )
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=timeout)
        if proc.returncode != 0:
            for other in procs:
                other.kill()
            raise RuntimeError(f"{' '.join(command)} failed on the testbed: {err.strip()[-400:]}")
        outputs.append(out)
    return outputs[0]


LAYERS = 4  # the mlp workload's linear layers: the pieces FSDP shards and gathers one by one


def run_point(rate_mbit: float, params: float, *, sharding: str = "ddp", steps: int = 6, repeats: int = 2) -> Point:
    single = measure([1], workload="mlp", params=params, batch=BATCH, steps=steps, warmup=2, repeats=repeats,
                     cluster=Launch(threads=1))[0].to_dict()  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp, two_hosts(rate_mbit) as hosts:
        profile: dict[str, Any] = json.loads(
            _both(
                hosts, ["probe", "--nproc", "1", "--max-bytes", "4MiB", "--reps", "5", "--out", f"{tmp}/net.json"], 300
            )
        )
        lines = _both(
            hosts,
            ["measure", "--nproc", "1", "--params", str(int(params)), "--batch", str(BATCH), "--steps", str(steps),
             "--warmup", "2", "--repeats", str(repeats), "--sharding", sharding, "--out", f"{tmp}/runs.jsonl"],
            600,
        )  # fmt: skip
    across = json.loads(lines.splitlines()[0])
    measured = across["throughput"] / (2 * single["throughput"])
    workload = Workload(single["throughput"], BATCH, single["params"], layers=LAYERS)
    tier = profile["inter"]
    shaped = Link(rate_mbit * 1e6 / 8 * TCP_PAYLOAD, tier["latency"], 1.0)
    probed = Link(tier["bandwidth"], tier["latency"], 1.0)
    strategy = across.get("sharding", sharding)
    e_shaped = float(predict([2], workload, Links(shaped, 1, shaped, jitter=0.0, sharding=strategy)).efficiency[0])
    e_probe = float(predict([2], workload, Links(probed, 1, probed, jitter=0.0, sharding=strategy)).efficiency[0])
    compute = BATCH / single["throughput"]
    link_time = single["params"] * 4 / shaped.bandwidth
    return Point(strategy, rate_mbit, single["params"], single["throughput"], measured, e_shaped, e_probe,
                 tier["bandwidth"], tier["latency"], link_time / compute)  # fmt: skip


HEADER = (
    "| strategy | link (Mbit/s) | gradients (params) | link ÷ compute | measured E | predicted E | error (points) "
    "| predicted from the probe | probe's bandwidth |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
)


def main() -> None:
    print(HEADER)
    for rate in (200, 500, 1000, 2000, 5000):
        for params in (1e6, 4e6):
            print(run_point(rate, params).row(), flush=True)
    for sharding in ("ddp", "zero3"):  # FSDP against DDP where the link dominates
        for rate in (200, 1000):
            print(run_point(rate, 1e6, sharding=sharding).row(), flush=True)


if __name__ == "__main__":
    main()
