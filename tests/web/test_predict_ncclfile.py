"""/predict and /api/v1/predict with an nccl-tests log: posted as text, read into the network, errors by line."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dpscale.web.app import create_app
from dpscale.web.security import MAX_BODY

DATA = Path(__file__).resolve().parents[1] / "data" / "nccl"
TWO_NODES = (DATA / "all_reduce_2nodes.txt").read_text(encoding="utf-8")
BODY = {"devices": [8, 16, 64], "batch": 256, "params": 25.6e6, "per_device_throughput": 938, "intra": "nvlink3"}


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def error_of(html: str, name: str) -> str:
    found = re.search(rf'id="{name}-error"\s*>(.*?)</p>', html, re.S)
    assert found, f"no error paragraph for {name}"
    return unescape(found.group(1)).strip()


def table(html: str) -> str:
    return html.split('id="predictions"', 1)[1].split("</table>", 1)[0]


def test_the_page_posts_its_form_with_a_textarea_and_a_file_input_for_the_log(client: TestClient) -> None:
    html = client.get("/predict?lang=en").text
    form = re.search(r'<form id="calc"[^>]*>', html)
    assert form
    assert 'method="post"' in form.group(0)  # a log is data, not a link: posted (the short inputs stay linkable)
    assert re.search(r'<textarea id="nccl_log" name="nccl_log"', html)  # pasted without JavaScript
    assert re.search(r'<input id="nccl_log-file" type="file"[^>]*data-fills="nccl_log"', html)
    assert f'data-max-bytes="{MAX_BODY}"' in html


def test_a_posted_log_gives_the_network_and_the_page_says_which(client: TestClient) -> None:
    plain = client.post("/predict?lang=en", data={"nccl_log": ""})
    logged = client.post("/predict?lang=en", data={"nccl_log": TWO_NODES})
    assert logged.status_code == 200
    assert table(logged.text) != table(plain.text)
    said = re.search(r'id="network-used">(.*?)</p>', logged.text, re.S)
    assert said
    assert unescape(said.group(1)) == (
        "Network: from the nccl-tests log (all_reduce), 16 ranks on 2 hosts, bus bandwidth up to 363 GB/s."
    )
    assert 'id="network-used"' not in plain.text
    assert 'src="data:image/svg+xml;base64,' in logged.text  # the chart inline: its URL could not carry the log
    french = client.post("/fragment/predict?lang=fr", data={"nccl_log": TWO_NODES})
    assert "d'après le journal nccl-tests (all_reduce), 16 rangs sur 2 hôtes," in unescape(french.text)


def test_the_api_takes_the_log_in_its_json_body(client: TestClient) -> None:
    answer = client.post("/api/v1/predict", json={**BODY, "nccl_log": TWO_NODES})
    assert answer.status_code == 200
    network = answer.json()["assumptions"]["network_profile"]
    assert (network["collective"], network["ranks"], network["hosts"]) == ("all_reduce", 16, 2)
    plain = client.get("/api/v1/predict", params=BODY)
    assert plain.status_code == 200
    assert answer.json()["predictions"][2]["efficiency"] != plain.json()["predictions"][2]["efficiency"]
    same = client.post("/api/v1/predict", json=BODY)  # the body without a log: what the query gives
    assert same.json()["predictions"] == plain.json()["predictions"]


@pytest.mark.parametrize(
    ("log", "field", "said"),
    [
        (TWO_NODES.replace("26.64", "x26.6", 1), "nccl_log, line 28", "a number in column time, not x26.6"),
        ("not a log at all", "nccl_log", "the output of all_reduce_perf, reduce_scatter_perf or all_gather_perf"),
        (TWO_NODES + TWO_NODES.replace("26.64", "x26.6", 1), "nccl_log, line 90", "a number in column time, not x26.6"),
    ],
)
def test_a_bad_log_is_a_422_with_its_line_and_beside_the_field(
    client: TestClient, log: str, field: str, said: str
) -> None:
    answer = client.post("/api/v1/predict", json={**BODY, "nccl_log": log})
    assert answer.status_code == 422
    [error] = answer.json()["errors"]
    assert error["field"] == field
    assert said in error["message"]
    page = client.post("/predict?lang=en", data={"nccl_log": log})
    assert page.status_code == 200
    assert said in error_of(page.text, "nccl_log")
    assert 'id="predictions"' not in page.text


def test_a_log_of_several_runs_predicts_with_its_widest_all_reduce(client: TestClient) -> None:
    """Two runs pasted together (as a script that runs nccl-tests twice prints them) are read, not refused."""
    one = client.post("/api/v1/predict", json={**BODY, "nccl_log": TWO_NODES})
    two = client.post("/api/v1/predict", json={**BODY, "nccl_log": TWO_NODES + TWO_NODES})
    assert one.status_code == two.status_code == 200
    assert two.json()["predictions"] == one.json()["predictions"]


def test_a_body_past_the_limit_is_refused_saying_the_limit(client: TestClient) -> None:
    answer = client.post("/api/v1/predict", json={**BODY, "nccl_log": TWO_NODES * (MAX_BODY // len(TWO_NODES) + 1)})
    assert answer.status_code == 413
    assert "1 MiB" in answer.json()["errors"][0]["message"]


def test_an_unknown_key_of_the_body_is_refused_by_name(client: TestClient) -> None:
    answer = client.post("/api/v1/predict", json={**BODY, "ncl_log": TWO_NODES})
    assert answer.status_code == 422
    assert answer.json()["errors"][0]["field"] == "ncl_log"


def test_get_and_post_are_both_allowed_on_the_api_path(client: TestClient) -> None:
    answer = client.put("/api/v1/predict", json=BODY)
    assert answer.status_code == 405
    assert set(answer.headers["allow"].split(", ")) >= {"GET", "POST"}


def test_a_log_the_fit_refuses_is_quoted_as_the_run_it_is(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    # Refused after it was read (by the fit of its times): the message names the run, not "got 'nccl_log'".
    from dpscale.errors import InvalidInput
    from dpscale.predict import network

    def refused(log: object) -> object:
        raise InvalidInput("import", "nccl_log", "times that grow with the message size")

    monkeypatch.setattr(network, "from_log", refused)
    answer = client.post("/api/v1/predict", json={**BODY, "nccl_log": TWO_NODES})
    assert answer.status_code == 422
    error = answer.json()["errors"][0]
    assert error["field"] == "nccl_log"
    assert error["message"].startswith("got 'all_reduce, 16 ranks on 2 hosts'; expected times"), error
