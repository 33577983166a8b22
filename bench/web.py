"""Web speed for `make bench`: requests per second against a bare Starlette endpoint, and a load test.

Each server runs in its own uvicorn process on loopback with the same settings; a small
asyncio client keeps N keep-alive connections busy for a fixed time and counts responses.
The client is a few lines of raw HTTP/1.1 on purpose: a full client library would cost as much
CPU per request as the servers being compared, on a 2-core machine, and flatten the ratios.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

PAUSE = 1.0  # seconds a hostile uploader waits after an answer before it sends again (not its Retry-After)
PREDICT = (
    "/api/v1/predict?devices=8&devices=64&devices=512&per_device_throughput=938&batch=256&params=1e8&intra=nvlink3"
)
BARE_APP = "bench.bare:app"
FASTAPI_APP = "bench.bare:typed"
DPSCALE_APP = "dpscale.web.app:create_app"  # a factory: nothing is built at import


@dataclass(frozen=True)
class Load:
    requests: int
    errors: int
    seconds: float
    latencies: list[float]

    @property
    def rps(self) -> float:
        return self.requests / self.seconds

    @property
    def p99_ms(self) -> float:
        return statistics.quantiles(self.latencies, n=100)[98] * 1e3 if len(self.latencies) > 1 else 0.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


PIDS: dict[int, int] = {}  # the process of the server that listens on each port


def resident(pid: int) -> int:
    """The resident size of process ``pid`` now, in bytes."""
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))


@contextlib.contextmanager
def server(app: str) -> Iterator[int]:
    port = _free_port()
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port)),
            *("--log-level", "warning", *(["--factory"] if app == DPSCALE_APP else [])),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    PIDS[port] = proc.pid
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"{app} did not start") from None
                time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def _connection(port: int, path: str, stop: float, latencies: list[float], errors: list[int]) -> None:
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Language: fr\r\n\r\n".encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.perf_counter() < stop:
            start = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head.split(b" ", 2)[1])
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
            await reader.readexactly(length)
            latencies.append(time.perf_counter() - start)
            if status != 200:
                errors.append(status)
    finally:
        writer.close()


async def _load(port: int, path: str, connections: int, seconds: float) -> Load:
    latencies: list[float] = []
    errors: list[int] = []
    start = time.perf_counter()
    stop = start + seconds
    results = await asyncio.gather(
        *(_connection(port, path, stop, latencies, errors) for _ in range(connections)), return_exceptions=True
    )
    failed = sum(1 for r in results if isinstance(r, BaseException))
    return Load(len(latencies), len(errors) + failed, time.perf_counter() - start, latencies)


def load(port: int, path: str, *, connections: int, seconds: float) -> Load:
    return asyncio.run(_load(port, path, connections, seconds))


def measure(
    paths: dict[str, tuple[str, str]], *, rounds: int, seconds: float, connections: int
) -> dict[str, list[float]]:
    """Requests per second of each (app, path) in each round, servers taking turns round after round (the same
    client, the same connections), so that a ratio of two taken in one round saw the same load on the machine."""
    rps: dict[str, list[float]] = {name: [] for name in paths}
    apps = {app for app, _ in paths.values()}
    with contextlib.ExitStack() as stack:
        ports = {app: stack.enter_context(server(app)) for app in sorted(apps)}
        for app, path in paths.values():  # warm-up: templates, imports, caches
            load(ports[app], path, connections=connections, seconds=0.5)
        for _ in range(rounds):
            for name, (app, path) in paths.items():
                rps[name].append(load(ports[app], path, connections=connections, seconds=seconds).rps)
    return rps


def ratio(rps: dict[str, list[float]], name: str, to: str) -> float:
    """The median over the rounds of ``name``'s requests per second over ``to``'s in the same round."""
    return statistics.median(a / b for a, b in zip(rps[name], rps[to], strict=True))


def load_test(path: str, *, connections: int, seconds: float) -> Load:
    with server(DPSCALE_APP) as port:
        return load(port, path, connections=connections, seconds=seconds)


async def _upload(port: int, body: bytes, stop: float, statuses: list[int]) -> None:
    """Post ``body`` (a trace file) to /api/v1/explain again and again until ``stop``, as a client that does not
    wait its Retry-After would: each answer's status, 0 where the server closed first."""
    form = (
        b'--zz\r\nContent-Disposition: form-data; name="trace"; filename="bomb.json.gz"\r\n'
        b"Content-Type: application/gzip\r\n\r\n" + body + b"\r\n--zz--\r\n"
    )
    head = (
        f"POST /api/v1/explain HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=zz\r\n"
        f"Content-Length: {len(form)}\r\n\r\n"
    ).encode()
    while time.perf_counter() < stop:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(head + form)  # sent as the socket takes it, while the answer is awaited
            answer = await reader.readuntil(b"\r\n\r\n")
            statuses.append(int(answer.split(b" ", 2)[1]))
        except (ConnectionError, asyncio.IncompleteReadError):
            statuses.append(0)
        finally:
            writer.close()
        await asyncio.sleep(PAUSE)


_UPLOADS = """
import asyncio, json, sys, time
import bench.web
from bench.web import _upload
bench.web.PAUSE = float(sys.argv[5])
port, uploads, seconds, path = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
body = open(path, "rb").read()
statuses = []
async def main():
    stop = time.perf_counter() + seconds
    await asyncio.gather(*(_upload(port, body, stop, statuses) for _ in range(uploads)), return_exceptions=True)
asyncio.run(main())
print(json.dumps(statuses))
"""


def predict_under_uploads(
    path: str, upload: str, *, uploads: int, seconds: float, pause: float = PAUSE
) -> tuple[Load, Load, list[int], int]:
    """``path``'s load (4 connections) with no upload, then while ``uploads`` clients of a process of their own
    post the file ``upload`` to be explained, again and again; and the server's resident size after them, less
    before them."""
    with server(DPSCALE_APP) as port:
        load(port, path, connections=4, seconds=1.0)  # warm-up
        idle = load(port, path, connections=4, seconds=seconds - 2.0)
        before = resident(PIDS[port])
        senders = subprocess.Popen(
            [sys.executable, "-c", _UPLOADS, str(port), str(uploads), str(seconds), upload, str(pause)],
            stdout=subprocess.PIPE,
            text=True,
        )
        time.sleep(1.0)  # the uploads have arrived: jobs run and wait
        attacked = load(port, path, connections=4, seconds=seconds - 2.0)
        out, _ = senders.communicate(timeout=seconds + 120)
        time.sleep(1.0)  # the last answers are sent
        held = resident(PIDS[port]) - before
    return idle, attacked, json.loads(out), held
