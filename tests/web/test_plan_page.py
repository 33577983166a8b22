"""/plan as a newcomer uses it: French durations, dataset sizes as /predict writes them, readable errors."""

from __future__ import annotations

from html import unescape

import pytest
from fastapi.testclient import TestClient

from dpscale.web.app import create_app
from tests.web.test_app import NNBSP, text_of
from tests.web.test_fields import query


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


@pytest.mark.parametrize(
    ("lang", "deadline", "same_as"),
    [("fr", "2 heures", "2 h"), ("fr", "1h30", "90 min"), ("en", "1h30", "90 min"), ("fr", "1 h 30 min", "90 min")],
)
def test_french_durations_are_read(client: TestClient, lang: str, deadline: str, same_as: str) -> None:
    typed = client.get("/plan", params=query("plan", lang, deadline=deadline))
    plain = client.get("/plan", params=query("plan", lang, deadline=same_as))
    assert text_of(typed.text, "deadline-error") == ""
    assert text_of(typed.text, "deadline-title") == text_of(plain.text, "deadline-title")


@pytest.mark.parametrize(("lang", "work", "same_as"), [("en", "1.2M", "1,200,000"), ("fr", "1,2M", "1 200 000")])
def test_a_dataset_size_takes_a_suffix_as_predict_does(client: TestClient, lang: str, work: str, same_as: str) -> None:
    typed = client.get("/plan", params=query("plan", lang, work=work))
    plain = client.get("/plan", params=query("plan", lang, work=same_as))
    assert text_of(typed.text, "work-error") == ""
    assert text_of(typed.text, "requested.seconds") == text_of(plain.text, "requested.seconds")


@pytest.mark.parametrize(
    ("lang", "needed"), [("en", "50,000,000,000 samples/s"), ("fr", f"50{NNBSP}000{NNBSP}000{NNBSP}000")]
)
def test_an_unreachable_deadline_speaks_in_numbers_people_write(client: TestClient, lang: str, needed: str) -> None:
    r = client.get("/plan", params=query("plan", lang, work="1T"))
    error = unescape(text_of(r.text, "deadline-error"))
    assert error.startswith(("Got “30 min”", "Reçu «\u00a030 min\u00a0»"))  # what was typed, not 1800.0
    assert needed in error
    assert "e+" not in error
    assert "1800.0" not in error


def test_same_cost_rows_are_explained(client: TestClient) -> None:
    r = client.get("/plan", params=query("plan", "en"))
    assert "same device-hours" in text_of(r.text, "same-cost")
    fr = client.get("/plan", params=query("plan", "fr"))
    assert "mêmes heures-appareil" in unescape(text_of(fr.text, "same-cost"))
