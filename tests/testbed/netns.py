"""A two-host testbed on one machine: Linux network namespaces joined by a shaped veth pair.

Two "hosts", ``<prefix>-a`` and ``<prefix>-b``, each in its own network namespace, joined by a veth
pair with addresses in 10.77.0.0/24 (on that link only) and the ``tbf`` qdisc limiting the rate
each way. Torch.distributed runs across them with torchrun's multi-node rendezvous over that link
(gloo, bound to the veth interface with GLOO_SOCKET_IFNAME). Everything created is removed on
exit, also when a run fails: deleting a namespace deletes its end of the pair.

Needs root and iproute2 (``ip``, ``tc``). The kernel here has no ``netem``, so no delay is added:
latency is what the veth and the two processes give. Not shipped with dpscale: it is a test rig.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

SUBNET = "10.77.0"


def available() -> str | None:
    """None when the testbed can run here, else why not."""
    if os.geteuid() != 0:
        return "needs root to create network namespaces"
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            return f"needs {tool} (apt-get install iproute2)"
    return None


def _run(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, text=True, timeout=30)


@dataclass(frozen=True)
class Host:
    namespace: str
    interface: str
    address: str

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` run inside this host's namespace."""
        return ["ip", "netns", "exec", self.namespace, *argv]

    def env(self) -> dict[str, str]:
        return {"GLOO_SOCKET_IFNAME": self.interface, "TP_SOCKET_IFNAME": self.interface}


@contextlib.contextmanager
def two_hosts(rate_mbit: float, *, prefix: str | None = None) -> Iterator[tuple[Host, Host]]:
    """Two namespaces joined by a veth pair shaped to ``rate_mbit`` Mbit/s each way."""
    tag = prefix or f"dps{uuid.uuid4().hex[:6]}"
    a = Host(f"{tag}-a", f"{tag}a", f"{SUBNET}.1")
    b = Host(f"{tag}-b", f"{tag}b", f"{SUBNET}.2")
    created: list[str] = []
    try:
        for host in (a, b):
            _run("ip", "netns", "add", host.namespace)
            created.append(host.namespace)
        _run("ip", "link", "add", a.interface, "type", "veth", "peer", "name", b.interface)
        for host in (a, b):
            _run("ip", "link", "set", host.interface, "netns", host.namespace)
            _run(*host.command(["ip", "addr", "add", f"{host.address}/24", "dev", host.interface]))
            _run(*host.command(["ip", "link", "set", host.interface, "up"]))
            _run(*host.command(["ip", "link", "set", "lo", "up"]))
            # tbf: a token bucket at the rate; a burst of a few packets' worth and 50 ms of queue.
            burst = max(16_000, int(rate_mbit * 1e6 / 8 / 250))
            shape = ["tbf", "rate", f"{rate_mbit}mbit", "burst", str(burst), "latency", "50ms"]
            _run(*host.command(["tc", "qdisc", "add", "dev", host.interface, "root", *shape]))
        yield a, b
    finally:
        for namespace in created:
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True, check=False, timeout=30)
