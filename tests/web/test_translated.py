"""Every sentence of an English page is translated on its French page (issue: a {% trans %} block
whose % sign no longer matched the catalog left a whole FAQ answer in English)."""

from __future__ import annotations

import html
import re

import pytest
from fastapi.testclient import TestClient

from dpscale.web.app import create_app
from dpscale.web.forms import CALCULATORS


def sentences(page: str) -> set[str]:
    body = re.split(r"<main\b[^>]*>", page, maxsplit=1)[1].split("</main>", 1)[0]
    body = re.sub(r"<(script|style|math|pre)\b.*?</\1>", " ", body, flags=re.S)  # pre: commands, not prose
    body = re.sub(r"<option\b.*?</option>", " ", body, flags=re.S)  # product names (presets.toml): not prose
    body = re.sub(r"<(input|textarea)\b[^>]*>", " ", body)  # what was typed
    text = html.unescape(re.sub(r"<[^>]+>", "\n", body))
    found = set()
    for part in re.split(r"(?<=[.!?:])\s+|\n", text):
        words = re.findall(r"[A-Za-z]{3,}", part)
        if len(words) >= 5:  # a sentence, not a number, a unit or a name
            found.add(" ".join(part.split()))
    return found


@pytest.mark.parametrize("path", [*(calc.path for calc in CALCULATORS.values()), "/explain"])
def test_no_english_sentence_is_left_on_the_french_page(path: str) -> None:
    client = TestClient(create_app())
    english = sentences(client.get(path, params={"lang": "en"}).text)
    french_page = client.get(path, params={"lang": "fr"}).text
    french = " ".join(sentences(french_page))
    left = sorted(s for s in english if s in french)
    assert english, path
    assert left == [], left[:3]


@pytest.mark.parametrize(
    ("path", "words"),
    [("/plan", ["coût", "énergie"]), ("/pipeline", ["étape", "bulle"]), ("/predict", ["étape", "exposée"])],
)
def test_the_formulas_name_their_quantities_in_french(path: str, words: list[str]) -> None:
    page = TestClient(create_app()).get(path, params={"lang": "fr"}).text
    formula = page.split("<math", 1)[1].split("</math>", 1)[0]
    texts = re.findall(r"<mtext>([^<]*)</mtext>", formula)
    assert set(words) <= set(texts), texts
    assert not {"cost", "energy", "step", "bubble", "exposed"} & set(texts)


def test_french_menus_name_the_link_presets_in_french() -> None:
    """presets.toml's descriptions reach the catalog (babel.cfg's extractor), so French menus say
    "via NVSwitch … liens" and the bandwidth hint writes Go/s, as French writes bytes."""
    client = TestClient(create_app())
    french = html.unescape(client.get("/predict", params={"lang": "fr"}).text)
    english = html.unescape(client.get("/predict", params={"lang": "en"}).text)
    assert "NVLink 4 through NVSwitch (H100 SXM5), 18 links" in english
    assert "NVLink 4 via NVSwitch (H100 SXM5), 18 liens" in french
    assert "through NVSwitch" not in french
    assert "Par exemple 300 Go/s." in french
    assert "Groupe de partitionnement du mode hybride" in french
