"""/explain's results kept a while on the server (issue 27, point 3): a posted upload is answered with a redirect
to an address that names its result, whose language link names it too, so that without JavaScript the results
survive a reload and the language switch; for a bounded time, count and weight; hostile tokens are 4xx, never 500.
"""

from __future__ import annotations

import html
import json
import pickle
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from dpscale.calculators.explain import ranks_grid
from dpscale.explain import explain
from dpscale.predict.linked import traced_text
from dpscale.web.app import create_app
from dpscale.web.explain_jobs import KEPT_BYTES, KEPT_MOST, KEPT_ONE, KEPT_SECONDS, Kept
from dpscale.web.explain_page import kept_results
from tests.explain_support import cpu_run
from tests.web.test_explain_page import cells, posted


class Clock:
    """Time that passes only when a test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(clock: Clock) -> Kept:
    return Kept(clock)


@pytest.fixture
def app(store: Kept) -> FastAPI:
    app = create_app()
    app.dependency_overrides[kept_results] = lambda: store
    return app


@pytest.fixture
def client(app: FastAPI) -> TestClient:
    return TestClient(app)


def post(client: TestClient, files: list[Path], lang: str) -> str:
    """The address the page's post is redirected to."""
    r = client.post("/explain", params={"lang": lang}, files=posted(files), follow_redirects=False)
    assert r.status_code == 303, r.text[:300]
    assert r.headers["cache-control"] == "no-store"
    return str(r.headers["location"])


def token_of(address: str) -> str:
    return parse_qs(urlsplit(address).query)["result"][0]


def switch_link(page: str) -> str:
    found = re.search(r'<a class="lang-switch" href="([^"]*)"', page)
    assert found is not None
    return html.unescape(found.group(1))


def predict_link(page: str) -> str:
    found = re.search(r'<p class="next" id="to-predict"><a href="([^"]*)"', page)
    assert found is not None
    return html.unescape(found.group(1))


def gone(page: str) -> bool:
    return 'id="gone"' in page and 'id="waiting"' in page and 'id="analysed"' not in page


@pytest.mark.parametrize(("lang", "other"), [("fr", "en"), ("en", "fr")])
def test_the_post_redirects_to_an_address_whose_language_link_keeps_the_results(
    client: TestClient, tmp_path: Path, lang: str, other: str
) -> None:
    files = cpu_run(tmp_path)
    found = explain(files)
    address = post(client, files, lang)
    token = token_of(address)
    assert address == f"/explain?lang={lang}&result={token}"
    assert Kept.well_formed(token)
    first = client.get(address)
    assert first.status_code == 200
    assert first.headers["cache-control"] == "no-store"  # one user's results: no shared cache keeps them
    assert cells(first.text, "ranks") == [list(row) for row in ranks_grid(found, lang).rows]  # type: ignore[arg-type]
    assert "30" in first.text.split('id="kept-for">', 1)[1].split("<", 1)[0]  # the page says how long
    switch = switch_link(first.text)
    assert switch == f"?lang={other}&result={token}"
    second = client.get("/explain" + switch)  # the language link, followed without JavaScript
    assert second.status_code == 200
    assert second.headers["content-language"] == other
    assert cells(second.text, "ranks") == [list(row) for row in ranks_grid(found, other).rows]  # type: ignore[arg-type]
    assert predict_link(second.text) == f"/predict?lang={other}&traced={traced_text(found)}"
    assert switch_link(second.text) == f"?lang={lang}&result={token}"
    again = client.get("/explain" + switch_link(second.text))  # and back: the same page as first shown
    assert cells(again.text, "ranks") == cells(first.text, "ranks")


def test_the_api_answers_a_kept_results_json(client: TestClient, tmp_path: Path) -> None:
    files = cpu_run(tmp_path)
    token = token_of(post(client, files, "en"))
    r = client.get("/api/v1/explain", params={"result": token})
    assert r.status_code == 200
    assert r.json() == client.post("/api/v1/explain", files=posted(files)).json()


def test_a_result_is_kept_for_its_time_and_no_longer(
    client: TestClient, clock: Clock, store: Kept, tmp_path: Path
) -> None:
    address = post(client, cpu_run(tmp_path), "en")
    clock.now += KEPT_SECONDS - 1
    assert 'id="analysed"' in client.get(address).text
    assert client.get("/api/v1/explain", params={"result": token_of(address)}).status_code == 200
    clock.now += 1
    r = client.get(address)
    assert r.status_code == 404
    assert gone(r.text)  # the empty page, and why
    assert "30" in r.text.split('id="gone">', 1)[1].split("<", 1)[0]
    assert switch_link(r.text) == "?lang=fr"  # the language link names nothing kept
    api = client.get("/api/v1/explain", params={"result": token_of(address)})
    assert api.status_code == 404
    assert api.json()["errors"][0]["field"] == "result"
    assert store.held == 0  # what it held is given back


def test_the_store_keeps_at_most_its_count_and_its_bytes(clock: Clock) -> None:
    assert (KEPT_MOST, KEPT_BYTES, KEPT_ONE) == (64, 32 << 20, 8 << 20)
    store = Kept(clock)
    tokens = [store.keep({"n": n}, []) for n in range(KEPT_MOST + 1)]
    assert None not in tokens
    assert len(set(tokens)) == len(tokens)
    assert store.get(tokens[0]) is None  # the oldest gave way
    assert store.get(tokens[1]) == ({"n": 1}, [])
    assert len(store.results) == KEPT_MOST
    weight = len(pickle.dumps(({"x": "a" * 1000}, []), protocol=pickle.HIGHEST_PROTOCOL))
    small = Kept(clock, size=3 * weight, one=3 * weight)
    kept = [small.keep({"x": c * 1000}, []) for c in "abcd"]
    assert [small.get(t) is not None for t in kept if t] == [False, True, True, True]
    assert small.held == 3 * weight
    assert small.keep({"x": "a" * 4000}, []) is None  # one result over the bound is not kept…
    assert [small.get(t) is not None for t in kept if t] == [False, True, True, True]  # …nor evicts any


def test_expired_results_give_way_in_order(clock: Clock) -> None:
    store = Kept(clock, seconds=10)
    first = store.keep("first", [])
    clock.now += 5
    second = store.keep("second", [])
    clock.now += 5  # the first's time is up, not the second's
    assert first is not None
    assert second is not None
    assert store.get(first) is None
    assert store.get(second) == ("second", [])
    clock.now += 5
    assert store.get(second) is None
    assert not store.results


def test_a_result_too_large_to_keep_is_shown_once(app: FastAPI, tmp_path: Path) -> None:
    app.dependency_overrides[kept_results] = lambda: Kept(one=100)
    client = TestClient(app)
    r = client.post("/explain", params={"lang": "en"}, files=posted(cpu_run(tmp_path)), follow_redirects=False)
    assert r.status_code == 200  # not redirected: nothing to name
    assert cells(r.text, "ranks")
    assert "too large" in r.text.split('id="kept-for">', 1)[1].split("<", 1)[0]
    assert switch_link(r.text) == "?lang=fr"
    assert 'data-result=""' in r.text


def test_the_result_is_kept_not_the_files(client: TestClient, store: Kept, tmp_path: Path) -> None:
    files = cpu_run(tmp_path)
    marked = json.loads(files[0].read_text())
    marked["traceEvents"].append({"ph": "i", "name": "only-in-the-file-7f3a", "ts": 0})
    files[0].write_text(json.dumps(marked))
    post(client, files, "en")
    (_, data), *_ = store.results.values()
    assert b"only-in-the-file-7f3a" not in data
    assert b"traceEvents" not in data


HOSTILE = [
    "",
    "x",
    "A" * 31,
    "A" * 33,
    "A" * 2000,
    "../../etc/passwd",
    "<script>alert(1)</script>AAAAAAAAAA",
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\u00e9",
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\r\n",
    "%00" * 11,
]


@pytest.mark.parametrize("token", HOSTILE)
def test_a_malformed_token_is_a_notice_on_the_page_and_a_422_on_the_api(client: TestClient, token: str) -> None:
    page = client.get("/explain", params={"lang": "en", "result": token})
    assert page.status_code == 422
    assert gone(page.text)
    assert "<script>alert" not in page.text  # never written back
    assert "passwd" not in page.text
    api = client.get("/api/v1/explain", params={"result": token})
    assert api.status_code == 422
    assert api.json()["errors"][0]["field"] == "result"


def test_an_unknown_token_is_the_empty_page_or_a_404(client: TestClient, tmp_path: Path) -> None:
    token = token_of(post(client, cpu_run(tmp_path), "en"))
    unknown = ("B" if token[0] == "A" else "A") + token[1:]  # one character off
    page = client.get("/explain", params={"lang": "fr", "result": unknown})
    assert page.status_code == 404
    assert gone(page.text)
    api = client.get("/api/v1/explain", params={"result": unknown})
    assert api.status_code == 404
    assert api.json() == {
        "errors": [
            {
                "field": "result",
                "message": "no results are kept under this token: "
                "the server keeps a result 30 minutes after it explains the files",
            }
        ]
    }
    assert client.get("/api/v1/explain").status_code == 422  # no token at all


def test_each_application_keeps_its_own(tmp_path: Path) -> None:
    one, two = TestClient(create_app()), TestClient(create_app())
    address = post(one, cpu_run(tmp_path), "en")
    assert one.get(address).status_code == 200
    assert two.get(address).status_code == 404


def test_an_error_is_shown_in_place_not_kept(client: TestClient, store: Kept) -> None:
    r = client.post("/explain", params={"lang": "en"}, files=[("trace", ("a.txt", b"hello", "text/plain"))])
    assert r.status_code == 422
    assert not store.results
