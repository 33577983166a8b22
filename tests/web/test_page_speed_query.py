"""What the pages read sooner than the libraries they stand in for reads the same."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote_plus, urlencode

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.datastructures import QueryParams

from dpscale.web.export import query_string, query_values

_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@given(st.binary(max_size=60))
def test_a_query_is_read_as_starlette_reads_it(raw: bytes) -> None:
    assert query_values(raw) == dict(QueryParams(raw))


@given(st.lists(st.sampled_from(["a", "=", "&", "+", "%", "%2", "%25", "%C3%A9", "é", " ", "x=y", "&&"]), max_size=12))
def test_a_query_of_separators_and_escapes_is_read_as_starlette_reads_it(pieces: list[str]) -> None:
    raw = "".join(pieces).encode()
    assert query_values(raw) == dict(QueryParams(raw))


@given(st.dictionaries(_TEXT, _TEXT, max_size=5))
def test_a_written_query_reads_back(values: dict[str, str]) -> None:
    assert query_values(query_string(values).encode()) == values


@given(st.lists(st.tuples(_TEXT, _TEXT), max_size=5))
def test_a_query_is_written_as_urlencode_writes_it(pairs: list[tuple[str, str]]) -> None:
    assert query_string(pairs) == urlencode(pairs)
    assert query_string(dict(pairs)) == urlencode(dict(pairs))


@pytest.mark.parametrize(
    "text", ["échantillons/s", "90\u00a0%", "90%", "2 000", "a+b&c=d", "~_.-", "", "\U0001f600", "\x00\x7f\xff"]
)
def test_a_value_is_quoted_as_quote_plus_quotes_it(text: str) -> None:
    assert query_string({text: text}) == f"{quote_plus(text)}={quote_plus(text)}"


@pytest.mark.parametrize(
    "scope",
    [
        {"scheme": "http", "server": ("127.0.0.1", 8000), "headers": [(b"host", b"127.0.0.1:8000")]},
        {"scheme": "https", "server": ("10.0.0.1", 443), "headers": [(b"host", b"dpscale.example")]},
        {"scheme": "http", "server": ("::1", 80), "headers": []},
        {"scheme": "http", "server": ["127.0.0.1", 8080], "headers": [(b"accept", b"*/*")]},
        {"scheme": "http", "server": None, "headers": []},
        {"scheme": "http", "server": ("127.0.0.1", 80), "headers": [(b"host", b"bad host:x")], "root_path": "/app"},
        {
            "scheme": "https",
            "server": ("h", 1),
            "headers": [(b"host", b"h:1")],
            "root_path": "/a/",
            "app_root_path": "/b",
        },
    ],
)
def test_a_base_url_is_starlettes(scope: dict[str, Any]) -> None:
    from starlette.requests import Request

    from dpscale.web.pages import _base_url

    request = Request({"type": "http", "path": "/x", "query_string": b"a=1", **scope})
    assert _base_url(request) == str(Request(dict(request.scope)).base_url)
    assert _base_url(request) == _base_url(request)  # and again, as kept
