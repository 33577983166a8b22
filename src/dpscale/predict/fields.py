"""Each input of ``predict``, once: what it is, how it is read, its bounds, its label and hint on the page.

:mod:`dpscale.predict.definition` makes them a definition (:data:`~dpscale.predict.definition.PREDICT`)
with the rules across them. No numpy here.
"""

from __future__ import annotations

from dpscale.errors import N_
from dpscale.inputs import Api, Cli, Input, Page
from dpscale.predict.defaults import (
    ALGORITHMS,
    DDP_BUCKET_BYTES,
    DEFAULT_DEVICES_PER_NODE,
    DEFAULT_JITTER,
    DEFAULT_LAYERS,
    OPTIMIZERS,
    SHARDING_SYNONYMS,
    SHARDINGS,
)
from dpscale.predict.measuredfields import MEASURED_INPUTS
from dpscale.predict.presets import Tier, presets
from dpscale.predict.tokenfields import TOKEN_INPUTS

__all__ = ["PREDICT_INPUTS"]


def _tier(
    tier: Tier,
    example: str,
    where: str,
    per: str,
    bandwidth: tuple[str, str],
    latency: tuple[str, str],
    labels: tuple[str, str, str, str, str, str],
) -> tuple[Input, ...]:
    """A tier's preset, bandwidth, latency and efficiency; ``bandwidth`` and ``latency``: an example as the command
    line and the page read it (300GB/s, 3us), and as the API takes it, a number of bytes/s or seconds."""
    table = presets()[tier]
    names = tuple(sorted(table, key=lambda name: table[name]["bandwidth"]))  # slowest first
    label, empty, bandwidth_label, bandwidth_hint, latency_label, efficiency_label = labels
    return (
        Input(
            tier,
            "choice",
            f"Preset of the {where}: {example}, ... (see presets.toml).",
            choices=names,
            page=Page(
                example=(example, example),
                group="cluster",
                label=label,
                choice_labels=tuple(table[name]["description"] for name in names),
                empty_label=empty,
            ),
        ),
        Input(
            f"{tier}_bandwidth",
            "bandwidth",
            f"Bandwidth of the {where} per {per}, instead of a preset: {bandwidth[0]}.",
            api=Api(described=f"Bandwidth of the {where} per {per}, instead of a preset ({bandwidth[1]})."),
            low=1e6,
            high=1e15,
            unit="bytes/s",
            cli=Cli(option=f"--{tier}-bw"),
            page=Page(group="cluster", label=bandwidth_label, hint=bandwidth_hint, replaces=tier),
        ),
        Input(
            f"{tier}_latency",
            "seconds",
            f"Latency of the {where}: {latency[0]} [default: the preset's].",
            api=Api(described=f"Latency of the {where} ({latency[1]}) [default: the preset's]."),
            low=0,
            high=1,
            unit="s",
            page=Page(group="advanced", label=latency_label),
        ),
        Input(
            f"{tier}_efficiency",
            "fraction",
            f"Share of the bandwidth an all-reduce reaches on the {where}: 80% [default: the preset's].",
            api=Api(
                described=f"Share of the bandwidth an all-reduce reaches on the {where}: a fraction (0.8) "
                "[default: the preset's]."
            ),
            low=0.01,
            high=1,
            page=Page(group="advanced", label=efficiency_label),
        ),
    )


# The memory inputs the planner shares (dpscale.calculators.plan): defined once, here.
PARAM_BYTES = Input(
    "param_bytes",
    "number",
    "Bytes per weight as the all-gathers move it and a device holds it (2: bf16).",
    default=4.0,
    low=0.125,
    high=16,
    page=Page(group="sharding", label=N_("Bytes per weight (2 for bf16)")),
)

SHARDING = Input(
    "sharding",
    "choice",
    "Data parallelism: ddp (replicated), zero1, zero2, zero3 (FSDP full_shard) or hybrid (HSDP).",
    default="ddp",
    choices=SHARDINGS,
    synonyms=SHARDING_SYNONYMS,
    page=Page(
        example=("ddp", "ddp"),
        group="sharding",
        label=N_("Strategy"),
        choice_labels=(
            N_("DDP: every device holds the whole model"),
            N_("ZeRO-1: optimizer states sharded"),
            N_("ZeRO-2 / FSDP SHARD_GRAD_OP: and gradients"),
            N_("ZeRO-3 / FSDP FULL_SHARD: and parameters"),
            N_("HSDP: ZeRO-3 inside a group, replicated across groups"),
        ),
    ),
)

OPTIMIZER = Input(
    "optimizer",
    "choice",
    "Optimizer whose states each device holds: adam, adamw or sgd.",
    default="adam",
    choices=OPTIMIZERS,
    page=Page(
        example=("adam", "adam"),
        group="sharding",
        label=N_("Optimizer"),
        choice_labels=("Adam", "AdamW", N_("SGD with momentum")),
    ),
)

DEVICE_MEMORY = Input(
    "device_memory",
    "bytes",
    "Memory of one device, to say which configurations fit: 80GiB.",
    low=1,
    high=1e15,
    unit="bytes",
    page=Page(
        group="sharding",
        label=N_("Memory of one device (optional)"),
        hint=N_("For example 80 GiB: the table then says what fits."),
    ),
)

PREDICT_INPUTS = (
    Input(
        "devices",
        "device_list",
        "Device counts: 8,16,64 or a range, 1..1024 (powers of two) or 8..64+8.",
        required=True,
        low=1,
        high=10**9,
        cli=Cli(short="-d"),
        page=Page(
            example=("1..256", "1..256"),
            group="workload",
            label=N_("Device counts"),
            hint=N_("For example 8, 16, 64, or 1..1024 for the powers of two."),
        ),
    ),
    Input(
        "per_device_throughput",
        "number",
        "v: one device's throughput alone, samples/s (or give --measured, or --mfu for a model never run).",
        api=Api(
            described="v: one device's throughput alone, samples/s (or give measured, or mfu for a model never run)."
        ),
        low=1e-6,
        high=1e12,
        cli=Cli(option="--per-device", short="-v"),
        page=Page(
            example=("938", "938"),
            group="workload",
            label=N_("Throughput of one device alone (samples/s)"),
            hint=N_("Or leave it empty and give a measurement of the whole cluster below."),
        ),
    ),
    Input(
        "measured",
        "reference",
        "The whole cluster's throughput measured on N devices, N:THROUGHPUT (8:7500); several sizes separated "
        "by semicolons (8:7500; 64:52000), or on the command line the option repeated or a runs file of "
        "dpscale measure. The model is calibrated on them; without the per-device throughput, efficiencies "
        "are relative to the smallest N.",
        cli=Cli(repeatable=True),
        page=Page(
            group="workload",
            label=N_("Or a measurement: devices:throughput of the whole cluster"),
            hint=N_(
                "For example 8:7500 (8 devices together ran at 7,500 samples/s), or several sizes: 8:7500; 64:52000. "
                "Efficiencies are then relative to the smallest, and the model is calibrated on them."
            ),
        ),
    ),
    Input(
        "batch",
        "number",
        "Per-device micro-batch, in the unit of the throughput.",
        required=True,
        low=1e-6,
        high=1e6,
        cli=Cli(short="-b"),
        page=Page(example=("256", "256"), group="workload", label=N_("Micro-batch per device (samples)")),
    ),
    Input(
        "params",
        "scaled_count",
        "Parameters: 25.6M, 7B.",
        api=Api(described="Parameters (2.56e7, 7e9)."),
        required=True,
        low=1,
        high=1e15,
        cli=Cli(short="-p"),
        page=Page(
            example=("25,6M", "25.6M"), group="workload", label=N_("Parameters"), hint=N_("For example 25.6M or 7B.")
        ),
    ),
    Input(
        "grad_bytes",
        "number",
        "Bytes per gradient value (4: fp32, 2: fp16/bf16).",
        default=4.0,
        low=0.125,
        high=16,
        page=Page(example=("4", "4"), group="workload", label=N_("Bytes per gradient value (4 for fp32)")),
    ),
    PARAM_BYTES,
    Input(
        "accumulation",
        "count",
        "Gradient-accumulation micro-steps.",
        default=1,
        low=1,
        high=10**6,
        cli=Cli(short="-k"),
        page=Page(example=("1", "1"), group="workload", label=N_("Gradient-accumulation steps")),
    ),
    Input(
        "input_throughput",
        "number",
        "Samples/s one node's input pipeline (loading, decoding, augmenting) sustains for all its devices.",
        low=1e-6,
        high=1e15,
        cli=Cli(option="--input-rate"),
        page=Page(
            group="workload",
            label=N_("Input pipeline of one node (samples/s)"),
            hint=N_(
                "Optional: what loading and decoding sustain for all the devices of a node. "
                "Left empty, the input is assumed to keep up."
            ),
        ),
    ),
    *TOKEN_INPUTS,
    Input(
        "devices_per_node",
        "count",
        f"Devices in one node [default: {DEFAULT_DEVICES_PER_NODE}, or the network profile's].",
        low=1,
        high=1024,
        cli=Cli(short="-g"),
        page=Page(example=("8", "8"), group="cluster", label=N_("Devices per node")),
    ),
    *_tier(
        "intra",
        "nvlink3",
        "link inside a node",
        "device",
        ("300GB/s", "3e11"),
        ("3us", "3e-6"),
        (
            N_("Link inside a node"),
            N_("custom bandwidth below"),
            N_("Bandwidth inside a node, per device (custom)"),
            N_("For example 300 GB/s."),
            N_("Latency inside a node (empty: the preset's)"),
            N_("Share of the bandwidth an all-reduce reaches inside a node (empty: the preset's)"),
        ),
    ),
    *_tier(
        "inter",
        "ib-hdr",
        "network between nodes",
        "network card",
        ("100Gb/s, 12.5GB/s", "1.25e10"),
        ("10us", "1e-5"),
        (
            N_("Network between nodes"),
            N_("none, or custom bandwidth below"),
            N_("Network bandwidth per card (custom)"),
            N_("For example 100 Gb/s."),
            N_("Network latency (empty: the preset's)"),
            N_("Share of the network bandwidth an all-reduce reaches (empty: the preset's)"),
        ),
    ),
    Input(
        "nics",
        "count",
        "Network cards per node, with inter.",
        default=1,
        low=1,
        high=64,
        page=Page(example=("4", "4"), group="cluster", label=N_("Network cards per node")),
    ),
    *MEASURED_INPUTS,
    Input(
        "algorithm",
        "choice",
        "The all-reduce: auto, ring, tree or hierarchical.",
        default="auto",
        choices=ALGORITHMS,
        page=Page(
            example=("auto", "auto"),
            group="cluster",
            label=N_("All-reduce algorithm"),
            choice_labels=(N_("fastest (as NCCL picks)"), "ring", "tree", N_("hierarchical")),
        ),
    ),
    Input(
        "overlap",
        "switch",
        "Overlap the all-reduce with the backward pass (on), or run it after (off: --no-overlap).",
        api=Api(described="Overlap the all-reduce with the backward pass (true), or run it after (false)."),
        default=True,
        cli=Cli(option="--no-overlap"),
        page=Page(
            example=("on", "on"),
            group="cluster",
            label=N_("Overlap with the backward pass"),
            choice_labels=(N_("on"), N_("off")),  # every strategy overlaps: DDP its buckets, FSDP its layers
        ),
    ),
    Input(
        "bucket_bytes",
        "bytes",
        "DDP bucket size.",
        default=float(DDP_BUCKET_BYTES),
        low=1024,
        high=1e12,
        unit="bytes",
        cli=Cli(option="--bucket", default_text="25MiB"),
        page=Page(group="advanced", label=N_("DDP bucket size (empty: 25 MiB)")),
    ),
    Input(
        "jitter",
        "variation",
        "Step-time variation across ranks: 2% or 0.02.",
        api=Api(described="Step-time variation across ranks: a fraction (0.02)."),
        default=DEFAULT_JITTER,
        low=0,
        high=0.5,
        cli=Cli(default_text="2%"),
        page=Page(example=("2 %", "2%"), group="cluster", label=N_("Step-time variation across devices")),
    ),
    Input(
        "jitter_from",
        "step_records",
        "Records of dpscale measure or Meter (runs.jsonl): the step-time variation from their step times.",
        edges=("cli",),
    ),
    SHARDING,
    Input(
        "shard_group",
        "count",
        "Devices that share one copy of the model states under hybrid [default: one node].",
        low=1,
        high=10**9,
        page=Page(group="sharding", label=N_("Sharding group of hybrid (empty: one node)")),
    ),
    OPTIMIZER,
    Input(
        "layers",
        "count",
        f"Layers (blocks): the pieces a sharded model is gathered in, one prefetched ahead, and L of the "
        f"FLOPs per token's attention term [default: {DEFAULT_LAYERS}].",
        low=1,
        high=10**6,
        page=Page(group="sharding", label=N_("Pieces the model is gathered in (empty: 32)")),
    ),
    Input(
        "activation_memory",
        "bytes",
        "Activation memory per device, when known: 20GiB.",
        low=1,
        high=1e15,
        unit="bytes",
        page=Page(
            group="sharding", label=N_("Activation memory per device (optional)"), hint=N_("For example 20 GiB.")
        ),
    ),
    DEVICE_MEMORY,
)
