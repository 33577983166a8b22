"""One device's throughput given as an MFU, for a model that has never run (issue 27, item 10).

v = MFU × peak ÷ (FLOPs per token × tokens per sample): by hand, on the command line, in the API and on
the page (no JavaScript); the prediction's MFU on one device is the one given, its compute said assumed.
"""

from __future__ import annotations

import json
import re
from html import unescape
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dpscale.errors import InvalidInput, MissingInput
from dpscale.predict.definition import PREDICT
from dpscale.web.app import create_app
from tests.cli.test_cli import run
from tests.conftest import assert_close
from tests.predict.test_flops import GIVEN as FLOPS_GIVEN

# An 8B Llama-style model on H100 SXM nodes (989 TFLOP/s dense bf16): 32 layers of width 4096, 8192 tokens
# per sample, expected at 40 % MFU on one device.
GIVEN: dict[str, Any] = {
    **{k: v for k, v in FLOPS_GIVEN.items() if k != "per_device_throughput"},
    "devices": [1, 8, 64],
    "mfu": 0.4,
}
FLOPS = 6 * 8e9 + 12 * 32 * 4096 * 8192  # 60,884,901,888 FLOP per token
BY_HAND = 0.4 * 989e12 / (60_884_901_888 * 8192)  # 395.6 TFLOP/s ÷ 498.8 TFLOP per sample: 0.7932 samples/s
ARGS = ["-d", "1,8,64", "-b", "1", "-p", "8B", "--intra", "nvlink4", "--inter", "ib-ndr", "--nics", "8"]
TOKENS = ["--tokens-per-sample", "8192", "--peak-flops", "H100 SXM", "--layers", "32", "--hidden", "4096"]
PAGE = {
    "devices": "1,8,64",
    "batch": "1",
    "params": "8B",
    "intra": "nvlink4",
    "inter": "ib-ndr",
    "nics": "8",
    "tokens_per_sample": "8192",
    "peak_flops": "H100 SXM",
    "layers": "32",
    "hidden": "4096",
    "per_device_throughput": "",  # the page's example emptied: the MFU stands in its place
    "mfu": "40",
}


def predicted(**changed: Any) -> Any:
    return PREDICT.build({k: v for k, v in {**GIVEN, **changed}.items() if v is not None}).predict()


def test_the_throughput_from_the_mfu_against_a_hand_computation() -> None:
    assert_close(BY_HAND, 0.79315, rel=1e-5)
    p = predicted()
    assert p.tokens.flops == FLOPS
    assert_close(p.workload.per_device_throughput, BY_HAND, rel=1e-12)
    assert_close(float(p.actual_throughput[0]), BY_HAND, rel=1e-12)  # one device alone: E = 1
    assert_close(float(p.mfu[0]), 0.4, rel=1e-12)  # the MFU on one device is the one given
    assert float(p.mfu[2]) < 0.4  # the cluster's falls with E
    assert_close(float(p.mfu[2]), 0.4 * float(p.efficiency[2]), rel=1e-12)
    said = p.assumptions["tokens"]
    assert said["per_device_throughput_from_mfu"] == 0.4
    assert_close(said["per_device_throughput"], BY_HAND, rel=1e-12)
    assert p.source("compute") == "assumed"  # a utilization expected, not a throughput measured
    given = predicted(mfu=None, per_device_throughput=BY_HAND)  # the same v given: the same prediction
    assert given.source("compute") == "measured"
    assert given.efficiency == pytest.approx(p.efficiency, rel=1e-12)


def test_the_mfu_without_the_attention_term_uses_six_n() -> None:
    p = predicted(hidden=None)
    assert_close(p.workload.per_device_throughput, 0.4 * 989e12 / (48e9 * 8192), rel=1e-12)
    assert_close(float(p.mfu[0]), 0.4, rel=1e-12)


def test_the_levers_and_the_notes_say_the_compute_was_derived_from_the_mfu() -> None:
    from dpscale.predict.wording import mfu_line, prediction_notes

    request = PREDICT.build(GIVEN)
    assert request.from_mfu
    assert request.levers()  # ranked with the compute said assumed
    p = request.predict()
    line = mfu_line(p, "en")
    assert line is not None
    assert line.replace("\u00a0", " ").startswith(
        "One device's throughput alone, 0.7932 samples/s, is derived from an MFU of 40%: 40% × 989 TFLOP/s ÷ "
        "(60.9 GFLOP per token × 8,192 tokens per sample)."
    )
    assert line in prediction_notes(p, "en")
    assert mfu_line(predicted(mfu=None, per_device_throughput=0.8), "en") is None


def test_the_rules_across_the_mfu_and_what_it_needs() -> None:
    with pytest.raises(InvalidInput) as both:
        predicted(per_device_throughput=0.8)
    assert both.value.field == "mfu"
    assert "either the per-device throughput or an MFU, not both" in str(both.value)
    with pytest.raises(MissingInput) as no_tokens:
        predicted(tokens_per_sample=None)
    assert no_tokens.value.field == "tokens_per_sample"
    assert "which mfu needs" in str(no_tokens.value)
    with pytest.raises(MissingInput) as no_peak:
        predicted(peak_flops=None)
    assert no_peak.value.field == "peak_flops"
    assert "which the MFU needs" in str(no_peak.value)
    for bad in (0.0, -0.1, 1.01):
        with pytest.raises(InvalidInput) as out:
            predicted(mfu=bad)
        assert out.value.field == "mfu"
    assert_close(float(predicted(mfu=1.0).mfu[0]), 1.0, rel=1e-12)  # 100 % is the bound, taken
    with pytest.raises(InvalidInput) as absurd:  # a throughput past any a device is given: named by the MFU
        predicted(params=1.0, tokens_per_sample=1, hidden=None, layers=None, peak_flops="1 EFLOP/s")
    assert absurd.value.field == "mfu"
    assert "samples/s; this one gives 6.67e+16" in str(absurd.value)  # 0.4 × 10¹⁸ ÷ (6 × 1)


def test_cli_value_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "predict", *ARGS, *TOKENS, "--mfu", "40%", "--no-levers")
    assert (code, err) == (0, "")
    text = " ".join(out.replace("\u00a0", " ").split())
    assert "One device's throughput alone, 0.7932 samples/s, is derived from an MFU of 40%" in text
    code, out, err = run(capsys, "predict", *ARGS, *TOKENS, "--mfu", "0.4", "--json")
    assert (code, err) == (0, "")
    found = json.loads(out)
    first = found["predictions"][0]
    assert_close(first["actual_throughput"], BY_HAND, rel=1e-12)
    assert_close(first["mfu"], 0.4, rel=1e-12)
    assert found["assumptions"]["step_sources"]["compute"] == "assumed"
    assert found["assumptions"]["tokens"]["per_device_throughput_from_mfu"] == 0.4


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["-v", "0.8", *TOKENS, "--mfu", "40%"], "mfu: got '40%'; expected either the per-device throughput or an MFU"),
        (
            ["--mfu", "40%"],
            "tokens_per_sample: missing; expected the tokens per sample (the sequence length), which mfu",
        ),
        (["--tokens-per-sample", "8192", "--mfu", "40%"], "peak_flops: missing; expected one device's peak"),
        ([*TOKENS, "--mfu", "0"], "mfu: got '0'; expected a percentage above 0 % and at most 100 %"),
        ([*TOKENS, "--mfu", "140%"], "mfu: got '140%'; expected a percentage above 0 % and at most 100 %"),
        ([*TOKENS, "--mfu", "40"], "write 40% for a percentage, or 0.4 as a fraction"),
    ],
)
def test_cli_refusals(capsys: pytest.CaptureFixture[str], extra: list[str], said: str) -> None:
    code, out, err = run(capsys, "predict", *ARGS, *extra)
    assert code == 2
    assert out == ""
    assert said in err
    assert len(err.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def test_api_value_and_refusals(client: TestClient) -> None:
    answer = client.get("/api/v1/predict", params=GIVEN)
    assert answer.status_code == 200, answer.text[:300]
    found = answer.json()
    assert_close(found["predictions"][0]["mfu"], 0.4, rel=1e-12)
    assert_close(found["predictions"][0]["actual_throughput"], BY_HAND, rel=1e-12)
    assert found["assumptions"]["step_sources"]["compute"] == "assumed"
    for changed, field, said in [
        ({"mfu": 0}, "mfu", "greater than or equal to"),
        ({"mfu": 1.5}, "mfu", "less than or equal to 1"),
        ({"per_device_throughput": 0.8}, "mfu", "either the per-device throughput or an MFU, not both"),
        ({"peak_flops": None}, "peak_flops", "which the MFU needs"),
        ({"tokens_per_sample": None}, "tokens_per_sample", "which mfu needs"),
    ]:
        query = {k: v for k, v in {**GIVEN, **changed}.items() if v is not None}
        refused = client.get("/api/v1/predict", params=query)
        assert refused.status_code == 422, changed
        error = refused.json()["errors"][0]
        assert error["field"] == field
        assert said in error["message"]


def note(html: str) -> str:
    found = re.search(r"<li>((?:One device|Le débit d'un appareil).*?)</li>", unescape(html), re.S)
    assert found, "no note on the MFU"
    return found.group(1).replace("\u00a0", " ").replace("\u202f", " ")


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_the_page_takes_the_mfu_and_says_where_the_throughput_came_from(client: TestClient, lang: str) -> None:
    page = client.get("/predict", params={**PAGE, "lang": lang})
    assert page.status_code == 200
    html = page.text
    assert re.search(r'<input id="mfu" name="mfu" value="40"', html)
    assert re.search(r'id="mfu-error"\s+hidden', html)  # taken: no error beside it
    said = note(html)
    assert "40 %" in said if lang == "fr" else "40%" in said
    assert ("0,7932" if lang == "fr" else "0.7932") in said
    row = re.search(r'<table class="growth[^"]*" id="predictions">.*?<tbody>\s*<tr>(.*?)</tr>', html, re.S)
    assert row
    cells = [unescape(c).replace("\u00a0", " ") for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))]
    assert ("40 %" if lang == "fr" else "40%") in cells  # the MFU on one device, as given
    assert 'data-source="assumed">' in html.split('id="sources"', 1)[1].split("</tr>", 1)[0]
    example = re.search(r'id="example-tokens">(.*?)</p>', html, re.S)  # the worked example speaks tokens
    assert example
    assert ("jetons/s sur la grappe" if lang == "fr" else "tokens/s on the cluster") in unescape(example.group(1))


def test_the_page_refuses_the_mfu_beside_a_throughput(client: TestClient) -> None:
    page = client.get("/predict", params={**PAGE, "per_device_throughput": "938", "lang": "en"})
    assert page.status_code == 200
    error = re.search(r'id="mfu-error"\s*>(.*?)</p>', page.text, re.S)
    assert error
    assert "either the per-device throughput or an MFU, not both" in unescape(error.group(1))
    assert 'id="predictions"' not in page.text
