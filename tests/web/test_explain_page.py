"""/explain over HTTP: the page in both languages, trace files posted to it and to /api/v1/explain, their bounds."""

from __future__ import annotations

import asyncio
import concurrent.futures
import gzip
import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dpscale.calculators.explain import ranks_grid
from dpscale.explain import explain, read_trace
from dpscale.explain.timeline import step_drawing
from dpscale.web.app import create_app
from dpscale.web.security import MAX_UPLOAD, Guard
from tests.explain.test_explain import ONE_STEP, op, step, write
from tests.explain_support import cpu_run, gpu_run


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def posted(files: list[Path]) -> list[tuple[str, tuple[str, bytes, str]]]:
    return [("trace", (f.name, f.read_bytes(), "application/octet-stream")) for f in files]


def cells(page: str, table: str) -> list[list[str]]:
    body = page.split(f'id="{table}"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body.split("<tbody>", 1)[1], flags=re.S)
    return [
        [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)]
        for row in rows
    ]


@pytest.mark.parametrize(
    ("lang", "heading"), [("fr", "Où passe la durée d'une étape"), ("en", "Where the step time goes")]
)
def test_the_page_says_what_it_does_in_both_languages(client: TestClient, lang: str, heading: str) -> None:
    r = client.get("/explain", params={"lang": lang})
    assert r.status_code == 200
    assert r.headers["content-language"] == lang
    assert f"<h1>{heading}</h1>" in html.unescape(r.text)
    assert 'enctype="multipart/form-data"' in r.text  # without JavaScript the form posts the files
    assert f'action="/explain?lang={lang}"' in r.text
    assert f'<a href="/explain?lang={lang}" aria-current="page">' in r.text
    assert re.search(r"<script(?![^>]*\bsrc=)[^>]*>", r.text) is None  # the CSP allows no inline script
    words = json.loads(re.search(r"data-words='([^']*)'", r.text).group(1).replace("&#34;", '"'))  # type: ignore[union-attr]
    assert words["rank"] == ("Rang" if lang == "fr" else "Rank")


def test_every_page_links_to_it(client: TestClient) -> None:
    for path in ("/", "/batch", "/pipeline", "/plan", "/predict", "/fit"):
        assert 'href="/explain?lang=en"' in client.get(path, params={"lang": "en"}).text, path


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_posted_traces_give_the_cores_table(client: TestClient, tmp_path: Path, lang: str) -> None:
    files = cpu_run(tmp_path)
    r = client.post("/explain", params={"lang": lang}, files=posted(files))
    assert r.status_code == 200
    assert 'id="analysed"' in r.text
    found = explain(files)
    grid = ranks_grid(found, lang)  # type: ignore[arg-type]
    assert cells(r.text, "ranks") == [list(row) for row in grid.rows]
    assert len(cells(r.text, "levers")) == len(found.levers)
    drawing = json.loads(html.unescape(re.search(r"data-drawing='([^']*)'", r.text).group(1)))  # type: ignore[union-attr]
    assert drawing["slowest"] == 2
    expected = [step_drawing(read_trace(f)) for f in files]
    assert [d["rank"] for d in drawing["ranks"]] == [0, 1, 2]
    for d, e in zip(drawing["ranks"], expected, strict=True):
        assert d["step"] == e.step == 8
        assert d["compute"] == [list(iv) for iv in e.compute]
        assert d["exposed"] == [list(iv) for iv in e.exposed]
    assert "rank0.json" in r.text  # the note on its unreadable events names the upload by its own name
    assert "dpscale-explain-" not in r.text  # never the server's copy


def test_the_api_answers_the_json_of_the_cli(client: TestClient, tmp_path: Path) -> None:
    files = gpu_run(tmp_path)
    r = client.post("/api/v1/explain", files=posted(files))
    assert r.status_code == 200
    expected = explain(files).to_dict()
    got = r.json()
    assert set(got) == set(expected)
    assert [rank["file"] for rank in got["ranks"]] == ["gpu0.json", "gpu1.json"]
    for mine, theirs in zip(got["ranks"], expected["ranks"], strict=True):
        for key in ("rank", "steps", "step_time", "compute", "exposed_communication", "other", "overlap", "wait"):
            assert mine[key] == pytest.approx(theirs[key], rel=1e-12), key
    assert got["efficiency"] == pytest.approx(expected["efficiency"], rel=1e-12)
    assert got["calibration"]["bandwidth"] == pytest.approx(expected["calibration"]["bandwidth"], rel=1e-12)


def test_gzipped_uploads_are_read(client: TestClient, tmp_path: Path) -> None:
    plain = write(tmp_path / "r0.json", ONE_STEP)
    zipped = [("trace", ("r0.json.gz", gzip.compress(plain.read_bytes()), "application/gzip"))]
    r = client.post("/api/v1/explain", files=zipped)
    assert r.status_code == 200
    assert r.json()["ranks"][0]["compute"] == pytest.approx(35e-6)


def _bad_uploads(tmp_path: Path) -> list[tuple[str, list[tuple[str, bytes]], str]]:
    good = write(tmp_path / "good.json", ONE_STEP).read_bytes()
    other = write(tmp_path / "o.json", [step(7, 0, 100), op("aten::mm", 0, 5)], rank=1, world=2).read_bytes()
    return [
        ("not a trace", [("notes.txt", b"hello")], "notes.txt"),
        ("no steps", [("r0.json", write(tmp_path / "s.json", [op("aten::mm", 0, 5)]).read_bytes())], "ProfilerStep"),
        ("cut short", [("cut.json", good[: len(good) // 2])], "cut.json"),
        ("damaged gzip", [("z.json.gz", gzip.compress(good)[:-12])], "gzip"),
        ("other steps", [("r0.json", good), ("r1.json", other)], "r1.json"),
        ("same rank", [("a.json", good), ("b.json", good)], "b.json"),
        ("no file", [], "trace"),
    ]


def test_bad_files_are_a_422_naming_them_never_a_500(client: TestClient, tmp_path: Path) -> None:
    for case, uploads, named in _bad_uploads(tmp_path):
        files = [("trace", (name, data, "application/json")) for name, data in uploads]
        api = client.post("/api/v1/explain", files=files) if files else client.post("/api/v1/explain", data={"x": "1"})
        assert api.status_code == 422, case
        error = api.json()["errors"][0]
        assert error["field"] == "trace"
        assert named in error["message"], (case, error)
        page = client.post("/explain", params={"lang": "fr"}, files=files or None, data=None if files else {"x": "1"})
        assert page.status_code == 422, case
        said = re.search(r'id="explain-error" role="alert">([^<]*)<', page.text)
        assert said is not None, case
        assert "attendu" in said.group(1), said.group(1)  # in the page's language


def test_uploads_of_the_same_name_are_told_apart(client: TestClient, tmp_path: Path) -> None:
    one = write(tmp_path / "a.json", ONE_STEP, rank=0).read_bytes()
    files = [("trace", ("trace.json", one, "application/json"))] * 2
    r = client.post("/api/v1/explain", files=files)
    assert r.status_code == 422
    assert "trace.json (2)" in r.json()["errors"][0]["message"]  # rank 0 twice: which file is named


def test_a_body_that_is_not_a_form_of_files_is_a_4xx(client: TestClient) -> None:
    garbage = {"content-type": "multipart/form-data; boundary=zz"}
    assert client.post("/api/v1/explain", content=b"x" * 100, headers=garbage).status_code == 400
    r = client.post("/explain", params={"lang": "en"}, content=b"x" * 100, headers=garbage)
    assert r.status_code == 422
    assert 'id="explain-error" role="alert">The request does not hold files as the form sends them' in r.text


def test_more_than_a_pages_body_is_taken_but_not_past_the_upload_limit(client: TestClient, tmp_path: Path) -> None:
    big = cpu_run(tmp_path)  # padded past the pages' 1 MiB with events that are not complete ones
    padded = json.loads(big[0].read_text())
    padded["traceEvents"] += [{"ph": "i", "name": "x" * 100, "ts": 0}] * 12_000
    data = json.dumps(padded).encode()
    assert len(data) > 1 << 20
    r = client.post("/api/v1/explain", files=[("trace", ("rank0.json", data, "application/json"))])
    assert r.status_code == 200
    too_large = {"content-type": "multipart/form-data; boundary=zz", "content-length": str(MAX_UPLOAD + 1)}
    r = client.post("/api/v1/explain", content=b"", headers=too_large)
    assert r.status_code == 413
    assert f"at most {MAX_UPLOAD} bytes (64 MiB)" in r.json()["errors"][0]["message"]
    r = client.post("/explain", content=b"", headers={**too_large, "accept": "text/html", "accept-language": "fr"})
    assert r.status_code == 413
    assert "dpscale explain" in r.text
    assert "64" in r.text


def _run(chunks: list[bytes], *, gap: float = 0.0, more: bool = False) -> tuple[int, int]:
    """``chunks`` sent through the guard to an upload route as a chunked body: the status and what the route saw."""
    seen = 0
    sent: list[dict[str, Any]] = []

    async def route(scope: Any, receive: Any, send: Any) -> None:
        nonlocal seen
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise ConnectionError("gone")  # as Starlette's form parser raises ClientDisconnect
            seen += len(message["body"])
            if not message["more_body"]:
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def main() -> None:
        pending = [
            {"type": "http.request", "body": c, "more_body": more or i < len(chunks) - 1} for i, c in enumerate(chunks)
        ]

        async def receive() -> dict[str, Any]:
            await asyncio.sleep(gap)
            return pending.pop(0) if pending else {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "method": "POST",
            "path": "/api/v1/explain",
            "headers": [(b"transfer-encoding", b"chunked")],
        }
        await Guard(route, body_seconds=0.05)(scope, receive, send)

    # A loop of its own in a thread of its own: the suite's browser tests (Playwright's sync API)
    # may leave one running in this thread, where asyncio.run() cannot start another.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, main()).result()
    return sent[0]["status"], seen


def test_a_streamed_upload_is_handed_over_as_it_comes_and_cut_off_past_the_limit() -> None:
    piece = b"x" * (1 << 20)
    assert _run([piece] * 3) == (200, 3 << 20)  # past a page's 1 MiB
    status, seen = _run([piece] * 65)
    assert status == 413
    assert seen <= MAX_UPLOAD  # the route never saw more than the limit


def test_a_client_that_leaves_mid_upload_is_let_go() -> None:
    with pytest.raises(IndexError):  # no answer was sent, and the route's complaint went no further
        _run([b"x"], more=True)


def test_a_stalled_upload_is_a_408() -> None:
    status, _ = _run([b"x", b"y"], gap=0.2)
    assert status == 408


def _multipart(mib: int) -> Any:
    yield b'--zz\r\nContent-Disposition: form-data; name="trace"; filename="big.json"\r\n\r\n'
    for _ in range(mib):
        yield b" " * (1 << 20)
    yield b"\r\n--zz--\r\n"


def test_a_form_of_files_sent_in_chunks_past_the_limit_is_a_413(client: TestClient) -> None:
    form = {"content-type": "multipart/form-data; boundary=zz"}
    r = client.post("/api/v1/explain", content=_multipart(MAX_UPLOAD >> 20), headers=form)
    assert r.status_code == 413
    assert r.json()["errors"][0]["message"].endswith("at most 67108864 bytes (64 MiB)")
    r = client.post("/api/v1/explain", content=_multipart(3), headers=form)  # 3 MiB: past a page's bound only
    assert r.status_code == 422
    assert "big.json" in r.json()["errors"][0]["message"]


def test_uploads_named_alike_keep_distinct_names() -> None:
    from dpscale.web.explain_jobs import _named

    names = _named(["a", "a", "a (2)"])
    assert len(set(names)) == 3
    assert names[:2] == ["a", "a (2)"]
