"""Results to take away: each page's command and API call give its figures; its CSV is its JSON's rows."""

from __future__ import annotations

import csv
import io
import json
import re
import shlex
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from fastapi.testclient import TestClient

from dpscale.cli import main
from dpscale.web.app import create_app
from dpscale.web.export import rows_of
from dpscale.web.forms import CALCULATORS

PAGES = [(calc.name, calc.path) for calc in CALCULATORS.values()]
# Inputs each page is also tried with (past its example): a switch, a reference, a synonym, a time.
CHANGED = {
    "scaling": {"devices": "12", "efficiency": "88 %"},
    "predict": {"overlap": "off", "sharding": "full_shard", "measured": "8:7000", "jitter": "3 %"},
    "plan": {"deadline": "", "epochs": "3"},
    "pipeline": {"schedule": "interleaved", "chunks": "2"},
}


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def shown(page: str, code: str) -> str:
    found = re.search(rf'<code id="{code}">(.*?)</code>', page, re.S)
    assert found is not None, code
    return unescape(found.group(1))


def run(command: str, where: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The shown command run as a shell would: its here-documents written, then dpscale's arguments."""
    *files, last = re.split(r"(?<=\nEOF\n)", command)
    for written in files:
        head, body = written.split("\n", 1)
        name = re.fullmatch(r"cat > (\S+) <<'EOF'", head)
        assert name is not None
        (where / name.group(1)).write_text(body.removesuffix("EOF\n"))
    args = shlex.split(last)
    assert args[0] == "dpscale"
    capsys.readouterr()
    with pytest.raises(SystemExit) as ended:
        main([*args[1:], "--json"])
    assert ended.value.code == 0
    return dict(json.loads(capsys.readouterr().out))


def call(client: TestClient, text: str, accept: str = "application/json") -> Any:
    """The shown curl, sent to the app: a GET of its URL, or a POST of its here-document."""
    url = shlex.split(text.split("\n", 1)[0])[1]
    parts = urlsplit(url)
    target = f"{parts.path}?{parts.query}" if parts.query else parts.path
    if "--data-binary" in text:
        body = text.split("\n", 1)[1].removesuffix("\nEOF")
        return client.post(
            target, content=body.encode(), headers={"content-type": "application/json", "accept": accept}
        )
    return client.get(target, headers={"accept": accept})


def same(got: Any, want: Any) -> None:
    """Equal, floats to 1e-9 relative (the command and the page run the same code); a key whose value is
    null is as good as none (the API's schema names every key of a plan, ``memory: null`` too)."""
    if isinstance(want, dict):
        got = {k: v for k, v in got.items() if v is not None}
        want = {k: v for k, v in want.items() if v is not None}
        assert set(got) == set(want)
        for key in want:
            same(got[key], want[key])
    elif isinstance(want, list):
        assert len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            same(a, b)
    elif isinstance(want, float) and isinstance(got, int | float):
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
    else:
        assert got == want


def json_of(client: TestClient, page: str) -> dict[str, Any]:
    href = re.search(r'id="export-json" href="([^"]+)"', page)
    assert href is not None
    answer = client.get(unescape(href.group(1)))
    assert answer.status_code == 200
    assert "attachment" in answer.headers["content-disposition"]
    return dict(answer.json())


@pytest.mark.parametrize("lang", ["en", "fr"])
@pytest.mark.parametrize("changed", [False, True])
@pytest.mark.parametrize(("name", "path"), PAGES)
def test_the_shown_command_and_call_give_the_page_figures(
    client: TestClient,
    name: str,
    path: str,
    lang: str,
    changed: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if changed and name not in CHANGED:
        pytest.skip("the example only")
    params = {"lang": lang, **(CHANGED[name] if changed else {})}
    page = client.get(path, params=params).text
    assert 'id="export-json"' in page, "no result to take away"
    want = json_of(client, page)
    monkeypatch.chdir(tmp_path)
    same(run(shown(page, "command"), tmp_path, capsys), want)
    answered = call(client, shown(page, "api-call"))
    assert answered.status_code == 200, answered.text
    same(answered.json(), want)


def columns_of(rows: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(key for row in rows for key in row))


def side_by_side(columns: list[str]) -> bool:
    """Whether each key's columns (params.lambda, params.sigma…) stand together, in the order first met."""
    keys = [column.partition(".")[0] for column in columns]
    return keys == sorted(keys, key=keys.index)


@pytest.mark.parametrize(("name", "path"), PAGES)
def test_the_csv_is_the_json_rows(client: TestClient, name: str, path: str) -> None:
    page = client.get(path, params={"lang": "fr"}).text
    want = json_of(client, page)
    href = re.search(r'id="export-csv" href="([^"]+)"', page)
    assert href is not None
    text = client.get(unescape(href.group(1))).text
    read = list(csv.DictReader(io.StringIO(text)))
    rows = rows_of(want)
    assert len(read) == len(rows) >= 1
    assert sorted(read[0]) == sorted(columns_of(rows))
    assert side_by_side(list(read[0]))
    for got, row in zip(read, rows, strict=True):
        for key, value in row.items():
            if value is None:
                assert got[key] == ""
            elif isinstance(value, bool | int | float):
                same(json.loads(got[key]), value)
            else:
                assert got[key] == str(value)
    api = call(client, shown(page, "api-call"), accept="text/csv")
    assert api.headers["content-type"].startswith("text/csv")
    assert api.text == text


def test_a_prediction_has_a_row_per_size_in_csv(client: TestClient) -> None:
    answer = client.get(
        "/api/v1/predict",
        params={
            "devices": [8, 16],
            "batch": 256,
            "params": 25.6e6,
            "per_device_throughput": 938,
            "intra": "nvlink3",
            "inter": "ib-hdr",
        },
        headers={"accept": "text/csv"},
    )
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    assert [row["devices"] for row in rows] == ["8", "16"]
    assert "efficiency_interval.0" in rows[0]
    asked_json = client.get(
        "/api/v1/scaling?devices=8&per_device_throughput=1&efficiency=0.5",
        headers={"accept": "application/json, text/csv"},
    )
    assert asked_json.json()["devices"] == 8


def test_a_page_without_a_result_offers_nothing_and_export_refuses(client: TestClient) -> None:
    page = client.get("/", params={"devices": "zero"}).text
    assert 'id="export-json"' not in page
    refused = client.get("/export/scaling.csv", params={"devices": "zero"})
    assert refused.status_code == 422
    assert refused.json()["errors"][0]["field"] == "devices"
    assert client.get("/export/nothing.csv").status_code == 404
    assert client.get("/export/scaling.xml").status_code == 404


def test_a_posted_log_is_in_the_api_call_and_said_left_out_of_the_command(client: TestClient) -> None:
    log = (Path(__file__).parents[1] / "data" / "nccl" / "all_reduce_2nodes.txt").read_text()
    page = client.post("/predict?lang=en", data={"nccl_log": log}).text
    href = re.search(r'id="export-json" href="([^"]+)"', page)
    assert href is not None
    if href.group(1).startswith("data:"):  # too long for a link: the file comes inline
        want = json.loads(unquote(href.group(1).split(",", 1)[1]))
    else:
        want = json_of(client, page)
    text = shown(page, "api-call")
    assert "--data-binary" in text
    answered = call(client, text)
    assert answered.status_code == 200, answered.text
    same(answered.json(), want)
    assert "nccl_log" in page.split('id="command-left-out"', 1)[1].split("</p>", 1)[0]


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_a_prediction_hands_each_size_and_its_efficiency_to_plan(client: TestClient, lang: str) -> None:
    page = client.get("/predict", params={"lang": lang}).text
    want = json_of(client, page)["predictions"]
    links = re.findall(r'<a href="(/plan\?[^"]+)">', page.split('id="plan-next"', 1)[1].split("</p>", 1)[0])
    assert len(links) == len(want)
    for href, row in zip(links, want, strict=True):
        planned = client.get(unescape(href)).text
        assert 'id="export-json"' in planned
        plan = json_of(client, planned)
        assert (
            plan["requested"]["devices"] == row["devices"] if "requested" in plan else plan["devices"] == row["devices"]
        )
        asked = plan.get("requested", plan)
        assert asked["efficiency"] == pytest.approx(row["efficiency"], abs=5e-7)
        assert asked["per_device_throughput"] == pytest.approx(row["actual_throughput"] / row["speedup"], rel=1e-9)


@pytest.mark.parametrize(("path", "targets"), [("/", ["/predict", "/fit"]), ("/plan", ["/predict", "/fit"])])
def test_the_limits_point_to_the_calculators_that_go_past_them(
    client: TestClient, path: str, targets: list[str]
) -> None:
    page = client.get(path, params={"lang": "en"}).text
    limits = page.split(">Limits</h3>", 1)[1].split("<h3>", 1)[0]
    for target in targets:
        assert f'href="{target}?lang=en"' in limits


def test_a_fit_s_csv_keeps_each_key_s_columns_together(client: TestClient) -> None:
    # Each model brings its own parameters: the USL's kappa comes after the constant's E, beside the others.
    points = [{"devices": n, "throughput": t} for n, t in [(1, 100), (2, 190), (4, 350), (8, 600)]]
    answer = client.post("/api/v1/fit", json={"points": points}, headers={"accept": "text/csv"})
    header = next(csv.reader(io.StringIO(answer.text)))
    assert side_by_side(header)
    params = [column for column in header if column.startswith("params.")]
    assert header[header.index(params[0]) : header.index(params[0]) + len(params)] == params
    assert {"params.lambda", "params.sigma", "params.kappa"} <= set(params)
    assert header.index("params.kappa") < header.index("standard_errors.lambda")
