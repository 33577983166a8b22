"""A menu shows what its link says: every name the core accepts for a choice selects that choice's option."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from dpscale.predict.defaults import SHARDING_SYNONYMS
from dpscale.web.app import create_app
from dpscale.web.forms import CALCULATORS


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def selected(page: str, name: str) -> list[str]:
    menu = re.search(rf'<select id="{name}".*?</select>', page, re.S)
    assert menu is not None, name
    return re.findall(r'<option value="([^"]*)" selected>', menu.group(0))


# Every synonym of every menu, read from the definitions: a new one is checked by itself.
SYNONYMS = sorted(
    {
        (calc.name, name, given, meant)
        for calc in CALCULATORS.values()
        for name, field in calc.fields.items()
        if field.spec is not None
        for given, meant in field.spec.synonyms
    }
)


def test_the_synonyms_are_those_of_the_core() -> None:
    assert {(given, meant) for calc, name, given, meant in SYNONYMS if calc == "predict"} == set(SHARDING_SYNONYMS)


@pytest.mark.parametrize(("calc", "name", "given", "meant"), SYNONYMS)
@pytest.mark.parametrize("lang", ["fr", "en"])
def test_a_synonym_in_a_link_selects_its_choice(
    client: TestClient, calc: str, name: str, given: str, meant: str, lang: str
) -> None:
    page = client.get(CALCULATORS[calc].path, params={name: given, "lang": lang}).text
    assert selected(page, name) == [meant]
    assert f"{name}={meant}&amp;" in page or f'{name}={meant}"' in page  # the links (chart, language) say it too


@pytest.mark.parametrize(("given", "meant"), [("FULL_SHARD", "zero3"), (" ZeRO2 ", "zero2"), ("HSDP", "hybrid")])
def test_a_choice_is_read_whatever_its_case(client: TestClient, given: str, meant: str) -> None:
    assert selected(client.get("/predict", params={"sharding": given, "lang": "en"}).text, "sharding") == [meant]


@pytest.mark.parametrize(
    ("given", "meant"), [("no", "off"), ("0", "off"), ("false", "off"), ("yes", "on"), ("1", "on")]
)
def test_a_switch_shows_the_state_it_was_read_as(client: TestClient, given: str, meant: str) -> None:
    assert selected(client.get("/predict", params={"overlap": given, "lang": "en"}).text, "overlap") == [meant]


def test_a_french_switch_word_is_shown_as_its_state(client: TestClient) -> None:
    assert selected(client.get("/predict", params={"overlap": "non", "lang": "fr"}).text, "overlap") == ["off"]


def test_an_unknown_choice_is_said_and_kept(client: TestClient) -> None:
    page = client.get("/predict", params={"sharding": "zero9", "lang": "en"})
    assert page.status_code == 200
    assert 'id="sharding-error"' in page.text
    assert "zero9" in page.text
