"""What an upload to /explain may cost the server: jobs in processes of their own, a few at once, stopped
when their client leaves or their time is up, their files bounded together.

Deterministic on a busy machine: a job that must outlast something runs a target that never
ends (so only the disconnect, or the deadline, can end it), and the concurrency is tested by
holding jobs until the test lets them go, never by racing the clock.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gzip
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dpscale.explain import own_process
from dpscale.web import explain_jobs
from dpscale.web.app import create_app
from tests.explain.test_explain import ONE_STEP, write

MIB = 2**20


def never_ends(folder: str, names: list[str], nice: int) -> None:
    """A job's target that only a kill ends (imported by the job's process from this module)."""
    while True:
        time.sleep(60)


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The processes the jobs start, in order."""
    processes: list[Any] = []
    real = explain_jobs._context()

    class Recording:
        def Process(self, *args: Any, **kwargs: Any) -> Any:
            process = real.Process(*args, **kwargs)
            process.given = kwargs["args"]  # start() forgets them
            processes.append(process)
            return process

    monkeypatch.setattr(explain_jobs, "_context", Recording)
    return processes


def trace(tmp_path: Path, name: str = "r0.json") -> list[tuple[str, tuple[str, bytes, str]]]:
    return [("trace", (name, write(tmp_path / name, ONE_STEP).read_bytes(), "application/json"))]


def test_a_job_runs_in_a_process_of_its_own_that_ends_with_it(tmp_path: Path, made: list[Any]) -> None:
    r = TestClient(create_app()).post("/api/v1/explain", files=trace(tmp_path))
    assert r.status_code == 200
    assert r.json()["ranks"][0]["compute"] == pytest.approx(35e-6)
    assert len(made) == 1
    assert made[0].exitcode == 0  # it ended: all it held was given back with it
    folder = made[0].given[0]  # the job's own folder: gone with its copies
    assert not Path(folder).exists()


def test_a_job_past_its_time_is_stopped_and_answered_503(
    tmp_path: Path, made: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(own_process, "explain_folder", never_ends)
    monkeypatch.setattr(explain_jobs, "EXPLAIN_SECONDS", 0.5)
    client = TestClient(create_app())
    r = client.post("/api/v1/explain", files=trace(tmp_path))
    assert r.status_code == 503
    assert r.headers["retry-after"] == str(explain_jobs.RETRY_SECONDS)
    error = r.json()["errors"][0]
    assert error["field"] == "trace"
    assert error["message"].startswith("The files were not explained within 0.5 s")
    assert made[0].exitcode == -signal.SIGKILL  # killed: it would never have ended
    page = client.post("/explain", params={"lang": "en"}, files=trace(tmp_path))
    assert page.status_code == 503
    assert "were not explained within" in page.text
    assert made[1].exitcode == -signal.SIGKILL


def _multipart(files: list[tuple[str, bytes]]) -> bytes:
    parts = [
        b'--zz\r\nContent-Disposition: form-data; name="trace"; filename="'
        + name.encode()
        + b'"\r\n\r\n'
        + data
        + b"\r\n"
        for name, data in files
    ]
    return b"".join(parts) + b"--zz--\r\n"


def _in_a_loop_of_its_own(work: Callable[[], Any]) -> Any:
    # A loop in a thread of its own: the suite's browser tests may leave one running in this thread.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work()).result()


def test_a_client_that_leaves_stops_its_job(tmp_path: Path, made: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(own_process, "explain_folder", never_ends)
    monkeypatch.setattr(explain_jobs, "EXPLAIN_SECONDS", 120.0)  # only the disconnect can end it sooner
    app = create_app()
    body = _multipart([("r0.json", write(tmp_path / "r0.json", ONE_STEP).read_bytes())])
    sent: list[dict[str, Any]] = []

    async def main() -> float:
        pending = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive() -> dict[str, Any]:
            if pending:
                return pending.pop(0)
            while not made or made[0].pid is None:  # the job has started: now leave
                await asyncio.sleep(0.01)
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "method": "POST",
            "path": "/api/v1/explain",
            "query_string": b"",
            "headers": [(b"content-type", b"multipart/form-data; boundary=zz"), (b"content-length", b"%d" % len(body))],
        }
        start = time.monotonic()
        await app(scope, receive, send)
        return time.monotonic() - start

    took = _in_a_loop_of_its_own(main)
    assert made[0].exitcode == -signal.SIGKILL  # stopped, not left running for nobody
    assert took < 120  # by the disconnect, not the deadline
    assert not any(m.get("status") == 503 for m in sent)


def test_past_the_jobs_and_the_line_an_upload_is_a_503_before_its_body_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(explain_jobs, "EXPLAIN_JOBS", 1)
    monkeypatch.setattr(explain_jobs, "EXPLAIN_WAITING", 1)
    release = threading.Event()
    running = threading.Event()
    admitted = threading.Semaphore(0)
    real_run, real_admit = explain_jobs._run, explain_jobs.Jobs.admit

    async def held(*args: Any) -> Any:
        running.set()
        while not release.is_set():  # the first job runs until the test lets it go
            await asyncio.sleep(0.01)
        return await real_run(*args)

    def counted(self: Any) -> bool:
        taken = real_admit(self)
        if taken:
            admitted.release()
        return bool(taken)

    monkeypatch.setattr(explain_jobs, "_run", held)
    monkeypatch.setattr(explain_jobs.Jobs, "admit", counted)
    client = TestClient(create_app())
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        first = pool.submit(client.post, "/api/v1/explain", files=trace(tmp_path, "a.json"))
        assert running.wait(60)
        second = pool.submit(client.post, "/api/v1/explain", files=trace(tmp_path, "b.json"))
        assert admitted.acquire(timeout=60)  # both in: one runs, one waits
        assert admitted.acquire(timeout=60)
        refused = client.post("/api/v1/explain", files=trace(tmp_path, "c.json"))
        page = client.post("/explain", params={"lang": "en"}, files=trace(tmp_path, "d.json"))
        release.set()
        assert first.result(60).status_code == 200
        assert second.result(60).status_code == 200  # its turn came
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == str(explain_jobs.RETRY_SECONDS)
    error = refused.json()["errors"][0]
    assert error["field"] == "trace"
    assert "at most 1 uploads at once, with 1 more waiting, and has that many now" in error["message"]
    assert page.status_code == 503
    assert page.headers["retry-after"] == str(explain_jobs.RETRY_SECONDS)
    assert 'id="explain-error" role="alert">The server explains at most 1 uploads at once' in page.text
    assert client.post("/api/v1/explain", files=trace(tmp_path, "e.json")).status_code == 200  # room again


def bomb(mib: int) -> bytes:
    """A gzip bomb: ``mib`` MiB of white space inside a trace's brackets, a thousand times smaller."""
    return gzip.compress(b'{"traceEvents": [' + b" " * (mib * MIB) + b"]}", 9)


def test_eight_gzip_bombs_in_one_request_are_refused_at_the_first_ones_ratio(tmp_path: Path) -> None:
    one = bomb(64)
    assert len(one) < MIB // 8
    files = [("trace", (f"bomb{i}.json.gz", one, "application/gzip")) for i in range(8)]
    r = TestClient(create_app()).post("/api/v1/explain", files=files)
    assert r.status_code == 422
    error = r.json()["errors"][0]
    assert error["field"] == "trace"
    assert "bomb0.json.gz" in error["message"]
    assert "a gzip file that unzips to at most 100 times its size" in error["message"]


def test_a_trace_with_a_byte_order_mark_is_read_by_the_server(tmp_path: Path) -> None:
    marked = b"\xef\xbb\xbf" + write(tmp_path / "r0.json", ONE_STEP).read_bytes()
    r = TestClient(create_app()).post("/api/v1/explain", files=[("trace", ("bom.json", marked, "application/json"))])
    assert r.status_code == 200
    assert r.json()["ranks"][0]["compute"] == pytest.approx(35e-6)
