"""/explain's server answer: its timeline drawn for a browser without JavaScript, its results in both languages."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dpscale.explain import read_trace
from dpscale.explain.timeline import step_drawing
from dpscale.web.app import create_app
from tests.explain_support import cpu_run
from tests.web.test_explain_page import cells, posted


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def answered(client: TestClient, files: list[Path], lang: str) -> str:
    r = client.post(f"/explain?lang={lang}", files=posted(files))
    assert r.status_code == 200
    return r.text


@pytest.mark.parametrize(("lang", "rank"), [("fr", "rang"), ("en", "rank")])
def test_the_timeline_is_drawn_by_the_server(client: TestClient, tmp_path: Path, lang: str, rank: str) -> None:
    files = cpu_run(tmp_path)
    page = answered(client, files, lang)
    shown = page.split('id="results-other"')[0]
    figure = re.search(r'<figure class="timeline" id="timeline">.*?</figure>', shown, re.S)
    assert figure is not None
    drawn = re.findall(r'<g class="rank">(.*?)</g>', figure.group(0), re.S)
    expected = [step_drawing(read_trace(f)) for f in files]  # the files are ranks 0, 1, 2
    assert [(g.count('class="compute"'), g.count('class="exposed"')) for g in drawn] == [
        (len(e.compute), len(e.exposed)) for e in expected
    ]
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", figure.group(0))
    assert [label for label in labels if label.startswith(rank)] == [f"{rank} 0", f"{rank} 1", f"{rank} 2"]
    assert 'role="img"' in figure.group(0)
    assert figure.group(0).count("<li>") == 3  # the legend
    widths = [float(w) for w in re.findall(r'<rect x="[^"]+" y="[^"]+" width="([^"]+)"', figure.group(0))]
    assert max(widths) <= 640


@pytest.mark.parametrize(("lang", "other", "header"), [("fr", "en", "Rank"), ("en", "fr", "Rang")])
def test_the_results_come_in_the_other_language_too(
    client: TestClient, tmp_path: Path, lang: str, other: str, header: str
) -> None:
    page = answered(client, cpu_run(tmp_path), lang)
    copy = re.search(rf'<template id="results-other" lang="{other}">(.*?)</template>', page, re.S)
    assert copy is not None
    assert f'<th scope="col">{header}</th>' in copy.group(1)
    assert len(cells(copy.group(1), "ranks")) == len(cells(page, "ranks")) == 3
    assert "<svg" not in copy.group(1)  # the script draws the other language's timeline itself
    data = re.search(r"""<div id="timeline-data" data-drawing='([^']*)'[^>]* hidden>""", page)
    assert data is not None
    drawing = json.loads(unescape(data.group(1)))
    assert [r["rank"] for r in drawing["ranks"]] == [0, 1, 2]
    # The link to /predict is in both copies (issue 27): the same figures, each in its own language.
    links = [re.findall(r'<p class="next" id="to-predict"><a href="([^"]*)"', text) for text in (page, copy.group(1))]
    assert [len(found) for found in links] == [2, 1]  # the page's (its copy in the template counted too)
    mine, theirs = unescape(links[0][0]), unescape(links[1][0])
    assert mine.startswith(f"/predict?lang={lang}&traced=t1_")
    assert theirs == mine.replace(f"lang={lang}", f"lang={other}")


def test_the_empty_page_has_nothing_to_keep(client: TestClient) -> None:
    page = client.get("/explain", params={"lang": "en"}).text
    assert "results-other" not in page
    assert "timeline-data" not in page
