"""A page's headers, its language's written once (pages._html): the same, in the same order, as HTMLResponse writes."""

from __future__ import annotations

import pytest
from fastapi.responses import HTMLResponse

from dpscale.i18n import LANGUAGES, Lang
from dpscale.web.pages import _html


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("page", [b"<p>\xc3\xa9</p>", "<p>é</p>", b""])
def test_headers_as_htmlresponse_writes_them(lang: Lang, page: str | bytes) -> None:
    made = HTMLResponse(page, headers={"content-language": lang, "vary": "accept-language"})
    sent = _html(page, lang, True)
    assert sent.raw_headers == made.raw_headers
    assert sent.body == made.body
    assert sent.status_code == made.status_code
    assert _html(page, lang, True).raw_headers is not sent.raw_headers  # each response its own list
    said = _html(page, lang, False)  # the query said the language: the browser's Accept-Language changed nothing
    assert said.raw_headers == HTMLResponse(page, headers={"content-language": lang}).raw_headers


@pytest.mark.parametrize("path", ["/", "/fragment/scaling", "/batch"])
def test_a_page_varies_by_accept_language_only_where_it_chose_by_it(path: str) -> None:
    from fastapi.testclient import TestClient

    from dpscale.web.app import create_app

    client = TestClient(create_app())
    plain = {"accept-encoding": "identity"}  # no gzip: no Vary: Accept-Encoding either
    chosen = client.get(path, headers={**plain, "accept-language": "fr"})
    said = client.get(path, params={"lang": "fr"}, headers={**plain, "accept-language": "en"})
    unknown = client.get(path, params={"lang": "de"}, headers={**plain, "accept-language": "fr"})
    assert chosen.headers["content-language"] == said.headers["content-language"] == "fr"
    assert chosen.headers["vary"] == unknown.headers["vary"] == "accept-language"
    assert "vary" not in said.headers
