"""Tokens per second and MFU: the formula, a published figure, the peaks, and every edge that shows them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dpscale.errors import InvalidInput, MissingInput
from dpscale.predict.definition import PREDICT
from dpscale.predict.flops import flops_per_token, model_flops_utilization
from dpscale.predict.peaks import peaks, read_peak
from tests.cli.test_cli import run
from tests.conftest import assert_close

# An 8B Llama-style model on H100 SXM nodes: 32 layers of width 4096, 8192 tokens per sample.
GIVEN: dict[str, Any] = {
    "devices": [8, 64, 512],
    "per_device_throughput": 0.9,
    "batch": 1.0,
    "params": 8e9,
    "intra": "nvlink4",
    "inter": "ib-ndr",
    "nics": 8,
    "tokens_per_sample": 8192,
    "peak_flops": "H100 SXM",
    "layers": 32,
    "hidden": 4096,
}
ARGS = ["-d", "8,64,512", "-v", "0.9", "-b", "1", "-p", "8B", "--intra", "nvlink4", "--inter", "ib-ndr", "--nics", "8"]
TOKENS = ["--tokens-per-sample", "8192", "--peak-flops", "H100 SXM", "--layers", "32", "--hidden", "4096"]


def predicted(**changed: Any) -> Any:
    return PREDICT.build({**GIVEN, **changed}).predict()


def test_flops_per_token_is_six_n_plus_the_attention_term() -> None:
    assert flops_per_token(8e9) == 48e9
    assert flops_per_token(8e9, layers=32, width=4096, sequence=8192) == 48e9 + 12 * 32 * 4096 * 8192
    assert flops_per_token(8e9, layers=32, sequence=8192) == 48e9  # no width: no attention term


def test_mfu_of_a_prediction_against_a_hand_computation() -> None:
    p = predicted()
    flops = 6 * 8e9 + 12 * 32 * 4096 * 8192  # 60.88 GFLOP per token
    for i, n in enumerate([8, 64, 512]):
        tokens = float(p.actual_throughput[i]) * 8192
        assert_close(float(p.tokens_per_second[i]), tokens)
        assert_close(float(p.mfu[i]), tokens * flops / (n * 989e12))
    # 0.9 samples/s of 8192 tokens at 60.88 GFLOP each: 449 TFLOP/s, 45.4 % of 989 alone; E below 1 at 8
    assert_close(0.9 * 8192 * flops / 989e12, 0.4537, rel=1e-3)
    assert 0.40 < float(p.mfu[0]) < 0.4537
    low, high = p.mfu_interval
    assert (low <= p.mfu).all()
    assert (p.mfu <= high).all()


# PaLM 540B (Chowdhery et al. 2022, "PaLM: Scaling Language Modeling with Pathways", section 4 and
# appendix B): 238.3K tokens/s on 6144 TPU v4 chips of 275 TFLOP/s; 118 layers, 48 heads of 256,
# sequences of 2048. MFU 46.2 % with the attention's FLOPs, 45.7 % from 6N alone. Tolerance 0.1 point:
# the paper rounds to one decimal.
PALM = {"params": 540.35e9, "layers": 118, "width": 48 * 256, "sequence": 2048}


@pytest.mark.parametrize(("attention", "published"), [(True, 0.462), (False, 0.457)])
def test_mfu_against_palm_540b(attention: bool, published: float) -> None:
    shape = PALM if attention else {"params": PALM["params"]}
    flops = flops_per_token(**shape)  # type: ignore[arg-type]
    mfu = model_flops_utilization(238.3e3, flops, 6144, read_peak("TPU v4").flops)
    assert abs(mfu - published) <= 0.001


def test_peaks_read_from_figures_and_devices() -> None:
    assert read_peak("989TFLOP/s").flops == 989e12
    assert read_peak("989 TFLOPS").flops == 989e12
    assert read_peak("9.89e14").flops == 989e12
    assert read_peak("1,3 PFLOP/s").flops == 1.3e15  # a French decimal comma
    assert read_peak("H100 SXM") == read_peak("h100-sxm") == read_peak("h100sxm")
    assert read_peak("MI300X").flops == 1307.4e12
    assert read_peak("B200").flops == 2.25e15
    for name, entry in peaks().items():  # every device states a dense figure and where it is printed
        assert 1e13 < entry["flops"] < 1e16, name
        assert entry["source"], name
        assert entry["description"], name


@pytest.mark.parametrize("text", ["abc", "1,979 TFLOPS", "989TB/s", "5", "1e30", "x" * 500])
def test_peaks_refused_say_what_is_accepted(text: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        read_peak(text)
    assert caught.value.field == "peak_flops"
    assert "TFLOP/s" in str(caught.value)
    assert len(str(caught.value)) < 400  # the value cut short


def test_rules_across_the_token_inputs() -> None:
    with pytest.raises(MissingInput) as missing:
        predicted(tokens_per_sample=None)
    assert missing.value.field == "tokens_per_sample"
    with pytest.raises(MissingInput) as no_layers:
        predicted(layers=None)
    assert no_layers.value.field == "layers"
    with pytest.raises(InvalidInput) as both:
        predicted(flops_per_token=50e9)
    assert both.value.field == "hidden"
    given = predicted(flops_per_token=50e9, hidden=None)
    assert given.tokens.flops == 50e9
    assert given.assumptions["tokens"]["flops_per_token_formula"] == "given"  # noqa: S105
    alone = predicted(peak_flops=None, hidden=None)
    assert alone.mfu is None
    assert alone.tokens_per_second is not None
    assert predicted(tokens_per_sample=None, peak_flops=None, hidden=None).tokens_per_second is None


def test_mfu_above_one_is_warned() -> None:
    assert any("MFU is above 100" in str(w) for w in predicted(per_device_throughput=3.0).warnings)
    assert not any("MFU" in str(w) for w in predicted().warnings)


def test_cli_table_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "predict", *ARGS, *TOKENS, "--no-levers")
    assert (code, err) == (0, "")
    assert "Tokens/s" in out
    assert "MFU" in out
    assert "MFU: tokens/s × 60.9 GFLOP per token ÷ (devices × 989 TFLOP/s)." in out.replace("\u00a0", " ")
    code, out, err = run(capsys, "predict", *ARGS, "--no-levers")
    assert "MFU" not in out
    assert "Tokens/s" not in out
    code, out, err = run(capsys, "predict", *ARGS, *TOKENS, "--json")
    found = json.loads(out)
    row = found["predictions"][0]
    assert_close(row["tokens_per_second"], row["actual_throughput"] * 8192)
    assert_close(row["tokens_per_second_per_device"], row["tokens_per_second"] / 8)
    assert row["mfu_interval"][0] <= row["mfu"] <= row["mfu_interval"][1]
    tokens = found["assumptions"]["tokens"]
    assert tokens["peak_device"] == "h100-sxm"
    assert "NVIDIA" in tokens["peak_source"]
    assert tokens["flops_per_token_formula"].startswith("6N + 12·L·H·S")


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--peak-flops", "fast"], "peak_flops: got 'fast'; expected a peak with its unit"),
        (["--tokens-per-sample", "8192", "--hidden", "4096"], "layers: missing"),
        (["--peak-flops", "989TFLOP/s"], "tokens_per_sample: missing"),
    ],
)
def test_cli_refusals(capsys: pytest.CaptureFixture[str], extra: list[str], said: str) -> None:
    code, out, err = run(capsys, "predict", *ARGS, *extra)
    assert code == 2
    assert out == ""
    assert said in err
    assert len(err.strip().splitlines()) == 1


def test_api_gives_tokens_and_mfu() -> None:
    from dpscale.web.app import create_app

    client = TestClient(create_app())
    query = {k: v for k, v in GIVEN.items() if k != "devices"} | {"devices": [8, 64]}
    r = client.get("/api/v1/predict", params=query)
    assert r.status_code == 200, r.text
    row = r.json()["predictions"][1]
    assert_close(row["mfu"], row["tokens_per_second"] * (48e9 + 12 * 32 * 4096 * 8192) / (64 * 989e12))
    bad = client.get("/api/v1/predict", params=query | {"peak_flops": "fast"})
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["field"] == "peak_flops"
