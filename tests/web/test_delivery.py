"""How answers travel (dpscale.web.delivery): gzip, HEAD, the static files' caching, /predict's chart kept."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dpscale.web.app import create_app
from dpscale.web.delivery import FOREVER, GZIP_MINIMUM

NCCL = Path(__file__).resolve().parents[1] / "data" / "nccl"
PAGES = ["/", "/batch", "/pipeline", "/plan", "/predict", "/fit", "/explain"]


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


@pytest.mark.parametrize("path", [*PAGES, "/static/vendor/swagger-ui/swagger-ui-bundle.js"])
def test_what_is_large_is_gzipped_for_a_client_that_takes_it(client: TestClient, path: str) -> None:
    r = client.get(path, params={"lang": "en"}, headers={"accept-encoding": "gzip"})
    assert r.status_code == 200
    assert r.headers["content-encoding"] == "gzip"
    assert "accept-encoding" in r.headers["vary"].lower()
    assert r.num_bytes_downloaded < len(r.content) / 2  # what came, against the page unzipped
    plain = client.get(path, params={"lang": "en"}, headers={"accept-encoding": "identity"})
    assert "content-encoding" not in plain.headers
    assert plain.content == r.content


def test_a_small_answer_is_sent_as_it_is(client: TestClient) -> None:
    r = client.get(
        "/api/v1/scaling",
        params={"devices": 8, "per_device_throughput": 100, "efficiency": 0.9},
        headers={"accept-encoding": "gzip"},
    )
    assert len(r.content) < GZIP_MINIMUM
    assert "content-encoding" not in r.headers


@pytest.mark.parametrize(
    "path",
    [*PAGES, "/docs", "/chart/scaling.svg", "/favicon.ico", "/static/dpscale.css", "/openapi.json", "/api/v1/scaling"],
)
def test_head_answers_as_get_without_a_body(client: TestClient, path: str) -> None:
    plain = {"accept-encoding": "identity"}
    got = client.get(path, params={"lang": "en"}, headers=plain)
    head = client.head(path, params={"lang": "en"}, headers=plain)
    assert head.status_code == got.status_code
    assert head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]
    assert head.headers["content-length"] == str(len(got.content))


def test_head_of_a_missing_page_is_a_404(client: TestClient) -> None:
    r = client.head("/no-such-page", headers={"accept": "text/html"})
    assert r.status_code == 404
    assert r.content == b""


def test_a_route_that_only_posts_still_says_so_to_head(client: TestClient) -> None:
    r = client.head("/api/v1/fit")
    assert r.status_code == 405
    assert "POST" in r.headers["allow"]


def static_links(page: str) -> list[str]:
    return re.findall(r'(?:href|src)="(/static/[^"]+)"', page)


@pytest.mark.parametrize("path", ["/", "/explain", "/docs", "/no-such-page"])
def test_static_links_carry_their_version_and_are_kept_a_year(client: TestClient, path: str) -> None:
    links = static_links(client.get(path, headers={"accept": "text/html"}).text)
    assert links
    for link in links:
        assert re.search(r"\?v=[0-9a-f]{12}$", link), link
        r = client.get(link.replace("&amp;", "&"))
        assert r.status_code == 200, link
        assert r.headers["cache-control"] == FOREVER, link


def test_a_static_file_without_its_version_is_asked_again_each_time(client: TestClient) -> None:
    r = client.get("/static/dpscale.css")
    assert r.headers["cache-control"] == "no-cache"
    etag = r.headers["etag"]
    again = client.get("/static/dpscale.css", headers={"if-none-match": etag})
    assert again.status_code == 304
    old = client.get("/static/dpscale.css?v=000000000000")
    assert old.headers["cache-control"] == "no-cache"  # an old version's URL: its content has changed


def test_a_path_out_of_the_static_folder_is_refused(client: TestClient) -> None:
    for path in ("/static/../app.py", "/static/%2e%2e/app.py", "/static/vendor/../../pages.py"):
        r = client.get(path)
        assert r.status_code == 404, path
        assert "cache-control" not in r.headers or r.headers["cache-control"] != FOREVER


LLAMA = {"devices": "8, 64, 512", "per_device_throughput": "3", "params": "8B", "sharding": "full_shard"}


def svg_width(svg: str) -> int:
    found = re.search(r'<svg[^>]* width="(\d+)"', svg)
    assert found is not None
    return int(found.group(1))


def test_the_predict_chart_is_drawn_once_per_url(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    import dpscale.charts

    drawn: list[object] = []
    original = dpscale.charts.prediction_chart

    def counted(*args: object, **kwargs: object) -> object:
        drawn.append(args)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(dpscale.charts, "prediction_chart", counted)
    query = {**LLAMA, "lang": "en", "jitter": "3%"}  # a URL no other test asks for
    first = client.get("/chart/predict.svg", params=query)
    assert first.status_code == 200
    assert len(drawn) == 1
    again = client.get("/chart/predict.svg", params=dict(reversed(list(query.items()))))  # the same, in another order
    assert again.text == first.text
    assert len(drawn) == 1
    client.get("/chart/predict.svg", params={**query, "width": 290})
    client.get("/chart/predict.svg", params={**query, "lang": "fr"})
    assert len(drawn) == 3  # another width, another language: another chart
    wrong = client.get("/chart/predict.svg", params={**query, "devices": "0"})
    assert wrong.status_code == 422
    assert wrong.json()["errors"][0]["field"] == "devices"


@pytest.mark.parametrize(("width", "least", "most"), [(640, 640, 760), (290, 290, 400)])
def test_the_predict_chart_is_drawn_at_the_width_asked(client: TestClient, width: int, least: int, most: int) -> None:
    svg = client.get("/chart/predict.svg", params={**LLAMA, "lang": "en", "width": width}).text
    assert least <= svg_width(svg) <= most


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_after_a_log_the_chart_comes_back_at_the_pages_width(client: TestClient, lang: str) -> None:
    log = (NCCL / "all_reduce_2nodes.txt").read_text(encoding="utf-8")
    r = client.post(f"/predict?lang={lang}", data={**LLAMA, "nccl_log": log})
    assert r.status_code == 200
    uri = re.search(r'src="data:image/svg\+xml;base64,([^"]+)"', r.text)
    assert uri is not None  # a log is too long for the chart's URL: the chart comes inline
    assert svg_width(base64.b64decode(uri.group(1)).decode()) >= 640
