"""Measurement records and network profiles: the JSON dpscale has written reads back equal, keys and order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dpscale import records
from dpscale.errors import InvalidInput, MissingInput
from dpscale.records import AllReduceTiming, Measurement, NetworkProfile, ProbedLink, StepTime

# As `dpscale measure` has written them (launcher, before records were typed): one line of a runs file.
MEASURED: dict[str, Any] = {
    "devices": 2,
    "throughput": 3123.4,
    "throughput_ci": [2950.1, 3296.7],
    "per_rank_throughput": [1561.2, 1562.0],
    "nodes": 1,
    "backend": "gloo",
    "device_type": "cpu",
    "device_name": "cpu",
    "torch": "2.5.1+cpu",
    "threads_per_rank": 1,
    "workload": "mlp",
    "params": 200192,
    "batch": 16,
    "steps": 5,
    "warmup": 1,
    "repeats": 2,
    "step_time": {"median": 0.0102, "mean": 0.0104, "p10": 0.0099, "p90": 0.0111, "cv": 0.04},
    "complete": True,
    "time": "2025-01-02T03:04:05Z",
    "efficiency": 0.93,
    "efficiency_ci": [0.81, 1.07],
}
SINGLE_RUN = {  # one repeat: no interval, and no 1-rank run to give E
    **{k: v for k, v in MEASURED.items() if k not in ("efficiency", "efficiency_ci")},
    "throughput_ci": [None, None],
    "repeats": 1,
}
# As `dpscale measure` writes them since it counts the CPUs it may use: cpus_usable after threads_per_rank.
_AT = list(MEASURED).index("threads_per_rank") + 1
PINNED = dict([*list(MEASURED.items())[:_AT], ("cpus_usable", 2), *list(MEASURED.items())[_AT:]])
# As a Meter has written them: its own keys last, a null backend outside a process group.
METERED: dict[str, Any] = {
    "devices": 1,
    "throughput": 812.5,
    "per_rank_throughput": [812.5],
    "backend": None,
    "device_type": "cpu",
    "torch": "2.5.1+cpu",
    "batch": 4,
    "steps": 3,
    "warmup": 1,
    "step_time": {"median": 0.005, "mean": 0.0049, "p10": 0.0047, "p90": 0.0051, "cv": 0.03},
    "source": "meter",
    "complete": True,
    "time": "2025-01-02T03:04:05Z",
    "run": "solo",
}
NEVER_STEPPED = {**METERED, "throughput": 0.0, "per_rank_throughput": [0.0], "steps": 0, "step_time": None}
NEVER_STEPPED["complete"] = False
OWN_MEANINGS = {**METERED, "params": "25.6M", "workload": 3, "nodes": None, "complete": True}


@pytest.mark.parametrize("written", [MEASURED, SINGLE_RUN, PINNED, METERED, NEVER_STEPPED, OWN_MEANINGS])
def test_a_record_dpscale_wrote_reads_back_equal(written: dict[str, Any]) -> None:
    line = json.dumps(written, allow_nan=False)
    record = Measurement.from_dict(json.loads(line))
    assert record.to_dict() == written
    assert json.dumps(record.to_dict(), allow_nan=False) == line  # the same keys, in the same order


def test_a_meters_own_key_that_dpscale_knows_is_read_into_its_field() -> None:
    written = {**METERED, "workload": "linear"}  # Meter(out, batch=4, workload="linear")
    record = Measurement.from_dict(written)
    assert record.workload == "linear"
    assert record.to_dict() == written  # the same keys and values; workload where dpscale writes it


def test_a_record_is_typed() -> None:
    record = Measurement.from_dict(MEASURED)
    assert record.step_time == StepTime(0.0102, 0.0104, 0.0099, 0.0111, 0.04)
    assert record.throughput_ci == (2950.1, 3296.7)
    assert record.per_rank_throughput == (1561.2, 1562.0)
    assert record.extra == {}
    metered = Measurement.from_dict(OWN_MEANINGS)
    assert (metered.params, metered.workload, metered.nodes) == (None, None, None)  # not as dpscale writes them
    assert metered.extra == {"run": "solo", "params": "25.6M", "workload": 3, "nodes": None}


def test_the_cpus_a_measurement_could_use_are_typed_and_optional() -> None:
    assert Measurement.from_dict(PINNED).cpus_usable == 2
    assert Measurement.from_dict(PINNED).extra == {}
    assert Measurement.from_dict(MEASURED).cpus_usable is None  # a record written before it was counted
    assert "cpus_usable" not in Measurement.from_dict(MEASURED).to_dict()  # nor written where unknown
    # Another tool's meaning for the key is kept as it was, not taken for a count.
    assert Measurement.from_dict({**PINNED, "cpus_usable": "0-3"}).extra == {"cpus_usable": "0-3"}


def test_a_hand_written_line_is_a_record_too() -> None:
    record = Measurement.from_dict({"devices": 4, "throughput": 100})
    assert (record.devices, record.throughput, record.complete) == (4, 100, True)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"throughput": 1.0}, "devices"),
        ({"devices": 1}, "throughput"),
        ({"devices": 0, "throughput": 1.0}, "devices"),
        ({"devices": True, "throughput": 1.0}, "devices"),
        ({"devices": 1, "throughput": 0.0}, "throughput"),
        ({"devices": 1, "throughput": "fast", "complete": False}, "throughput"),
    ],
)
def test_a_record_without_its_size_or_throughput_is_refused(data: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        Measurement.from_dict(data)
    assert caught.value.field == field


def test_records_are_appended_one_line_each(tmp_path: Path) -> None:
    out = tmp_path / "new" / "runs.jsonl"
    records.append(out, Measurement.from_dict(MEASURED))
    records.append(out, Measurement.from_dict(METERED))
    assert [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] == [MEASURED, METERED]


# As `dpscale probe` has written them.
PROFILE: dict[str, Any] = {
    "world_size": 2,
    "nodes": 1,
    "devices_per_node": 2,
    "backend": "gloo",
    "device_type": "cpu",
    "torch": "2.5.1+cpu",
    "intra": {"bandwidth": 1.84e9, "latency": 0.0014, "efficiency": 1.0},
    "inter": None,
    "sizes": [
        {"bytes": 8, "seconds": 0.0028, "algbw": 2857.1, "busbw": 2857.1},
        {"bytes": 32, "seconds": 0.0029, "algbw": 11034.4, "busbw": 11034.4},
    ],
    "time": "2025-01-02T03:04:05Z",
}


def test_a_profile_dpscale_wrote_reads_back_equal() -> None:
    line = json.dumps(PROFILE, indent=1, allow_nan=False)
    profile = NetworkProfile.from_dict(json.loads(line))
    assert json.dumps(profile.to_dict(), indent=1, allow_nan=False) == line
    assert profile.intra == ProbedLink(1.84e9, 0.0014, 1.0)
    assert profile.sizes[0] == AllReduceTiming(8, 0.0028, 2857.1, 2857.1)
    across = {**PROFILE, "intra": None, "inter": PROFILE["intra"], "nodes": 2, "devices_per_node": 1}
    assert NetworkProfile.from_dict(across).to_dict() == across


@pytest.mark.parametrize(
    ("data", "error", "field"),
    [
        ({k: v for k, v in PROFILE.items() if k != "torch"}, MissingInput, "torch"),
        ({**PROFILE, "world_size": "2"}, InvalidInput, "world_size"),
        ({**PROFILE, "sizes": {}}, InvalidInput, "sizes"),
        ({**PROFILE, "intra": {"bandwidth": "fast", "latency": 1e-6}}, InvalidInput, "bandwidth"),
        ({**PROFILE, "sizes": [{"bytes": 8.5, "seconds": 1, "algbw": 1, "busbw": 1}]}, InvalidInput, "bytes"),
    ],
)
def test_a_profile_names_what_is_missing_or_wrong(data: dict[str, Any], error: type[Exception], field: str) -> None:
    with pytest.raises(error) as caught:
        NetworkProfile.from_dict(data)
    assert isinstance(caught.value, InvalidInput)
    assert caught.value.field == field


def test_a_probed_link_reads_as_from_profile_reads_it() -> None:
    assert ProbedLink.from_dict({"bandwidth": 1e9, "latency": 0}) == ProbedLink(1e9, 0.0, 1.0)  # efficiency: 1
    for entry, field in (({"latency": 1e-6}, "bandwidth"), ("fast", "bandwidth"), ({"bandwidth": 1e9}, "latency")):
        with pytest.raises(MissingInput) as caught:
            ProbedLink.from_dict(entry)
        assert caught.value.field == field
    with pytest.raises(InvalidInput, match="JSON type number"):
        ProbedLink.from_dict({"bandwidth": 1e9, "latency": 1e-6, "efficiency": True})


def test_the_terminal_tables_print_records_and_profiles_as_read(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from dpscale.calculators.measure import present_measurements, present_probe
    from dpscale.cli.render import print_shown

    monkeypatch.setenv("COLUMNS", "200")
    records = [Measurement.from_dict(r) for r in (MEASURED, SINGLE_RUN, NEVER_STEPPED)]  # as the command reads them
    print_shown(present_measurements(records, "runs.jsonl", "en"), "en")
    printed = capsys.readouterr().out
    assert "Measured (records added to runs.jsonl)" in printed
    assert "2,950.1 – 3,296.7" in printed
    assert "93%   81% – 107%" in printed
    assert "— – —" in printed  # one run: no interval
    print_shown(present_probe(NetworkProfile.from_dict(PROFILE), "network.json", "en"), "en")
    printed = capsys.readouterr().out
    assert "All-reduce over 2 ranks" in printed
    assert "latency α = 1.4 ms, bandwidth 1/β = 1.84 GB/s; profile written to network.json" in printed
