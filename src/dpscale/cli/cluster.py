"""Measuring a real cluster: ``dpscale measure`` and ``dpscale probe``, launched with torchrun (under srun too)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from dpscale.cli.definitions import named_as_options
from dpscale.cli.options import JsonOption, LangOption, lang_of, respond
from dpscale.errors import MissingExtra
from dpscale.i18n import Lang
from dpscale.parse import parse_count, parse_scaled_count

if TYPE_CHECKING:
    from dpscale.measure.launch import Launch

__all__ = ["measure", "probe", "register"]


Nodes = Annotated[
    int,
    typer.Option("--nnodes", help="Nodes (torchrun's --nnodes); run the command on each [default: srun's, else 1]."),
]
NodeRank = Annotated[int, typer.Option("--node-rank", help="This node's rank (torchrun's --node-rank; srun's).")]
Endpoint = Annotated[
    str | None, typer.Option("--rdzv-endpoint", help="host:port of the rendezvous, with --nnodes > 1 (torchrun's).")
]
LocalAddr = Annotated[
    str | None, typer.Option("--local-addr", help="This node's address as the others reach it (torchrun's).")
]
Threads = Annotated[
    str | None,
    typer.Option(
        "--threads",
        help="CPU threads per rank [default: usable CPUs (affinity, cgroup quota) ÷ ranks per node].",
    ),
]
Backend = Annotated[str, typer.Option("--backend", help="auto (NCCL with GPUs, else gloo), gloo or nccl.")]
Timeout = Annotated[str, typer.Option("--timeout", help="How long a rank may wait for the others: 120s, 5min.")]


def _cluster(
    language: Lang,
    nproc: int,
    nnodes: int,
    node_rank: int,
    endpoint: str | None,
    backend: str,
    timeout: str,
    local_addr: str | None = None,
    threads: str | None = None,
) -> Launch:
    """The core's Launch from the options' text; the core checks the values (nodes, ranks, bounds).

    Inside an srun step, nodes, this node's rank and the rendezvous come from Slurm unless given.
    """
    import os

    from dpscale.measure.launch import Launch
    from dpscale.parse import parse_duration
    from dpscale.slurm import SlurmStep

    step = SlurmStep.from_env(os.environ)
    if step is not None and nnodes == 1 and endpoint is None:
        nnodes, node_rank, endpoint = step.placement()
    return Launch(
        nproc_per_node=nproc,
        nnodes=nnodes,
        node_rank=node_rank,
        rdzv_endpoint=endpoint,
        local_addr=local_addr,
        threads=None if threads is None else parse_count(threads, language, field="threads"),
        backend=backend.strip().lower(),
        timeout=parse_duration(timeout, language, field="timeout"),
    )


def _stopped(exc: Any) -> None:
    """Say that SIGTERM or SIGHUP ended the run (the core ended its processes; the exit status is 128 + N)."""
    print(f"dpscale: stopped by {exc.name}; every process of the run was ended", file=sys.stderr)


def _and_prints(as_json: bool) -> str:
    """What node 0 does besides, for the other nodes to say (their standard output stays empty)."""
    return " and prints the JSON" if as_json else ""


def _measure_module() -> Any:
    try:
        from dpscale.measure import launcher
    except ImportError as exc:
        raise MissingExtra("dpscale measure and probe", "measure") from exc
    return launcher


def measure(
    nproc: Annotated[str, typer.Option("--nproc", help="Ranks per node at each size: 1,2,4,8.")] = "1,2",
    workload: Annotated[str, typer.Option("--workload", "-w", help="mlp, cnn or transformer.")] = "mlp",
    sharding: Annotated[
        str, typer.Option("--sharding", help="ddp, or PyTorch's FSDP: zero2, zero3 (full_shard), hybrid (HSDP).")
    ] = "ddp",
    params: Annotated[str, typer.Option("--params", "-p", help="Model size, to match your gradients: 25.6M.")] = "4M",
    batch: Annotated[str, typer.Option("--batch", "-b", help="Samples per rank per step.")] = "32",
    steps: Annotated[str, typer.Option("--steps", help="Timed steps per run.")] = "20",
    warmup: Annotated[str, typer.Option("--warmup", help="Steps run before timing.")] = "5",
    repeats: Annotated[str, typer.Option("--repeats", "-r", help="Runs per size, for the interval.")] = "3",
    out: Annotated[str, typer.Option("--out", "-o", help="JSON-lines file the records are added to.")] = "runs.jsonl",
    nnodes: Nodes = 1,
    node_rank: NodeRank = 0,
    rdzv_endpoint: Endpoint = None,
    local_addr: LocalAddr = None,
    threads: Threads = None,
    backend: Backend = "auto",
    timeout: Timeout = "120s",
    as_json: JsonOption = False,
    lang: LangOption = None,
) -> None:
    """Measure throughput and efficiency of a synthetic DDP or FSDP job at each size, with torchrun.

    dpscale measure --nproc 1,2 --workload mlp --params 4M --batch 32 --out runs.jsonl
    """
    import warnings

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from dpscale.cli.render import print_measurements
    from dpscale.parse import parse_device_list

    launcher = _measure_module()
    language = lang_of(lang)
    typed = {
        "nproc": nproc,
        "workload": workload,
        "params": params,
        "batch": batch,
        "steps": steps,
        "warmup": warmup,
        "repeats": repeats,
        "timeout": timeout,
        "threads": threads,
        "backend": backend,
    }
    with named_as_options(None, typed):
        sizes = parse_device_list(nproc, language, field="nproc")
        base = _cluster(language, max(sizes), nnodes, node_rank, rdzv_endpoint, backend, timeout, local_addr, threads)
        options: dict[str, Any] = {
            "workload": workload.strip().lower(),
            "params": parse_scaled_count(params, language, field="params"),
            "batch": parse_count(batch, language, field="batch"),
            "steps": parse_count(steps, language, field="steps"),
            "warmup": parse_count(warmup, language, field="warmup", minimum=0),
            "repeats": parse_count(repeats, language, field="repeats"),
            "sharding": sharding,
        }
    progress_console = Console(stderr=True)
    with (
        warnings.catch_warnings(record=True) as caught,
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            transient=True,
            console=progress_console,  # stdout carries the results (--json)
            disable=not progress_console.is_terminal,  # no bar in logs and pipes
        ) as bar,
    ):
        warnings.simplefilter("always", RuntimeWarning)
        task = bar.add_task("measuring", total=len(set(sizes)) * options["repeats"])
        try:
            with named_as_options(None, typed):
                found = launcher.measure(
                    sizes,
                    cluster=base,
                    out=out,
                    progress=lambda done, total: bar.update(task, completed=done),
                    **options,
                )
        except launcher.Terminated as exc:
            _stopped(exc)
            raise
    for warning in caught:
        print(f"warning: {warning.message}", file=sys.stderr)
    if base.node_rank != 0:  # node 0 writes the records, and alone prints them: one document on stdout
        print(f"node {base.node_rank}: done; node 0 wrote the records{_and_prints(as_json)}", file=sys.stderr)
        return
    records = [record.to_dict() for record in found]
    if as_json:
        print("\n".join(json.dumps(record, ensure_ascii=False) for record in records))
        return
    print_measurements(records, out, language)


def _import_logs(paths: list[str], out: str, as_json: bool, language: Lang) -> None:
    """``probe --import``: nccl-tests' outputs read, fitted and written as a profile; no torch, no run."""
    from dpscale.cli.render import print_import
    from dpscale.errors import escaped
    from dpscale.i18n import translation
    from dpscale.nccltests import import_logs, read_logs
    from dpscale.records import unwritten, write_profile

    logs = [log for path in paths for log in read_logs(path)]  # every run of each file, each fitted
    imported = import_logs(logs)
    try:
        write_profile(out, imported.profile)
    except OSError as exc:
        raise unwritten("out", out, exc) from None
    said = translation(language).gettext("note: %(text)s")  # once written: a refusal stays one line
    # runs left out, ranks inferred (each log's), and what the fit found (an in-network reduction)
    for note in dict.fromkeys([*(note for log in logs for note in log.notes), *imported.notes]):
        print(said % {"text": escaped(note.localized(language))}, file=sys.stderr)
    respond(
        imported,
        language,
        as_json=as_json,
        payload=lambda found: found.profile.to_dict(),
        table=lambda found, lang: print_import(found, out, lang),
    )


def probe(
    nproc: Annotated[str, typer.Option("--nproc", help="Ranks per node.")] = "2",
    max_bytes: Annotated[str, typer.Option("--max-bytes", help="Largest message: 64MB, 256MiB.")] = "64MiB",
    reps: Annotated[str, typer.Option("--reps", help="Timed all-reduces per size.")] = "10",
    out: Annotated[
        str, typer.Option("--out", "-o", help="Network profile for dpscale predict --network.")
    ] = "network.json",
    nnodes: Nodes = 1,
    node_rank: NodeRank = 0,
    rdzv_endpoint: Endpoint = None,
    local_addr: LocalAddr = None,
    threads: Threads = None,
    backend: Backend = "auto",
    timeout: Timeout = "120s",
    as_json: JsonOption = False,
    lang: LangOption = None,
    imports: Annotated[
        list[str] | None,
        typer.Option(
            "--import",
            help="An nccl-tests output (all_reduce_perf, reduce_scatter_perf, all_gather_perf; text or -J JSON) "
            "to fit instead of probing; repeat it for one run per node count.",
        ),
    ] = None,
) -> None:
    """All-reduce times over message sizes (like nccl-tests), and the α and β they imply.

    dpscale probe --nproc 2 --out network.json

    dpscale probe --import all_reduce_1node.txt --import all_reduce_4nodes.txt --out network.json
    """
    from dpscale.cli.render import print_probe
    from dpscale.parse import parse_bytes

    language = lang_of(lang)
    if imports:
        _import_logs(imports, out, as_json, language)
        return
    launcher = _measure_module()
    typed = {
        "nproc": nproc,
        "max_bytes": max_bytes,
        "reps": reps,
        "timeout": timeout,
        "threads": threads,
        "backend": backend,
    }
    with named_as_options(None, typed):
        cluster = _cluster(
            language,
            parse_count(nproc, language, field="nproc"),
            nnodes,
            node_rank,
            rdzv_endpoint,
            backend,
            timeout,
            local_addr,
            threads,
        )
        size = parse_bytes(max_bytes, language, field="max_bytes")
    try:
        with named_as_options(None, typed):
            profile = launcher.probe(
                cluster,
                max_bytes=int(size) if size.is_integer() else size,
                reps=parse_count(reps, language, field="reps"),
                out=out,
            )
    except launcher.Terminated as exc:
        _stopped(exc)
        raise
    if profile is None:  # node 0 writes the profile, and alone prints it: one document on stdout
        print(f"node {cluster.node_rank}: done; node 0 wrote the profile{_and_prints(as_json)}", file=sys.stderr)
        return
    respond(
        profile,
        language,
        as_json=as_json,
        payload=lambda probed: probed.to_dict(),
        table=lambda probed, lang: print_probe(probed.to_dict(), out, lang),
    )


def register(app: typer.Typer) -> None:
    """Add ``dpscale measure`` and ``probe`` to ``app``."""
    app.command()(measure)
    app.command()(probe)
