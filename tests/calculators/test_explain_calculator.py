"""explain's build reads no file: the command line's traces are read by their kind (``traces``) where
their text is, and the build is given the run they show, as predict's is (issue 26)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpscale.calculators.explain import EXPLAIN
from dpscale.errors import InvalidInput
from dpscale.explain import Explanation, explain
from dpscale.kinds import kind_of
from tests.predict.test_predict_reads_no_file import ReadAFile, no_file_opened
from tests.predict.test_traced import slow_rank_traces


def test_the_traces_are_read_before_the_build_which_opens_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    slow_rank_traces(folder)
    item = EXPLAIN.get("trace")
    assert item is not None
    run = kind_of(item).read_cli(item, [str(folder)], "en")  # as the command line reads `dpscale explain DIR`
    assert isinstance(run, Explanation)
    with no_file_opened(monkeypatch):
        built = EXPLAIN.build({"trace": run})
        with pytest.raises(ReadAFile):  # the control: a path left to the build would be opened
            EXPLAIN.build({"trace": [str(folder)]})
    assert built == run
    assert EXPLAIN.build({"trace": [str(folder)]}) == explain(folder)  # a library caller's paths, read alike


def test_a_trace_that_cannot_be_read_is_named_by_the_input_that_gave_it(tmp_path: Path) -> None:
    item = EXPLAIN.get("trace")
    assert item is not None
    missing = str(tmp_path / "nope.json")
    with pytest.raises(InvalidInput) as found:
        kind_of(item).read_cli(item, [missing], "en")
    assert found.value.field == "trace"
    with pytest.raises(InvalidInput) as renamed:
        explain(missing, field="from_trace")
    assert renamed.value.field == "from_trace"
