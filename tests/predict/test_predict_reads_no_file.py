"""predict's build reads no file (issue 26): the command line's files are read where their text is.

``--from-trace``, ``--network`` and ``--jitter-from`` name files; their kinds read them as the edge
reads every input (:func:`dpscale.reading.read_input`), into the run, the profile and the variation
they hold, and :func:`dpscale.predict.definition.build` is given those. Here every way of opening a
file raises while build runs: it still makes the request a path read by build itself made.
"""

from __future__ import annotations

import builtins
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from dpscale.errors import InvalidInput
from dpscale.explain import Explanation
from dpscale.nccltests import import_logs, read_log
from dpscale.predict.definition import PREDICT
from dpscale.predict.presets import Profile
from dpscale.reading import read_input
from dpscale.records import write_profile
from tests.predict.test_traced import slow_rank_traces

DATA = Path(__file__).parents[1] / "data" / "nccl"
JOB = {"devices": [2, 16, 64], "batch": 32.0, "params": 25.6e6}


class ReadAFile(AssertionError):
    """A file opened while build ran (not an OSError: nothing turns it into an input's error)."""


@contextmanager
def no_file_opened(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every way dpscale opens or lists a file raises :class:`ReadAFile` within the block."""

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise ReadAFile(args)

    with monkeypatch.context() as patched:
        patched.setattr(builtins, "open", refused)
        patched.setattr(os, "open", refused)  # dpscale._files opens every file it reads with it
        patched.setattr(os, "scandir", refused)
        patched.setattr(os, "listdir", refused)
        for name in ("open", "read_text", "read_bytes", "iterdir"):
            patched.setattr(Path, name, refused)
        yield


def _traces(folder: Path) -> tuple[dict[str, Any], Path]:
    (folder / "traces").mkdir()
    return {"intra_bandwidth": 50e9, "inter": "ib-hdr"}, slow_rank_traces(folder / "traces")


def _profile(folder: Path) -> tuple[dict[str, Any], Path]:
    imported = import_logs([read_log(DATA / "all_reduce_1node.txt"), read_log(DATA / "reduce_scatter_1node.txt")])
    path = folder / "network.json"
    write_profile(path, imported.profile)
    return {"per_device_throughput": 100.0, "sharding": "zero2"}, path


def _records(folder: Path) -> tuple[dict[str, Any], Path]:
    path = folder / "runs.jsonl"
    cvs = ((1, 0.04), (8, 0.03))
    step = {"median": 0.064, "mean": 0.065, "p10": 0.06, "p90": 0.07}
    lines = (json.dumps({"devices": n, "throughput": 500.0 * n, "step_time": {**step, "cv": cv}}) for n, cv in cvs)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"per_device_throughput": 100.0, "intra": "nvlink3"}, path


FILES = {"from_trace": (_traces, Explanation), "network": (_profile, Profile), "jitter_from": (_records, float)}
by_file = pytest.mark.parametrize("name", sorted(FILES))


@by_file
def test_build_reads_no_file_and_makes_what_a_path_makes(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write, typed = FILES[name]
    values, path = write(tmp_path)
    item = PREDICT.get(name)
    assert item is not None
    read = read_input(item, str(path), "en")  # the edge's reading: the kind reads the file
    assert isinstance(read, typed)
    from_path = PREDICT.build({**JOB, **values, name: str(path)})  # a library caller's path: read by build
    PREDICT.build({**JOB, **values, name: read}).predict()  # what build and predict import, imported
    with no_file_opened(monkeypatch):
        built = PREDICT.build({**JOB, **values, name: read})
        predicted = built.predict()
        with pytest.raises(ReadAFile):  # the test would see build read the file
            PREDICT.build({**JOB, **values, name: str(path)})
    assert built == from_path
    assert predicted.to_dict() == from_path.predict().to_dict()


def test_what_the_files_hold_is_what_build_takes(tmp_path: Path) -> None:
    _, traces = _traces(tmp_path)
    _, profile = _profile(tmp_path)
    _, records = _records(tmp_path)
    read = {
        name: read_input(item, str(path), "en")
        for name, path in (("from_trace", traces), ("network", profile), ("jitter_from", records))
        if (item := PREDICT.get(name)) is not None
    }
    assert read["jitter_from"] == 0.04  # the one-rank record's variation
    request = PREDICT.build({**JOB, "intra": "nvlink3", **read})
    assert request.traced is not None
    assert request.traced.tier == "intra"
    assert request.jitter_known
    assert request.cluster.devices_per_node == 8  # the profile's


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_file_that_cannot_be_read_is_named_as_its_input_where_it_is_read(name: str, tmp_path: Path) -> None:
    item = PREDICT.get(name)
    assert item is not None
    missing = str(tmp_path / "missing.json")
    with pytest.raises(InvalidInput) as caught:
        read_input(item, missing, "en")
    assert caught.value.field == name
    assert caught.value.value == missing
    with pytest.raises(InvalidInput) as built:  # a library caller's path: the same error, from build
        PREDICT.build({**JOB, "per_device_throughput": 100.0, "intra": "nvlink3", name: missing})
    assert (built.value.field, built.value.value, str(built.value)) == (name, missing, str(caught.value))


def test_records_and_a_variation_given_both_are_refused_quoting_the_records(tmp_path: Path) -> None:
    _, records = _records(tmp_path)
    item = PREDICT.get("jitter_from")
    assert item is not None
    values = {**JOB, "per_device_throughput": 100.0, "intra": "nvlink3", "jitter": 0.05}
    with pytest.raises(InvalidInput, match="not both") as caught:
        PREDICT.build({**values, "jitter_from": str(records)})
    assert caught.value.value == str(records)
    with pytest.raises(InvalidInput, match="not both"):
        PREDICT.build({**values, "jitter_from": read_input(item, str(records), "en")})
