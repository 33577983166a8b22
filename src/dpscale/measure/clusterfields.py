"""What ``dpscale measure`` and ``probe`` take: their definitions (MEASURE, PROBE) and the plans they build.

Each input is read at the edge as its kind says (:mod:`dpscale.kinds`), as a calculator's are; the
build turns the values into the run's checked plan (:class:`~dpscale.measure.launcher.MeasurePlan`,
:class:`~dpscale.measure.probing.ProbePlan`, or the nccl-tests files ``probe --import`` fits), the
bounds held by the core that runs them. Inside an srun step, the nodes, this node's rank and the
rendezvous come from Slurm unless given: the environment is a value the edge passes in
(:data:`ENVIRONMENT`), never read here.

No torch here (the ``measure`` extra): the command line defines its commands from these at start-up,
and imports what runs only when one does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from dpscale.inputs import Cli, Definition, Input, KindName, Values
from dpscale.kinds.quantities import Count

if TYPE_CHECKING:
    from dpscale.i18n import Lang
    from dpscale.measure.launch import Launch
    from dpscale.measure.launcher import MeasurePlan
    from dpscale.measure.probing import ProbePlan

__all__ = ["ENVIRONMENT", "MEASURE", "PROBE", "ImportPlan"]

ENVIRONMENT = "environment"  # the values' key of the process's environment (srun's variables), not an input


class _FromZero(Count):
    """A whole number from 0 (warm-up steps, a node's rank): a count that may be none.

    The kinds' own count starts at 1 (devices, steps); were it to read its input's ``low``, this
    class would go and these inputs would say ``low=0``.
    """

    __slots__ = ()

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        from dpscale.parse import parse_count

        return parse_count(text, lang, field=field, minimum=0)


_FROM_ZERO = cast("KindName", _FromZero())  # equal to "count", as a kind's object is to its name


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """``probe --import``: nccl-tests' outputs to read and fit, and the profile written; no run, no torch."""

    paths: tuple[str, ...]
    out: str


def _on_cli(*inputs: Input) -> tuple[Input, ...]:
    return tuple(item._replace(edges=("cli",)) for item in inputs)


# Where and how both commands run: torchrun's flags, the backend, the limits.
_CLUSTER = _on_cli(
    Input(
        "nnodes",
        "count",
        "Nodes (torchrun's --nnodes); run the command on each [default: srun's, else 1].",
    ),
    Input("node_rank", _FROM_ZERO, "This node's rank (torchrun's --node-rank; srun's).", cli=Cli(default_text="0")),
    Input("rdzv_endpoint", "text", "host:port of the rendezvous, with --nnodes > 1 (torchrun's)."),
    Input("local_addr", "text", "This node's address as the others reach it (torchrun's)."),
    Input(
        "threads",
        "count",
        "CPU threads per rank [default: usable CPUs (affinity, cgroup quota) ÷ ranks per node].",
    ),
    Input("backend", "text", "auto (NCCL with GPUs, else gloo), gloo or nccl.", default="auto"),
    Input(
        "timeout",
        "duration",
        "How long a rank may wait for the others: 120s, 5min.",
        default=120.0,
        cli=Cli(default_text="120s"),
    ),
)


def _launch(v: Values, nproc: int) -> Launch:
    """The core's Launch from the values; inside an srun step, nodes, rank and rendezvous from Slurm unless given."""
    from dpscale.measure.launch import Launch
    from dpscale.slurm import SlurmStep

    nnodes, node_rank, endpoint = v["nnodes"], v["node_rank"], v["rdzv_endpoint"]
    step = SlurmStep.from_env(v.get(ENVIRONMENT) or {})
    if step is not None and nnodes in (None, 1) and endpoint is None:
        nnodes, node_rank, endpoint = step.placement()
    return Launch(
        nproc_per_node=nproc,
        nnodes=1 if nnodes is None else nnodes,
        node_rank=0 if node_rank is None else node_rank,
        rdzv_endpoint=endpoint,
        local_addr=v["local_addr"],
        threads=v["threads"],
        backend=v["backend"].strip().lower(),
        timeout=v["timeout"],
    )


def _measure(values: Values) -> MeasurePlan:
    """The measurement's plan, every input checked (InvalidInput names the first that is not fine)."""
    from dpscale.measure.launcher import plan_measure

    v = {**MEASURE.complete(values), ENVIRONMENT: values.get(ENVIRONMENT)}
    sizes = list(v["nproc"])
    return plan_measure(
        sizes,
        workload=v["workload"],
        params=v["params"],
        batch=v["batch"],
        steps=v["steps"],
        warmup=v["warmup"],
        repeats=v["repeats"],
        sharding=v["sharding"],
        cluster=_launch(v, max(sizes)),
        out=v["out"],
    )


MEASURE = Definition(
    "measure",
    _on_cli(
        Input(
            "nproc", "device_list", "Ranks per node at each size: 1,2,4,8.", default=(1, 2), cli=Cli(default_text="1,2")
        ),
        Input(
            "workload",
            "choice",
            "mlp, cnn or transformer.",
            default="mlp",
            choices=("mlp", "cnn", "transformer"),  # dpscale.measure.workloads' KINDS (torch)
            cli=Cli(short="-w"),
        ),
        Input("sharding", "text", "ddp, or PyTorch's FSDP: zero2, zero3 (full_shard), hybrid (HSDP).", default="ddp"),
        Input(
            "params",
            "scaled_count",
            "Model size, to match your gradients: 25.6M.",
            default=4e6,
            cli=Cli(short="-p", default_text="4M"),
        ),
        Input("batch", "count", "Samples per rank per step.", default=32, cli=Cli(short="-b")),
        Input("steps", "count", "Timed steps per run.", default=20),
        Input("warmup", _FROM_ZERO, "Steps run before timing.", default=5),
        Input("repeats", "count", "Runs per size, for the interval.", default=3, cli=Cli(short="-r")),
        Input("out", "path", "JSON-lines file the records are added to.", default="runs.jsonl", cli=Cli(short="-o")),
        *_CLUSTER,
    ),
    _measure,
)


def _probe(values: Values) -> ProbePlan | ImportPlan:
    """The probe's plan, every input checked; or, given nccl-tests' outputs to import, those and the profile's path."""
    v = {**PROBE.complete(values), ENVIRONMENT: values.get(ENVIRONMENT)}
    if v["imports"]:
        return ImportPlan(tuple(v["imports"]), v["out"])
    from dpscale.measure.probing import plan_probe

    cluster = _launch(v, v["nproc"])
    size = v["max_bytes"]
    return plan_probe(cluster, max_bytes=int(size) if float(size).is_integer() else size, reps=v["reps"], out=v["out"])


PROBE = Definition(
    "probe",
    _on_cli(
        Input("nproc", "count", "Ranks per node.", default=2),
        Input("max_bytes", "bytes", "Largest message: 64MB, 256MiB.", default=2**26, cli=Cli(default_text="64MiB")),
        Input("reps", "count", "Timed all-reduces per size.", default=10),
        Input(
            "out",
            "path",
            "Network profile for dpscale predict --network.",
            default="network.json",
            cli=Cli(short="-o"),
        ),
        *_CLUSTER,
        Input(
            "imports",
            "path",
            "An nccl-tests output (all_reduce_perf, reduce_scatter_perf, all_gather_perf; text or -J JSON) "
            "to fit instead of probing; repeat it for one run per node count.",
            cli=Cli(option="--import", repeatable=True),
        ),
    ),
    _probe,
)
