"""What a page says of itself: its skip link, its description, its named regions, and the 404 page's switch."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dpscale.web.app import create_app
from tests.explain_support import cpu_run

CALCULATORS = ["/", "/batch", "/pipeline", "/plan", "/predict", "/fit"]
HTML = {"accept": "text/html"}


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def skip_text(page: str) -> str:
    found = re.search(r'<a class="skip" href="#content">([^<]*)</a>', page)
    assert found is not None
    return unescape(found.group(1))


def description(page: str) -> str:
    found = re.search(r'<meta name="description" content="([^"]*)">', page)
    assert found is not None
    return unescape(found.group(1))


@pytest.mark.parametrize(
    ("path", "fr", "en"),
    [
        *((path, "Aller au calculateur", "Skip to the calculator") for path in CALCULATORS),
        ("/explain", None, "Skip to the traces"),
        ("/no-such-page", None, "Skip to the content"),
    ],
)
def test_the_skip_link_says_where_it_leads(client: TestClient, path: str, fr: str | None, en: str) -> None:
    assert skip_text(client.get(path, params={"lang": "en"}, headers=HTML).text) == en
    french = skip_text(client.get(path, params={"lang": "fr"}, headers=HTML).text)
    assert french == fr if fr else french != "Aller au calculateur"


@pytest.mark.parametrize("path", [*CALCULATORS, "/explain", "/no-such-page"])
def test_each_page_has_a_description_in_its_language(client: TestClient, path: str) -> None:
    said = {lang: description(client.get(path, params={"lang": lang}, headers=HTML).text) for lang in ("fr", "en")}
    assert all(40 <= len(text) <= 400 for text in said.values()), said
    assert said["fr"] != said["en"]
    assert "<" not in said["en"]


def test_the_calculators_descriptions_differ(client: TestClient) -> None:
    said = [description(client.get(path, params={"lang": "en"}).text) for path in [*CALCULATORS, "/explain"]]
    assert len(set(said)) == len(said)


def test_docs_has_a_description_and_a_way_back_in_french(client: TestClient) -> None:
    page = client.get("/docs").text
    assert description(page)
    assert re.search(r'<a href="/\?lang=fr" hreflang="fr" lang="fr">', page)
    assert page.count("<main") == 1  # Swagger UI draws its own main in this one's place


@pytest.mark.parametrize("lang", ["fr", "en"])
@pytest.mark.parametrize("path", ["/no-such-page", "/predict/old", "/a/b%20c"])
def test_the_404_language_switch_keeps_the_address(client: TestClient, path: str, lang: str) -> None:
    page = client.get(path, params={"lang": lang}, headers=HTML)
    assert page.status_code == 404
    other = "en" if lang == "fr" else "fr"
    switch = re.search(r'<a class="lang-switch" href="([^"]*)"', page.text)
    assert switch is not None
    assert unescape(switch.group(1)) == f"{path}?lang={other}"


@pytest.mark.parametrize(
    ("path", "link"),
    [
        ("//evil.example/x", "/evil.example/x"),  # a link to another host, were it kept
        ("/\\evil.example", "/evil.example"),  # read by browsers as //evil.example
        ("/\\/evil.example", "/evil.example"),
        ("/a b/é", "/a%20b/%C3%A9"),
        ('/"><script>', "/%22%3E%3Cscript%3E"),
    ],
)
def test_the_404_switch_stays_on_this_site(path: str, link: str) -> None:
    from dpscale.web.templating import _same_path

    assert _same_path(path) == link


def test_a_hostile_address_is_only_text(client: TestClient) -> None:
    page = client.get('/"><script>alert(1)</script>', params={"lang": "en"}, headers=HTML)
    assert page.status_code == 404
    assert "<script>alert" not in page.text
    assert "&lt;script&gt;" in description(page.text) or "<script>" in description(page.text)


def regions(page: str) -> list[tuple[str, str]]:
    """Each region's name: its aria-label, or the text of what its aria-labelledby names."""
    names = []
    for attrs in re.findall(r'<div class="scroll"[^>]*role="region"([^>]*)>', page):
        label = re.search(r'aria-label="([^"]*)"', attrs)
        by = re.search(r'aria-labelledby="([^"]*)"', attrs)
        if label:
            names.append(("label", unescape(label.group(1))))
        else:
            assert by is not None, attrs
            named = re.search(rf'id="{by.group(1)}"[^>]*>(.*?)</', page, re.S)
            assert named is not None, by.group(1)
            names.append(("caption", unescape(re.sub(r"<[^>]+>", "", named.group(1))).strip()))
    return names


MEASURED = "devices,throughput\n1,100\n2,190\n4,350\n8,610\n16,1000\n"
PAGES_WITH_TABLES = [
    ("/batch", {}),
    ("/plan", {}),
    ("/fit", {"measurements": MEASURED, "at": "32, 64"}),
]


@pytest.mark.parametrize("lang", ["fr", "en"])
@pytest.mark.parametrize(("path", "query"), PAGES_WITH_TABLES)
def test_each_table_region_is_named_by_its_caption(
    client: TestClient, path: str, query: dict[str, str], lang: str
) -> None:
    page = (
        client.post(f"{path}?lang={lang}", data=query).text if query else client.get(path, params={"lang": lang}).text
    )
    names = regions(page)
    tables = [name for kind, name in names if kind == "caption"]
    assert len(tables) == page.count("<table"), names
    assert all(name and name not in ("Table", "Tableau") for _, name in names), names
    assert len({name for _, name in names}) == len(names), names  # landmark-unique


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_the_predict_tables_are_named_by_their_captions(client: TestClient, lang: str) -> None:
    names = regions(client.get("/predict", params={"lang": lang}).text)
    assert all(name not in ("Table", "Tableau") for _, name in names), names


@pytest.mark.parametrize("lang", ["fr", "en"])
def test_the_explained_runs_tables_are_named_by_their_captions(client: TestClient, tmp_path: Path, lang: str) -> None:
    files = [("trace", (f.name, f.read_bytes(), "application/json")) for f in cpu_run(tmp_path)]
    page = client.post(f"/explain?lang={lang}", files=files).text
    shown = page.split('id="results-other"')[0]  # the other language's copy is inert, for the script
    names = regions(shown)
    assert [kind for kind, _ in names] == ["caption", "caption"]
    assert len({name for _, name in names}) == 2


@pytest.mark.parametrize("path", [*CALCULATORS, "/explain"])
def test_the_results_are_not_read_whole_at_each_change(client: TestClient, path: str) -> None:
    page = client.get(path, params={"lang": "en"}).text
    assert "aria-live" not in page  # the tables are not re-read: a status says a line (static/dpscale.js)
    assert re.search(r'<p class="visually-hidden" id="said" role="status"></p>', page)
