"""The commands beyond the seed's calculator: batch, bubble, plan, predict, fit, measure, probe.

They register on the same Typer app as ``scale``; the entry point imports this module for every
command but ``scale`` and ``serve``, so that the seed's command loads and builds only its own.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import sys
from collections.abc import Callable, Iterator
from typing import Annotated, Any

import typer

from dpscale.cli.app import JsonOption, LangOption, _emit_json, _lang, _save, app
from dpscale.errors import InvalidInput, MissingExtra, MissingInput
from dpscale.i18n import Lang
from dpscale.parse import number_reader, parse_count, parse_efficiency, parse_number


def _count(text: str | None, lang: Lang, field: str) -> int | None:
    return None if text is None else parse_count(text, lang, field=field)


def _number(text: str | None, lang: Lang, field: str) -> float | None:
    return None if text is None else parse_number(text, lang, field=field)


@app.command()
def batch(
    micro_batch: Annotated[str, typer.Argument(help="b, samples per device per micro-step (32).", show_default=False)],
    accumulation: Annotated[
        str | None, typer.Argument(help="k, gradient-accumulation steps [default: 1, or solved].", show_default=False)
    ] = None,
    devices: Annotated[
        str | None, typer.Argument(help="d, data-parallel devices [default: 1, or solved].", show_default=False)
    ] = None,
    sequence_length: Annotated[
        str | None, typer.Option("--sequence-length", "-L", help="L, tokens per sample: also give B in tokens.")
    ] = None,
    target: Annotated[
        str | None,
        typer.Option("--target", "-t", help="A global batch to reach: solves k (or d, with --solve devices)."),
    ] = None,
    solve: Annotated[str, typer.Option("--solve", help="With --target: accumulation or devices.")] = "accumulation",
    base_lr: Annotated[
        str | None, typer.Option("--base-lr", help="A learning rate tuned at --base-batch: scale it linearly.")
    ] = None,
    base_batch: Annotated[
        str | None, typer.Option("--base-batch", help="The global batch --base-lr was tuned at.")
    ] = None,
    as_json: JsonOption = False,
    lang: LangOption = None,
) -> None:
    """Effective (global) batch B = b·k·d of data parallelism with gradient accumulation.

    dpscale batch 32 4 64

    dpscale batch 32 1 64 --target 8192
    """
    from dpscale import batch as core
    from dpscale.cli.render import print_batch

    language = _lang(lang)
    b = parse_count(micro_batch, language, field="micro_batch")
    k = _count(accumulation, language, "accumulation")
    d = _count(devices, language, "devices")
    seq = _count(sequence_length, language, "sequence_length")
    solution = None
    if target is not None:
        goal = parse_count(target, language, field="target_global_batch")
        wanted = solve.strip().lower()
        if wanted == "accumulation":
            solution = core.accumulation_for(goal, b, d or 1, sequence_length=seq)
        elif wanted == "devices":
            solution = core.devices_for_batch(goal, b, k or 1, sequence_length=seq)
        else:
            raise InvalidInput("solve", solve, "accumulation or devices")
        result = solution.batch
    else:
        result = core.effective_batch(b, k or 1, d or 1, sequence_length=seq)
    lr = None
    if (base_lr is None) != (base_batch is None):
        raise InvalidInput("base_lr", base_lr or base_batch, "--base-lr and --base-batch given together")
    if base_lr is not None and base_batch is not None:
        lr = core.scaled_learning_rate(
            parse_number(base_lr, language, field="base_lr"),
            parse_count(base_batch, language, field="base_batch"),
            result.global_batch,
        )
    if as_json:
        payload = solution.to_dict() if solution is not None else result.to_dict()
        _emit_json({**payload, "learning_rate": lr} if lr is not None else payload)
        return
    print_batch(solution, result, language, lr)


@app.command()
def bubble(
    stages: Annotated[str, typer.Argument(help="p, pipeline stages (4).", show_default=False)],
    micro_batches: Annotated[
        str | None, typer.Argument(help="m, micro-batches per step (or give --max-bubble).", show_default=False)
    ] = None,
    schedule: Annotated[str, typer.Option("--schedule", "-s", help="1f1b, gpipe or interleaved.")] = "1f1b",
    chunks: Annotated[str, typer.Option("--chunks", help="v, model chunks per device (interleaved).")] = "1",
    micro_batch_time: Annotated[
        str | None,
        typer.Option("--time", help="Forward + backward time of one micro-batch on one stage (e.g. 120 ms)."),
    ] = None,
    max_bubble: Annotated[
        str | None, typer.Option("--max-bubble", help="Find the fewest micro-batches with a bubble at most this (5%).")
    ] = None,
    plot: Annotated[
        str | None, typer.Option("--plot", help="Save a picture of the schedule: .svg, .png, .json.")
    ] = None,
    as_json: JsonOption = False,
    lang: LangOption = None,
) -> None:
    """Pipeline bubble (p−1)/(v·m + p − 1) for p stages and m micro-batches.

    dpscale bubble 4 8

    dpscale bubble 8 --max-bubble 5% --schedule interleaved --chunks 2
    """
    from dpscale import pipeline
    from dpscale.cli.render import print_bubble
    from dpscale.parse import parse_duration

    language = _lang(lang)
    p = parse_count(stages, language, field="stages")
    v = parse_count(chunks, language, field="chunks")
    if (micro_batches is None) == (max_bubble is None):
        given = "neither" if micro_batches is None else f"{micro_batches} and --max-bubble {max_bubble}"
        raise InvalidInput("micro_batches", given, "either m or --max-bubble, not both")
    if max_bubble is not None:
        found = pipeline.micro_batches_for(
            p, parse_efficiency(max_bubble, language, field="max_bubble"), schedule=schedule, chunks=v
        )
        m = found.micro_batches
    else:
        m = parse_count(micro_batches or "", language, field="micro_batches")
    t = None if micro_batch_time is None else parse_duration(micro_batch_time, language, field="time")
    result = pipeline.bubble(p, m, schedule=schedule, chunks=v, micro_batch_time=t)
    if plot is not None:
        from dpscale.charts import save_chart, schedule_chart

        _save(plot, lambda: save_chart(schedule_chart(result, language), plot, lang=language))
    if as_json:
        _emit_json(result.to_dict())
        return
    print_bubble(result, language)


@app.command()
def plan(
    work: Annotated[
        str,
        typer.Option("--work", "-w", help="Samples (or tokens) to process: dataset size × epochs.", show_default=False),
    ],
    per_device: Annotated[
        str | None, typer.Option("--per-device", "-v", help="v, one device's throughput alone [default: from --fit].")
    ] = None,
    efficiency: Annotated[str | None, typer.Option("--efficiency", "-e", help="E: 90% or 0.9; or give --fit.")] = None,
    fitted: Annotated[
        str | None,
        typer.Option("--fit", help="Measurements (as for dpscale fit): E(d) from the best fitted model."),
    ] = None,
    devices: Annotated[str | None, typer.Option("--devices", "-d", help="d; or give --deadline to find it.")] = None,
    epochs: Annotated[str, typer.Option("--epochs", help="Passes over --work.")] = "1",
    deadline: Annotated[
        str | None, typer.Option("--deadline", help="Finish within this (14 d, 36 h): find the fewest devices.")
    ] = None,
    price: Annotated[str | None, typer.Option("--price", help="Price of one device-hour.")] = None,
    currency: Annotated[str, typer.Option("--currency", help="ISO 4217 code of --price.")] = "USD",
    watts: Annotated[str | None, typer.Option("--watts", help="Power of one device, for the energy.")] = None,
    unit: Annotated[str, typer.Option("--unit", "-u", help="Throughput unit, for display.")] = "samples/s",
    as_json: JsonOption = False,
    lang: LangOption = None,
) -> None:
    """Time, device-hours, cost and energy of a run; or the fewest devices for a deadline.

    dpscale plan --work 1.28e9 --per-device 2000 --efficiency 90% --devices 64 --price 2.5

    dpscale plan --work 1.28e9 --per-device 2000 --efficiency 90% --deadline 36h --price 2.5
    """
    from dpscale import plan as core
    from dpscale.cli.render import print_deadline, print_plan
    from dpscale.parse import parse_duration

    language = _lang(lang)
    w = core.total_work(parse_number(work, language, field="work"), parse_number(epochs, language, field="epochs"))
    if (efficiency is None) == (fitted is None):
        given = "neither" if efficiency is None else f"--efficiency {efficiency} and --fit {fitted}"
        raise InvalidInput("efficiency", given, "either --efficiency or --fit, not both")
    e: float | Callable[[int], float]
    if fitted is not None:
        from dpscale import fit as fitting

        best = fitting.fit(fitting.read_points(fitted, read_number=number_reader(language))).best
        e = best.efficiency
        v = parse_number(per_device, language, field="per_device_throughput") if per_device else best.throughput(1)
    else:
        if per_device is None:
            raise MissingInput("per_device_throughput", "--per-device, or --fit to read it from runs")
        e = parse_efficiency(efficiency or "", language)
        v = parse_number(per_device, language, field="per_device_throughput")
    money = {
        "price_per_device_hour": _number(price, language, "price"),
        "watts_per_device": _number(watts, language, "watts"),
        "currency": currency,
        "unit": unit,
    }
    if (devices is None) == (deadline is None):
        given = "neither" if devices is None else f"--devices {devices} and --deadline {deadline}"
        raise InvalidInput("devices", given, "either --devices or --deadline, not both")
    if deadline is not None:
        found = core.devices_for_deadline(w, parse_duration(deadline, language), v, e, **money)  # type: ignore[arg-type]
        if as_json:
            _emit_json(found.to_dict())
            return
        print_deadline(found, language)
        return
    result = core.plan(w, parse_count(devices or "", language, field="devices"), v, e, **money)  # type: ignore[arg-type]
    if as_json:
        _emit_json(result.to_dict())
        return
    print_plan(result, language)


def _predict(given: dict[str, Any], *, show_levers: bool, as_json: bool, lang: str | None) -> None:
    from dpscale.cli.definitions import named_as_options, read_values
    from dpscale.cli.render import print_prediction
    from dpscale.predict.inputs import PREDICT

    language = _lang(lang)
    with named_as_options(PREDICT):
        request = PREDICT.build(read_values(PREDICT, given, language))
        prediction = request.predict()
        found = request.levers() if show_levers else []
    if as_json:
        _emit_json({**prediction.to_dict(), "levers": [lever.to_dict() for lever in found]})
        return
    print_prediction(prediction, found, language)


def _own(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def _register_predict() -> None:
    from dpscale.cli.definitions import command
    from dpscale.predict.inputs import PREDICT

    levers = Annotated[bool, typer.Option("--levers/--no-levers", help="Rank the what-ifs at the largest count.")]
    doc = """Predict the scaling efficiency E(n) from the interconnect, the gradient size and the batch.

    dpscale predict --devices 8,16,64 --per-device 938 --batch 256 --params 25.6M --intra nvlink3 --inter ib-hdr
    """
    own = [_own("show_levers", levers, True), _own("as_json", JsonOption, False), _own("lang", LangOption, None)]
    app.command("predict")(command(PREDICT, _predict, own, doc))


_register_predict()


@app.command()
def fit(
    measurements: Annotated[
        str, typer.Argument(help="CSV (devices,throughput columns) or JSON lines from dpscale measure.")
    ],
    at: Annotated[str | None, typer.Option("--at", help="Sizes to predict: 128,256,512 or 64..1024.")] = None,
    model: Annotated[
        str, typer.Option("--model", "-m", help="auto (all, ranked by AICc) or constant, amdahl, gustafson, usl, comm.")
    ] = "auto",
    plot: Annotated[str | None, typer.Option("--plot", help="Save the fitted curves: .svg, .png or .json.")] = None,
    as_json: JsonOption = False,
    lang: LangOption = None,
) -> None:
    """Fit how throughput grows with devices (Amdahl, Gustafson, USL, ...) and predict larger sizes.

    dpscale fit runs.csv --at 128,256,512
    """
    from dpscale import fit as core
    from dpscale.cli.render import print_fit
    from dpscale.parse import parse_device_list

    language = _lang(lang)
    points = core.read_points(measurements, read_number=number_reader(language))
    sizes = parse_device_list(at, language, field="at") if at is not None else []
    wanted = None if model.strip().lower() == "auto" else [m.strip().lower() for m in model.split(",")]
    result = core.fit(points, models=wanted, at=sizes)
    if plot is not None:
        from dpscale.charts import fit_chart, save_chart

        _save(plot, lambda: save_chart(fit_chart(result, language), plot, lang=language))
    if as_json:
        _emit_json(result.to_dict())
        return
    print_fit(result, language)


Nodes = Annotated[int, typer.Option("--nnodes", help="Nodes (torchrun's --nnodes); run the command on each.")]
NodeRank = Annotated[int, typer.Option("--node-rank", help="This node's rank (torchrun's --node-rank).")]
Endpoint = Annotated[
    str | None, typer.Option("--rdzv-endpoint", help="host:port of the rendezvous, with --nnodes > 1 (torchrun's).")
]
LocalAddr = Annotated[
    str | None, typer.Option("--local-addr", help="This node's address as the others reach it (torchrun's).")
]
Threads = Annotated[
    str | None, typer.Option("--threads", help="CPU threads per rank [default: cores ÷ ranks per node].")
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
) -> Any:
    """The core's Cluster from the options' text; the core checks the values (nodes, ranks, bounds)."""
    from dpscale.measure.launcher import Cluster
    from dpscale.parse import parse_duration

    return Cluster(
        nproc_per_node=nproc,
        nnodes=nnodes,
        node_rank=node_rank,
        rdzv_endpoint=endpoint,
        local_addr=local_addr,
        threads=None if threads is None else parse_count(threads, language, field="threads"),
        backend=backend.strip().lower(),
        timeout=parse_duration(timeout, language, field="timeout"),
    )


@contextlib.contextmanager
def _as_given(**given: str | None) -> Iterator[None]:
    """The core's complaint about a value shown as the user wrote it (``'1e300s'``, not 1e+300)."""
    try:
        yield
    except MissingInput:
        raise
    except InvalidInput as exc:
        text = given.get(exc.field)
        if text is None:
            raise
        raise exc.as_given(exc.place, text if len(text) <= 80 else text[:79] + "…") from None


def _stopped(exc: Any) -> None:
    """Say that SIGTERM or SIGHUP ended the run (the core ended its processes; the exit status is 128 + N)."""
    print(f"dpscale: stopped by {exc.name}; every process of the run was ended", file=sys.stderr)


def _measure_module() -> Any:
    try:
        from dpscale.measure import launcher
    except ImportError as exc:
        raise MissingExtra("dpscale measure and probe", "measure") from exc
    return launcher


@app.command()
def measure(
    nproc: Annotated[str, typer.Option("--nproc", help="Ranks per node at each size: 1,2,4,8.")] = "1,2",
    workload: Annotated[str, typer.Option("--workload", "-w", help="mlp, cnn or transformer.")] = "mlp",
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
    """Measure throughput and efficiency of a synthetic DDP job at each size, with torchrun.

    dpscale measure --nproc 1,2 --workload mlp --params 4M --batch 32 --out runs.jsonl
    """
    import warnings

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from dpscale.cli.render import print_measurements
    from dpscale.parse import parse_device_list, parse_scaled_count

    launcher = _measure_module()
    language = _lang(lang)
    sizes = parse_device_list(nproc, language, field="nproc")
    given = {
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
    with _as_given(**given):
        base = _cluster(language, max(sizes), nnodes, node_rank, rdzv_endpoint, backend, timeout, local_addr, threads)
    options: dict[str, Any] = {
        "workload": workload.strip().lower(),
        "params": parse_scaled_count(params, language, field="params"),
        "batch": parse_count(batch, language, field="batch"),
        "steps": parse_count(steps, language, field="steps"),
        "warmup": parse_count(warmup, language, field="warmup", minimum=0),
        "repeats": parse_count(repeats, language, field="repeats"),
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
            with _as_given(**given):
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
    if as_json:
        print("\n".join(json.dumps(r, ensure_ascii=False) for r in found))
        return
    if not found:  # not node 0: the records are written there
        print(f"node {node_rank}: done; node 0 wrote the records", file=sys.stderr)
        return
    print_measurements(found, out, language)


@app.command()
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
) -> None:
    """All-reduce times over message sizes (like nccl-tests), and the α and β they imply.

    dpscale probe --nproc 2 --out network.json
    """
    from dpscale.cli.render import print_probe
    from dpscale.parse import parse_bytes

    launcher = _measure_module()
    language = _lang(lang)
    given = {"nproc": nproc, "max_bytes": max_bytes, "reps": reps, "timeout": timeout, "threads": threads}
    with _as_given(**given, backend=backend):
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
        with _as_given(**given):
            profile = launcher.probe(
                cluster,
                max_bytes=int(size) if size.is_integer() else size,
                reps=parse_count(reps, language, field="reps"),
                out=out,
            )
    except launcher.Terminated as exc:
        _stopped(exc)
        raise
    if as_json:
        _emit_json(profile)
        return
    if not profile:  # not node 0: the profile is written there
        print(f"node {node_rank}: done; node 0 wrote the profile", file=sys.stderr)
        return
    print_probe(profile, out, language)
