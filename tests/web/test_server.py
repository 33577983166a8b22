"""A real `dpscale serve`, sent hostile requests over a socket: nothing a client sends takes it down.

Each test talks HTTP/1.1 by hand where a client library would tidy the request up (a header with no
end, a body that never comes), and checks the server still answers the next client afterwards.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dpscale.web.api import api_router
from dpscale.web.app import create_app
from dpscale.web.chart_routes import chart_router
from dpscale.web.forms import CALCULATORS
from dpscale.web.pages import PageApp, page_router
from dpscale.web.security import API_CSP, CSP, MAX_BODY, MAX_SIZES, MAX_UPLOAD
from dpscale.web.server import LINGER_BYTES, REQUEST_SECONDS

SCRIPT = shutil.which("dpscale", path=str(Path(sys.executable).parent)) or "dpscale"
DEADLINE = 1.0  # --request-timeout given to the server under test: seconds
PATIENCE = 30.0  # how long a test waits for an answer before calling the server stuck


class Server:
    def __init__(self, process: subprocess.Popen[str], port: int) -> None:
        self.process = process
        self.port = port

    def connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=PATIENCE)
        sock.settimeout(PATIENCE)
        return sock

    def exchange(self, raw: bytes) -> tuple[int, dict[str, str], bytes]:
        """Send ``raw`` (a whole request, Connection: close) and read the whole answer."""
        with self.connect() as sock:
            sock.sendall(raw)
            return parse(read_all(sock))

    def get(self, target: str) -> tuple[int, dict[str, str], bytes]:
        return self.exchange(f"GET {target} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".encode())

    def alive(self) -> bool:
        return (
            self.process.poll() is None
            and self.get("/api/v1/scaling?devices=2&per_device_throughput=1&efficiency=1")[0] == 200
        )


def read_all(sock: socket.socket) -> bytes:
    parts = []
    while chunk := sock.recv(65536):
        parts.append(chunk)
    return b"".join(parts)


def parse(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, body


@contextmanager
def serving(request_timeout: float) -> Iterator[Server]:
    env = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_ALL", "LANGUAGE", "LC_MESSAGES")}
    process = subprocess.Popen(
        [SCRIPT, "serve", "--port", "0", "--request-timeout", str(request_timeout)],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stderr is not None
    line = process.stderr.readline()  # "dpscale: serving on http://127.0.0.1:PORT/ ..."
    port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
    try:
        yield Server(process, port)
    finally:
        process.terminate()
        process.wait(timeout=PATIENCE)
        process.stderr.close()


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with serving(DEADLINE) as started:
        yield started


@pytest.fixture(scope="module")
def patient() -> Iterator[Server]:
    """A server with the default request timeout: a refused body has its full time to be read away."""
    with serving(REQUEST_SECONDS) as started:
        yield started


@pytest.mark.parametrize("unit", ["%01", "%EF%BF%BE", "a%0Ab", "a%E2%80%A8b", "%E2%80%AEevil"])
@pytest.mark.parametrize("path", ["/chart/scaling.svg", "/api/v1/scaling", "/"])
def test_a_unit_the_renderer_cannot_draw_is_refused(server: Server, path: str, unit: str) -> None:
    status, _, body = server.get(f"{path}?devices=1&per_device_throughput=1&efficiency=1&lang=en&unit={unit}")
    if path == "/":  # the page shows the error beside the field
        assert status == 200
        assert re.search(rb'id="unit-error" >\s*Got .{3,30}; expected a label of 1 to 40 printable', body)
    else:
        assert status == 422
        assert json.loads(body)["errors"][0]["field"] == "unit"
    assert server.alive()


def test_deeply_nested_brackets_in_the_fit_query_are_an_error(server: Server) -> None:
    nested = '{"devices":' + "[" * 1900  # a JSON line past Python's recursion limit, in under 2 048 characters
    for path in ("/fit", "/fragment/fit", "/chart/fit.svg"):
        status, _, body = server.get(f"{path}?lang=en&measurements={nested}")
        assert status == (422 if path.startswith("/chart") else 200), path
        assert b"measurements" in body, path
    assert server.alive()


def test_an_announced_large_body_is_refused_before_it_is_sent(server: Server) -> None:
    head = (
        "POST /api/v1/fit HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
        f"Content-Length: {100 * 2**20}\r\nConnection: close\r\n\r\n"
    )
    status, headers, body = server.exchange(head.encode() + b"[")  # 100 MB announced, one byte sent
    assert status == 413
    assert json.loads(body)["errors"][0]["field"] == "body"
    assert headers["content-security-policy"] == API_CSP  # a refusal of the API's, before the API ran
    assert server.alive()


def test_a_chunked_body_past_the_limit_is_refused() -> None:
    # In-process; over a socket: test_urllib_reads_the_413_of_a_body_sent_in_chunks_past_the_limit.
    client = TestClient(create_app())
    chunks = (b"x" * 65536 for _ in range(MAX_BODY // 65536 + 2))  # no content-length: sent in chunks
    response = client.post("/api/v1/fit", content=chunks, headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert "at most 1048576 bytes" in response.json()["errors"][0]["message"]
    small = client.post(
        "/api/v1/fit", content=iter([b'{"points": [', b"]}"]), headers={"content-type": "application/json"}
    )
    assert small.status_code == 422  # a chunked body under the limit reaches the app whole


# A client that reads only once it has sent its whole body (Python's urllib, most scripts) reads an
# early refusal all the same: the server reads away what is still coming before it closes.
MIB = 1 << 20
UPLOAD_PAST = MAX_UPLOAD + 6 * MIB  # 70 MiB
TOO_LARGE = [
    ("/api/v1/explain", UPLOAD_PAST),
    ("/explain", UPLOAD_PAST),
    ("/", 2 * MAX_BODY),
    ("/api/v1/scaling", 2 * MAX_BODY),
]
TRIES = 5  # a reset lost the answer most times before: each try must read it


def blocks(size: int, head: bytes = b"", tail: bytes = b"") -> Iterator[bytes]:
    """``size`` bytes made as they are sent, never held whole: ``head``, then spaces, then ``tail``."""
    block = b" " * (1 << 16)
    yield head
    left = size - len(head) - len(tail)
    while left > 0:
        yield block[:left]
        left -= len(block)
    yield tail


def body_for(path: str, size: int) -> tuple[Iterator[bytes], str]:
    """A body of ``size`` bytes and its type: to an upload route, one trace file (refused only past the limit)."""
    if not path.endswith("explain"):
        return blocks(size), "application/octet-stream"
    head = b'--zz\r\nContent-Disposition: form-data; name="trace"; filename="big.json"\r\n\r\n'
    return blocks(size, head, b"\r\n--zz--\r\n"), "multipart/form-data; boundary=zz"


def post(server: Server, path: str, size: int, *, chunked: bool) -> tuple[int, dict[str, str], bytes]:
    """POST ``size`` bytes with urllib (no length: sent in chunks), which reads only once all is sent."""
    body, kind = body_for(path, size)
    headers = {"Content-Type": kind} if chunked else {"Content-Type": kind, "Content-Length": str(size)}
    request = urllib.request.Request(f"http://127.0.0.1:{server.port}{path}", body, headers, method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=PATIENCE)
    error = refused.value
    return error.code, {name.lower(): value for name, value in error.headers.items()}, error.read()


def assert_refused(status: int, headers: dict[str, str], body: bytes, expected: int = 413) -> None:
    assert status == expected
    assert headers["connection"] == "close"
    assert json.loads(body)["errors"][0]["field"] == "body"


@pytest.mark.parametrize(("path", "size"), TOO_LARGE)
def test_urllib_reads_the_413_of_a_body_announced_too_large(patient: Server, path: str, size: int) -> None:
    for _ in range(TRIES):
        assert_refused(*post(patient, path, size, chunked=False))
    assert patient.alive()


@pytest.mark.parametrize(("path", "size"), TOO_LARGE)
def test_urllib_reads_the_413_of_a_body_sent_in_chunks_past_the_limit(patient: Server, path: str, size: int) -> None:
    tries = 2 if path.endswith("explain") else TRIES  # an upload spools 64 MiB to disk before it is refused
    for _ in range(tries):
        assert_refused(*post(patient, path, size, chunked=True))
    assert patient.alive()


def test_a_socket_reads_the_413_after_sending_all_it_announced(patient: Server) -> None:
    size = UPLOAD_PAST
    body, kind = body_for("/api/v1/explain", size)
    head = f"POST /api/v1/explain HTTP/1.1\r\nHost: t\r\nContent-Type: {kind}\r\nContent-Length: {size}\r\n\r\n"
    with patient.connect() as sock:  # keep-alive asked: the server's answer ends the connection all the same
        sock.sendall(head.encode())
        for block in body:
            sock.sendall(block)
        answer = read_all(sock)  # returns: the server ends its side once it has answered
    assert_refused(*parse(answer))


def test_a_socket_reads_the_413_after_sending_all_its_chunks(patient: Server) -> None:
    with patient.connect() as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        for block in blocks(2 * MAX_BODY):
            if block:
                sock.sendall(b"%x\r\n%s\r\n" % (len(block), block))
        sock.sendall(b"0\r\n\r\n")
        answer = read_all(sock)
    assert_refused(*parse(answer))


def test_a_body_too_slow_is_told_408_even_if_it_comes_whole_after(server: Server) -> None:
    head = (
        f"POST /api/v1/fit HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {MAX_BODY}\r\n\r\n"
    )
    with server.connect() as sock:
        sock.sendall(head.encode() + b"[")
        assert select.select([sock], [], [], PATIENCE)[0]  # the 408 has come, unread
        for block in blocks(MAX_BODY - 1):  # the rest, at once: read away while the server lingers
            sock.sendall(block)
        answer = read_all(sock)
    assert_refused(*parse(answer), expected=408)


def keep_sending_after_a_refusal(server: Server, piece: int, pause: float) -> tuple[int, bool]:
    """Bytes sent after a 413 before the server cut the connection, and whether it answered another meanwhile."""
    with server.connect() as sock:
        sock.sendall(b"POST /api/v1/fit HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % (1 << 40))
        assert_refused(*parse(read_all(sock)))  # the answer, then end of stream: the server lingers
        sent = 0
        answered = False
        give_up = time.monotonic() + PATIENCE
        block = b" " * piece
        try:
            while time.monotonic() < give_up:
                sock.sendall(block)
                sent += piece
                if not answered and sent >= 4 * piece:
                    answered = server.alive()  # while this client still sends
                time.sleep(pause)
        except TimeoutError:
            pytest.fail("the server neither read nor closed")
        except OSError:  # reset: the server closed the connection
            return sent, answered
    pytest.fail(f"still sending after {PATIENCE} s, {sent} bytes")


def test_a_client_that_keeps_sending_slowly_is_cut_off_after_the_request_timeout(server: Server) -> None:
    sent, answered = keep_sending_after_a_refusal(server, 1024, 0.02)  # about 50 kB/s, for DEADLINE s
    assert answered
    assert sent < LINGER_BYTES


def test_a_client_that_keeps_sending_fast_is_cut_off_past_a_bounded_size(patient: Server) -> None:
    sent, answered = keep_sending_after_a_refusal(patient, MIB, 0)
    assert answered
    assert sent <= LINGER_BYTES + 64 * MIB  # what the kernels' buffers took, past what the server read away
    assert patient.alive()


def test_trace_files_past_a_pages_body_reach_the_explain_route(server: Server) -> None:
    part = b'--zz\r\nContent-Disposition: form-data; name="trace"; filename="big.json"\r\n\r\n'
    body = part + b" " * (3 << 20) + b"\r\n--zz--\r\n"  # 3 MiB of white space: read, and not a trace
    head = (
        "POST /api/v1/explain HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=zz\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    status, _, answer = server.exchange(head.encode() + body)
    assert status == 422
    assert "big.json" in json.loads(answer)["errors"][0]["message"]
    assert server.alive()


def test_an_error_echoes_a_few_dozen_characters_not_the_body(server: Server) -> None:
    body = json.dumps({"points": "x" * 900_000}).encode()
    head = (
        "POST /api/v1/fit HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    status, _, answer = server.exchange(head.encode() + body)
    assert status == 422
    assert len(answer) < 500
    assert "…" in json.loads(answer)["errors"][0]["message"]


@pytest.mark.parametrize(
    "sent",
    [b"", b"GET / HTTP/1.1\r\nHost: t\r\n", b"POST /api/v1/fit HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n{"],
    ids=["silent", "half a request", "half a body"],
)
def test_a_connection_that_never_completes_its_request_is_closed(server: Server, sent: bytes) -> None:
    with server.connect() as sock:
        sock.sendall(sent)
        answer = read_all(sock)  # returns once the server closes; PATIENCE would raise if it never did
    if sent.endswith(b"{"):  # headers arrived, the body did not: told so
        assert parse(answer)[0] == 408
    else:
        assert answer == b""
    assert server.alive()


def test_no_server_header_and_security_headers_on_every_answer(server: Server) -> None:
    for target in ("/?lang=en", "/api/v1/scaling?devices=0", "/no-such-page", "/static/dpscale.css"):
        _, headers, _ = server.get(target)
        assert "server" not in headers, target
        assert headers["x-content-type-options"] == "nosniff", target
        assert headers["content-security-policy"] == (API_CSP if target.startswith("/api/") else CSP), target
        # Where a browser follows links, what it sends of this address is bounded, and a page may not be framed by
        # browsers that predate frame-ancestors; JSON has no links and nothing to click through.
        assert headers.get("referrer-policy") == (None if target.startswith("/api/") else "same-origin"), target
        assert headers.get("x-frame-options") == (None if target.startswith("/api/") else "DENY"), target


def test_a_500_carries_the_security_headers() -> None:
    app = create_app()

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("a bug")

    response = TestClient(app, raise_server_exceptions=False).get("/boom")
    assert response.status_code == 500
    assert response.headers["content-security-policy"] == CSP
    assert response.headers["x-frame-options"] == "DENY"


def test_a_prediction_asks_for_a_bounded_number_of_device_counts(server: Server) -> None:
    query = "devices=1..1000000%2B245&per_device_throughput=938&batch=256&params=25.6M&grad_bytes=4&lang=en"
    for path in ("/chart/predict.svg", "/predict", "/fragment/predict"):
        status, _, body = server.get(f"{path}?{query}")
        assert status in (200, 422), path
        assert f"at most {MAX_SIZES} device counts".encode() in body, path
    api = "&".join(f"devices={n}" for n in range(1, MAX_SIZES + 2))
    status, _, _ = server.get(f"/api/v1/predict?{api}&per_device_throughput=938&batch=256&params=1e6&intra=nvlink3")
    assert status == 422


def test_the_routes_that_compute_run_off_the_event_loop() -> None:
    routes = [*api_router().routes, *page_router().routes, *chart_router().routes]
    heavy = [
        r
        for r in routes
        if getattr(r, "path", "").startswith(("/chart/", "/fragment/", "/api/v1/predict", "/api/v1/fit"))
    ]
    pages = [r for r in routes if getattr(r, "name", "") in ("scaling", "batch", "pipeline", "plan", "predict", "fit")]
    assert len(heavy) >= 10
    assert len(pages) == 6
    cheap = {calc.path for calc in CALCULATORS.values() if not calc.costly}  # a few multiplications
    assert cheap == {"/", "/batch"}
    cheap |= {f"/fragment/{calc.name}" for calc in CALCULATORS.values() if not calc.costly}
    for route in heavy + pages:
        if isinstance(route.endpoint, PageApp):  # type: ignore[attr-defined]  # a page's GET: rendered in the pool if costly
            assert route.endpoint.calc.costly == (route.path not in cheap), route.path  # type: ignore[attr-defined]
            continue
        assert not asyncio.iscoroutinefunction(route.endpoint), route.path  # type: ignore[attr-defined]


def test_serve_on_a_busy_port_is_exit_2_in_one_line(server: Server) -> None:
    done = subprocess.run(
        [SCRIPT, "serve", "--port", str(server.port)], capture_output=True, text=True, timeout=PATIENCE
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("error: port:")
    assert "Address already in use" in done.stderr


def test_the_schema_bounds_device_counts_and_names_the_presets() -> None:
    schema = create_app().openapi()
    parameters = {p["name"]: p["schema"] for p in schema["paths"]["/api/v1/predict"]["get"]["parameters"]}
    assert parameters["devices"]["items"] == {"type": "integer", "minimum": 1, "maximum": 10**9}
    assert parameters["devices"]["maxItems"] == MAX_SIZES
    assert "nvlink3" in parameters["intra"]["enum"]
    assert "ib-hdr" in parameters["inter"]["enum"]
    assert "413" in schema["paths"]["/api/v1/fit"]["post"]["responses"]
