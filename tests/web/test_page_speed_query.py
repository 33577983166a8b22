"""What the pages read sooner than the libraries they stand in for reads the same."""

from __future__ import annotations

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
