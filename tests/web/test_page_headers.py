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
    sent = _html(page, lang)
    assert sent.raw_headers == made.raw_headers
    assert sent.body == made.body
    assert sent.status_code == made.status_code
    assert _html(page, lang).raw_headers is not sent.raw_headers  # each response its own list
