"""``nccl_fit``: what a link carries of an nccl-tests log, read back to the log's own numbers (issue 27, point 2)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from dpscale.errors import InvalidInput
from dpscale.nccltests import read_texts
from dpscale.predict.definition import PREDICT
from dpscale.predict.linked import MAX_NETWORK, network_text, read_network
from dpscale.predict.network import from_log
from dpscale.reading import read_input
from dpscale.web.app import create_app

DATA = Path(__file__).parents[1] / "data" / "nccl"
LOGS = sorted(p.name for p in DATA.glob("*.*"))
NCCL_LOG = PREDICT.get("nccl_log")
# An 8B model on nodes of 8, the node's links typed (a preset): the 2-node log's network tier is fitted again to them.
JOB: dict[str, Any] = {
    "devices": [8, 16, 64, 256, 1024],
    "batch": 4.0,
    "params": 8e9,
    "per_device_throughput": 3.0,
    "intra": "nvlink3",
    "inter": "ib-hdr",
    "nics": 4,
}


def log_of(name: str) -> Any:
    assert NCCL_LOG is not None
    return read_input(NCCL_LOG, (DATA / name).read_text(encoding="utf-8"), "en")


def fit_of(name: str) -> str:
    """The ``nccl_fit`` text of the log ``name``, as the prediction states it."""
    described = PREDICT.build({**JOB, "nccl_log": log_of(name)}).network
    assert described is not None
    return str(described["fit"])


def efficiency(values: dict[str, Any]) -> np.ndarray:
    return np.asarray(PREDICT.build({**JOB, **values}).predict().efficiency)


@pytest.mark.parametrize("name", LOGS)
def test_the_text_reads_back_to_the_network_the_log_gives(name: str) -> None:
    logged = from_log(log_of(name))
    text = network_text(logged)
    assert text == fit_of(name)  # what the prediction states of the log carries it
    assert text.startswith("n1_c")
    assert len(text) < 500
    assert all(c.isalnum() or c in "._-" for c in text)  # nothing a URL escapes
    carried = read_network(text)
    assert carried.devices_per_node == logged.devices_per_node
    for mine, theirs in ((carried.intra, logged.intra), (carried.inter, logged.inter)):
        assert (mine is None) == (theirs is None)
        if mine is not None and theirs is not None:
            assert mine.in_network == theirs.in_network
            assert mine.bandwidth == pytest.approx(theirs.bandwidth, rel=1e-5)  # times to the ns
            assert mine.latency == pytest.approx(theirs.latency, rel=1e-5)
    assert [c[0] for c in carried.collectives] == [c[0] for c in logged.collectives]
    assert np.allclose(carried.runs[0].sizes, logged.runs[0].sizes, rtol=0, atol=0.51e-9)  # to the ns
    assert network_text(carried) == text  # read and written again: the same text


@pytest.mark.parametrize("name", LOGS)
def test_a_prediction_from_the_text_is_the_logs(name: str) -> None:
    """The run travels, not only α and β: given back at its shape and fitted again to the typed node links."""
    from_the_log = PREDICT.build({**JOB, "nccl_log": log_of(name)}).predict()
    text = from_the_log.assumptions["network_profile"]["fit"]
    from_the_text = PREDICT.build({**JOB, "nccl_fit": text}).predict()
    assert from_the_text.efficiency == pytest.approx(from_the_log.efficiency, rel=1e-6)
    assert from_the_text.step_time == pytest.approx(from_the_log.step_time, rel=1e-6)
    said = from_the_text.assumptions["network_profile"]
    assert said["carried"] is True
    assert "carried" not in from_the_log.assumptions["network_profile"]
    for key in ("collective", "ranks", "hosts", "busbw"):
        assert said[key] == from_the_log.assumptions["network_profile"][key]


def test_the_text_changes_the_prediction_and_a_log_given_too_wins() -> None:
    two_nodes = log_of("all_reduce_2nodes.txt")
    one_node = fit_of("all_reduce_1node.txt")
    plain = efficiency({})
    logged = efficiency({"nccl_log": two_nodes})
    assert not np.allclose(plain, logged)
    assert np.allclose(efficiency({"nccl_log": two_nodes, "nccl_fit": one_node}), logged, rtol=1e-12)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "n2_car_r16_h2_d8_g8_u3e11_s8.100",  # another version
        "n1_car_r16_h2_d8_g8_u3e11",  # no run
        "n1_cxx_r16_h2_d8_g8_u3e11_s8.100",  # no such collective
        "n1_car_r16_h2_d8_g8_u3e11_s8.100.16",  # a size without its time
        "n1_car_r16_h2_d8_g8_u3e11_s16.100.8.100",  # sizes not increasing
        "n1_car_r16_h2_d8_g8_u-3e11_s8.100",  # a negative bus bandwidth
        "n1_car_r16_h2_d8_u3e11_s8.100",  # no devices per node
        "n1_car_r16_r16_h2_d8_g8_u3e11_s8.100",  # a field twice
        "n1_car_r2_h4_d8_g8_u3e11_s8.100",  # more hosts than ranks
        "n1_car_r16_h2_d8_g8_u3e11_s8.100%20",
        "n1_car_r16_h2_d8_g8_u3e11_s" + ".".join(["8.100"] * MAX_NETWORK),  # too long
    ],
)
def test_a_bad_text_is_refused_naming_the_input_and_what_is_accepted(text: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        read_network(text)
    assert caught.value.field == "nccl_fit"
    message = str(caught.value)
    assert "the text /predict's link gives for an nccl-tests log" in message
    assert len(message) < 600  # the text cut short


def test_the_api_takes_it_in_a_query_and_refuses_a_bad_one_by_name() -> None:
    client = TestClient(create_app())
    text = fit_of("all_reduce_2nodes.txt")
    body = dict(JOB.items())
    answer = client.get("/api/v1/predict", params={**body, "nccl_fit": text})
    assert answer.status_code == 200, answer.text[:300]
    logged = client.post("/api/v1/predict", json={**body, "nccl_log": (DATA / "all_reduce_2nodes.txt").read_text()})
    found = [row["efficiency"] for row in answer.json()["predictions"]]
    assert found == pytest.approx([row["efficiency"] for row in logged.json()["predictions"]], rel=1e-6)
    assert answer.json()["assumptions"]["network_profile"]["fit"] == text
    bad = client.get("/api/v1/predict", params={**body, "nccl_fit": "n1_nope"})
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["field"] == "nccl_fit"
    too_long = client.get("/api/v1/predict", params={**body, "nccl_fit": "n1_" + "s" * MAX_NETWORK})
    assert too_long.status_code == 422


# Several runs (issue 27, item 2): logs pasted one after another, a file of several runs, -J lines put together.
VALIDATION = DATA / "validation"  # real logs, as published (their INDEX.csv says where from)
ONE, TWO, SCATTER = ((DATA / n).read_text(encoding="utf-8") for n in LOGS[1:])  # 1-node, 2-node, reduce_scatter


def runs_of_text(text: str) -> tuple[Any, ...]:
    """Every run of a pasted text, as predict takes them."""
    return read_texts(text, "nccl_log", most=2**20)


def both(logs: Any, **extra: Any) -> tuple[Any, Any]:
    """The prediction from the logs, and the one from the nccl_fit it states, alone."""
    from_the_logs = PREDICT.build({**JOB, **extra, "nccl_log": logs}).predict()
    text = from_the_logs.assumptions["network_profile"]["fit"]
    return from_the_logs, PREDICT.build({**JOB, **extra, "nccl_fit": text}).predict()


def shapes(logs: Any) -> list[dict[str, Any]]:
    return [{"collective": log.collective, "ranks": log.ranks, "hosts": log.hosts} for log in logs]


@pytest.mark.parametrize(
    "names",
    [
        ("all_reduce_1node.txt", "all_reduce_2nodes.txt"),
        ("all_reduce_2nodes.txt", "all_reduce_1node.txt", "reduce_scatter_1node.txt"),
        ("validation/015_azure-a100-1node-allgather.log", "validation/010_oci-a100-2node-roce.log"),
        ("validation/006_h100-node005-1node-8gpu.log", "validation/019_gcp-h200-2node-allgather-prefixed.log"),
        (
            "validation/006_h100-node005-1node-8gpu.log",
            "validation/010_oci-a100-2node-roce.log",
            "validation/013_v100-sxm2-1node-8gpu-oldfmt.log",
            "validation/015_azure-a100-1node-allgather.log",
            "validation/019_gcp-h200-2node-allgather-prefixed.log",
        ),
    ],
)
@pytest.mark.parametrize("sharding", ["ddp", "zero3"])
def test_logs_pasted_together_travel_whole_and_give_the_same_numbers(names: tuple[str, ...], sharding: str) -> None:
    logs = runs_of_text("\n".join((DATA / name).read_text(encoding="utf-8") for name in names))
    assert len(logs) == len(names)
    from_the_logs, from_the_text = both(logs, sharding=sharding)
    said = from_the_logs.assumptions["network_profile"]
    text = said["fit"]
    assert len(text) <= MAX_NETWORK
    assert all(c.isalnum() or c in "._-" for c in text)
    assert text.count("_c") == len(names)  # every run carried
    assert said["runs"] == shapes(logs)
    assert "left_out" not in said
    assert "thinned" not in said
    assert from_the_text.efficiency == pytest.approx(from_the_logs.efficiency, rel=1e-9)
    assert from_the_text.step_time == pytest.approx(from_the_logs.step_time, rel=1e-9)
    carried = from_the_text.assumptions["network_profile"]
    assert carried["runs"] == said["runs"]
    for key in ("collective", "ranks", "hosts", "busbw"):  # said by the main run, the widest all-reduce
        assert carried[key] == said[key]
    assert network_text(read_network(text)) == text


def test_the_runs_are_fitted_together_as_probe_imports_them() -> None:
    from dpscale.nccltests import import_logs

    logs = runs_of_text(ONE + "\n" + TWO)
    found = from_log(logs)
    profile = import_logs(list(logs)).profile
    assert found.runs == profile.runs
    assert found.inter is not None
    assert profile.inter is not None
    assert found.inter.bandwidth == pytest.approx(profile.inter.bandwidth, rel=1e-12)
    assert found.described is not None
    assert (found.described["ranks"], found.described["hosts"]) == (16, 2)  # the widest all-reduce speaks
    together = PREDICT.build({**JOB, "nccl_log": logs}).predict()
    alone = PREDICT.build({**JOB, "nccl_log": logs[1]}).predict()
    assert not np.allclose(alone.efficiency, together.efficiency, rtol=1e-3)  # the node's run counts too
    assert len(together.cluster.measured) == 2  # each run given back at its own shape


def test_a_file_of_several_runs_and_json_lines_travel_whole() -> None:
    from tests.synthetic_nccl import alpha_beta, text

    runs = [("all_reduce", 8, 8), ("all_reduce", 16, 8), ("all_gather", 16, 8), ("reduce_scatter", 32, 8)]
    logged = "".join(text(c, n, g, alpha_beta(20e-6 + n * 1e-7, 150e9 if n == 8 else 40e9, c, n)) for c, n, g in runs)
    logs = runs_of_text(logged)
    assert shapes(logs) == [{"collective": c, "ranks": n, "hosts": n // g} for c, n, g in runs]
    from_the_logs, from_the_text = both(logs)
    assert from_the_text.efficiency == pytest.approx(from_the_logs.efficiency, rel=1e-9)
    gathered = json.loads((DATA / "all_gather_2nodes.json").read_text(encoding="utf-8"))
    lines = json.dumps(gathered) + "\n" + json.dumps(gathered | {"start_time": "a second run"})
    twice = runs_of_text(lines)
    assert len(twice) == 2
    from_the_logs, from_the_text = both(twice)
    assert from_the_logs.assumptions["network_profile"]["fit"].count("_c") == 2
    assert from_the_text.efficiency == pytest.approx(from_the_logs.efficiency, rel=1e-6)  # -J's times, to the ns


def synthetic(collective: str, ranks: int, sizes: Any = None) -> Any:
    from tests.synthetic_nccl import SIZES, alpha_beta, text

    timing = alpha_beta(15e-6 + ranks * 2e-7, 180e9 if ranks <= 8 else 45e9, collective, ranks)
    return runs_of_text(text(collective, ranks, 8, timing, sizes or SIZES))[0]


def test_more_runs_than_a_link_holds_keep_a_bounded_subset_and_say_which() -> None:
    from dpscale.predict.linked import carriable
    from dpscale.predict.wording import prediction_notes

    logs = tuple(synthetic(c, n) for n in (8, 16, 32, 64) for c in ("all_reduce", "all_gather", "reduce_scatter"))
    kept, left = carriable(logs)
    assert left
    assert len(kept) + len(left) == len(logs)
    assert max(logs[3:], key=lambda log: log.ranks) not in left  # the main run, the widest all-reduce, kept
    assert logs[9] in kept
    from_the_logs, from_the_text = both(logs)
    said = from_the_logs.assumptions["network_profile"]
    assert len(said["fit"]) <= MAX_NETWORK
    assert said["runs"] == shapes(kept)
    assert said["left_out"] == shapes(left)
    assert from_the_text.efficiency == pytest.approx(from_the_logs.efficiency, rel=1e-9)  # the link's numbers
    assert PREDICT.build({**JOB, "nccl_log": kept}).predict().efficiency == pytest.approx(from_the_logs.efficiency)
    notes = " ".join(prediction_notes(from_the_logs, "en"))
    assert f"The network is fitted to {len(kept)} nccl-tests runs together: all_reduce, 8 ranks on 1 host;" in notes
    assert "Left out, so that the page's link can carry all that the result rests on: " in notes
    left_said = "; ".join(f"{log.collective}, {log.ranks} ranks on {log.hosts} hosts" for log in left)
    assert f"rests on: {left_said}. Give fewer runs" in notes


@pytest.mark.parametrize(
    ("sizes", "kept"),
    [
        (tuple(2**k for k in range(48)), 24),  # 1 B to 128 TiB, doubling: every second, still a series
        (tuple(2**20 * (k + 1) for k in range(120)), 40),  # 1 MiB to 120 MiB by 1 MiB: every third
    ],
)
def test_a_run_of_many_sizes_is_thinned_within_the_bound_and_says_so(sizes: tuple[int, ...], kept: int) -> None:
    from dpscale.predict.linked import MAX_SIZES
    from dpscale.predict.wording import prediction_notes

    logs = (synthetic("all_reduce", 16, sizes),)
    from_the_logs, from_the_text = both(logs)
    said = from_the_logs.assumptions["network_profile"]
    assert kept <= MAX_SIZES
    assert said["thinned"] == [{"collective": "all_reduce", "ranks": 16, "hosts": 2, "sizes": kept, "of": len(sizes)}]
    assert len(said["fit"]) <= MAX_NETWORK
    assert from_the_text.efficiency == pytest.approx(from_the_logs.efficiency, rel=1e-9)
    assert f"all_reduce, 16 ranks on 2 hosts: {kept} of its {len(sizes)} sizes used" in " ".join(
        prediction_notes(from_the_logs, "en")
    )
    largest = from_the_logs.cluster.measured[0].log_sizes[-1]
    assert largest == pytest.approx(np.log(sizes[-1]))  # the largest size always kept


def test_a_text_written_before_several_runs_reads_as_it_did() -> None:
    """A one-run text with its sizes written out (s8.26765.16.26955…): as the first links were made."""
    text = fit_of("all_reduce_2nodes.txt")
    head, series = text.rsplit("_q", 1)
    first, factor, *times = re.split(r"[x.]", series)
    sizes = [int(first) * int(factor) ** k for k in range(len(times))]
    written = head + "_s" + ".".join(f"{size}.{time}" for size, time in zip(sizes, times, strict=True))
    old = PREDICT.build({**JOB, "nccl_fit": written}).predict()
    new = PREDICT.build({**JOB, "nccl_fit": text}).predict()
    assert old.efficiency == pytest.approx(new.efficiency, rel=1e-12)


@pytest.mark.parametrize(
    "text",
    [
        "n1_car_r16_h2_d8_g8_u3e11_s8.100_cag_r16_h2_d8",  # a second run without sizes
        "n1_r16_car_h2_d8_g8_u3e11_s8.100",  # a run's count before its collective
        "n1_car_r16_h2_d8_g8_u3e11_q8x1.100.200.300",  # a factor of 1: sizes that do not grow
        "n1_car_r16_h2_d8_g8_u3e11_q8x1000.100.200.300.400.500.600",  # past 10^15 bytes
        "n1_car_r16_h2_d8_g8_u3e11_s8.100.9999999999999999.200",  # a size past 10^15 bytes
        "n1_car_r16_h2_d8_g8_u3e11_s8.100_q8x2.1.2.3",  # two series in one run
        "n1_car_r16_h2_d8_g8_g8_u3e11_s8.100",  # the devices per node twice
    ],
)
def test_a_bad_text_of_several_runs_is_refused(text: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        read_network(text)
    assert caught.value.field == "nccl_fit"
    assert "the text /predict's link gives for an nccl-tests log" in str(caught.value)


def test_a_pasted_text_gives_predict_every_run_it_holds() -> None:
    assert NCCL_LOG is not None
    runs = read_input(NCCL_LOG, ONE + "\n" + TWO, "en")
    assert isinstance(runs, tuple)
    assert len(runs) == 2


PAGE_JOB = {
    "devices": "8,16,64,256,1024",
    "batch": "4",
    "params": "8B",
    "per_device_throughput": "3",
    "intra": "nvlink3",
    "inter": "ib-hdr",
    "nics": "4",
}


def predictions(html: str) -> str:
    return html.split('id="predictions"', 1)[1].split("</table>", 1)[0]


def test_the_api_takes_every_run_pasted_and_its_nccl_fit_gives_the_same_numbers() -> None:
    client = TestClient(create_app())
    pasted = ONE + "\n" + TWO + "\n" + SCATTER
    logged = client.post("/api/v1/predict", json={**JOB, "nccl_log": pasted})
    assert logged.status_code == 200, logged.text[:300]
    said = logged.json()["assumptions"]["network_profile"]
    assert said["runs"] == shapes(runs_of_text(pasted))
    assert len(said["runs"]) == 3
    linked = client.get("/api/v1/predict", params={**JOB, "nccl_fit": said["fit"]})
    assert linked.status_code == 200, linked.text[:300]
    assert [row["efficiency"] for row in linked.json()["predictions"]] == pytest.approx(
        [row["efficiency"] for row in logged.json()["predictions"]], rel=1e-9
    )


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_the_page_takes_every_run_pasted_and_its_link_gives_the_same_numbers(lang: str) -> None:
    from html import unescape

    client = TestClient(create_app())
    logged = client.post(f"/predict?lang={lang}", data={**PAGE_JOB, "nccl_log": ONE + "\n" + TWO})
    assert logged.status_code == 200
    fit = re.search(r'<input id="nccl_fit" name="nccl_fit" value="([^"]*)"', logged.text)
    assert fit
    assert unescape(fit.group(1)).count("_c") == 2
    notes = unescape(logged.text.split('id="prediction-notes"', 1)[1].split("</ul>", 1)[0])
    if lang == "en":
        assert (
            "The network is fitted to 2 nccl-tests runs together: all_reduce, 8 ranks on 1 host; all_reduce, 16"
            in notes
        )
    linked = client.get("/predict", params={**PAGE_JOB, "lang": lang, "nccl_fit": unescape(fit.group(1))})
    assert predictions(linked.text) == predictions(logged.text)
    alone = client.post(f"/predict?lang={lang}", data={**PAGE_JOB, "nccl_log": TWO})
    assert predictions(alone.text) != predictions(logged.text)  # the node's run counts
