"""The inputs that turn ``predict``'s samples into tokens and FLOPs: the sequence length, the peak, F,
and one device's MFU, given in place of its throughput for a model that has never run.

Part of :data:`dpscale.predict.fields.PREDICT_INPUTS`; the formulas are :mod:`dpscale.predict.flops`'s.
"""

from __future__ import annotations

from dpscale.errors import N_
from dpscale.inputs import Api, Input, Page

__all__ = ["MFU", "TOKEN_INPUTS"]

# One device's MFU alone, in place of its samples/s: v = MFU x peak / (FLOPs per token x tokens per sample).
MFU = Input(
    "mfu",
    "fraction",
    "One device's MFU alone, 40% or 0.4, in place of its throughput (--per-device) for a model that has never "
    "run: v = MFU x peak / (FLOPs per token x tokens per sample); needs --tokens-per-sample and --peak-flops.",
    api=Api(
        described="One device's MFU alone, a fraction (0.4), in place of per_device_throughput for a model that has "
        "never run: v = MFU x peak / (FLOPs per token x tokens per sample); needs tokens_per_sample and peak_flops."
    ),
    low=1e-6,
    high=1,
    page=Page(group="tokens", label=N_("Or the MFU of one device alone, in place of its throughput")),
)

TOKEN_INPUTS = (
    Input(
        "tokens_per_sample",
        "count",
        "Tokens per sample, the sequence length: throughputs in tokens/s too, and with --peak-flops the MFU.",
        api=Api(
            described="Tokens per sample, the sequence length: throughputs in tokens/s too, and with peak_flops the "
            "MFU."
        ),
        low=1,
        high=10**8,
        page=Page(
            group="tokens",
            label=N_("Tokens per sample (sequence length)"),
            hint=N_("For example 4096: the tables then give tokens/s, per device and for the cluster."),
        ),
    ),
    Input(
        "peak_flops",
        "text",
        "One device's dense peak, for the MFU: 989TFLOP/s, or a device: h100-sxm, h200, a100-sxm-80gb, mi300x, "
        "b200, ... (their dense bf16 figures, see peaks.toml).",
        page=Page(
            group="tokens",
            label=N_("Peak of one device (FLOP/s) or its name"),
            hint=N_(
                "For example 989 TFLOP/s, or H100 SXM, H200, A100 SXM 80GB, MI300X, B200: their dense bf16 figure."
            ),
        ),
    ),
    Input(
        "flops_per_token",
        "scaled_count",
        "FLOPs one token costs, forward and backward [default: 6 x parameters, + 12 x layers x hidden x "
        "sequence when --layers and --hidden are given].",
        api=Api(
            described="FLOPs one token costs, forward and backward [default: 6 x parameters, + 12 x layers x hidden x "
            "sequence when layers and hidden are given]."
        ),
        low=1,
        high=1e18,
        page=Page(group="tokens", label=N_("FLOPs per token (empty: 6 × parameters, + attention)")),
    ),
    Input(
        "hidden",
        "count",
        "The attention's width, heads x head size (the model's width in most models): the FLOPs per token "
        "add 12 x layers x hidden x sequence.",
        low=1,
        high=10**7,
        page=Page(group="tokens", label=N_("Attention width (heads × head size)")),
    ),
    MFU,
)
