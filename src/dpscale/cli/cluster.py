"""Measuring a real cluster: ``dpscale measure`` and ``dpscale probe``, launched with torchrun (under srun too).

Their options are their definitions' (:mod:`dpscale.measure.clusterfields`), read and named in
errors as every calculator's are (:mod:`dpscale.cli.definitions`); here, what a run shows while
and after it runs: the progress bar, the warnings, which node printed what.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

from dpscale.calculators.measure import MEASURE, PROBE
from dpscale.cli.definitions import OUTPUT, build, command, named_as_options
from dpscale.cli.options import lang_of, respond
from dpscale.errors import MissingExtra
from dpscale.i18n import Lang
from dpscale.measure.clusterfields import ENVIRONMENT, ImportPlan

__all__ = ["register"]


def _environment() -> dict[str, Any]:
    """What the builds read besides the options: the environment, where srun says where they run."""
    import os

    return {ENVIRONMENT: os.environ}


def _stopped(exc: Any) -> None:
    """Say that SIGTERM or SIGHUP ended the run (the core ended its processes; the exit status is 128 + N)."""
    print(f"dpscale: stopped by {exc.name}; every process of the run was ended", file=sys.stderr)


def _and_prints(as_json: bool) -> str:
    """What node 0 does besides, for the other nodes to say (their standard output stays empty)."""
    return " and prints the JSON" if as_json else ""


def _measure_module() -> Any:
    """The launcher, once torch is known to be installed (the ``measure`` extra)."""
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        raise MissingExtra("dpscale measure and probe", "measure")
    from dpscale.measure import launcher

    return launcher


def _measure(given: dict[str, Any], *, as_json: bool, lang: str | None) -> None:
    import warnings

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    launcher = _measure_module()
    language = lang_of(lang)
    progress_console = Console(stderr=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)  # the plan's, where ranks outnumber the CPUs, said once run
        plan = build(MEASURE, given, language, context=_environment())
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            transient=True,
            console=progress_console,  # stdout carries the results (--json)
            disable=not progress_console.is_terminal,  # no bar in logs and pipes
        ) as bar:
            task = bar.add_task("measuring", total=plan.runs)
            try:
                with named_as_options(MEASURE, given):  # what only a run finds: a backend without its GPUs
                    found = launcher.run_measurement(plan, lambda done, total: bar.update(task, completed=done))
            except launcher.Terminated as exc:
                _stopped(exc)
                raise
    for warning in caught:
        print(f"warning: {warning.message}", file=sys.stderr)
    node_rank = plan.launch.node_rank
    if node_rank != 0:  # node 0 writes the records, and alone prints them: one document on stdout
        print(f"node {node_rank}: done; node 0 wrote the records{_and_prints(as_json)}", file=sys.stderr)
        return
    if as_json:
        print("\n".join(json.dumps(record.to_dict(), ensure_ascii=False) for record in found))
        return
    from dpscale.calculators.measure import present_measurements
    from dpscale.cli.render import print_shown

    print_shown(present_measurements(found, str(plan.out), language), language)


def _import_logs(paths: list[str], out: str, as_json: bool, language: Lang) -> None:
    """``probe --import``: nccl-tests' outputs read, fitted and written as a profile; no torch, no run."""
    from dpscale.calculators.measure import present_import
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
        present=lambda found, lang: present_import(found, out, lang),
    )


def _probe(given: dict[str, Any], *, as_json: bool, lang: str | None) -> None:
    from dpscale.calculators.measure import present_probe

    language = lang_of(lang)
    plan = build(PROBE, given, language, context=_environment())
    if isinstance(plan, ImportPlan):
        _import_logs(list(plan.paths), plan.out, as_json, language)
        return
    launcher = _measure_module()
    try:
        with named_as_options(PROBE, given):
            profile = launcher.run_probe(plan)
    except launcher.Terminated as exc:
        _stopped(exc)
        raise
    if profile is None:  # node 0 writes the profile, and alone prints it: one document on stdout
        node_rank = plan.launch.node_rank
        print(f"node {node_rank}: done; node 0 wrote the profile{_and_prints(as_json)}", file=sys.stderr)
        return
    out = str(plan.out)
    respond(
        profile,
        language,
        as_json=as_json,
        payload=lambda probed: probed.to_dict(),
        present=lambda probed, lang: present_probe(probed, out, lang),
    )


def register(app: typer.Typer) -> None:
    """Add ``dpscale measure`` and ``probe`` to ``app``."""
    measure = """Measure throughput and efficiency of a synthetic DDP or FSDP job at each size, with torchrun.

    dpscale measure --nproc 1,2 --workload mlp --params 4M --batch 32 --out runs.jsonl
    """
    app.command("measure")(command(MEASURE, _measure, OUTPUT, measure))
    probe = """All-reduce times over message sizes (like nccl-tests), and the α and β they imply.

    dpscale probe --nproc 2 --out network.json

    dpscale probe --import all_reduce_1node.txt --import all_reduce_4nodes.txt --out network.json
    """
    app.command("probe")(command(PROBE, _probe, OUTPUT, probe))
