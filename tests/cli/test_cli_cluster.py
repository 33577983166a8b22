"""``dpscale measure`` and ``probe`` read their options through their definitions, as the calculators do.

No rank runs here: what is checked is the help, the plans the definitions build (Slurm's placement
included, from an environment passed in) and the refusals made before any rank starts.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dpscale.cli.definitions import build
from dpscale.measure.clusterfields import ENVIRONMENT, MEASURE, PROBE, ImportPlan
from tests.cli.test_cli import run

SRUN = {  # srun's variables for node 1 of a two-node step, one task per node
    "SLURM_JOB_ID": "4242",
    "SLURM_STEP_ID": "0",
    "SLURM_PROCID": "1",
    "SLURM_NTASKS": "2",
    "SLURM_NNODES": "2",
    "SLURM_NODEID": "1",
    "SLURM_LOCALID": "0",
    "SLURM_JOB_NODELIST": "gpu[01-02]",
    "MASTER_PORT": "29555",
}


@pytest.fixture
def no_rank(monkeypatch: pytest.MonkeyPatch) -> None:
    from dpscale.measure import supervise

    def started(*args: object) -> None:
        raise AssertionError("a rank was started")

    monkeypatch.setattr(supervise, "run", started)


def test_the_help_says_each_option_its_short_form_and_default(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "measure", "--help")
    assert code == 0
    out = " ".join(out.split())  # as wrapped at any width
    for said in ("-w, --workload", "-p, --params", "-b, --batch", "-r, --repeats", "-o, --out"):
        assert said in out
    for default in ("[default: 1,2]", "[default: 4M]", "[default: 120s]", "[default: runs.jsonl]"):
        assert default in out
    code, out, _ = run(capsys, "probe", "--help")
    assert code == 0
    out = " ".join(out.split())
    assert "[default: 64MiB]" in out
    assert "--import" in out


def test_the_definitions_are_the_command_lines_only() -> None:
    for definition in (MEASURE, PROBE):
        assert definition.on("page") == definition.on("api") == ()
        assert definition.on("cli") == definition.inputs


def test_the_workloads_are_those_the_runs_know() -> None:
    pytest.importorskip("torch")
    from dpscale.measure.workloads import KINDS

    item = MEASURE.get("workload")
    assert item is not None
    assert item.choices == tuple(KINDS)


def test_the_definitions_load_no_torch() -> None:
    probe = "import sys, dpscale.measure.clusterfields, dpscale.cli.cluster; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


def test_measure_builds_its_plan(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = str(tmp_path / "runs.jsonl")
    given = {"nproc": "2,1", "warmup": "0", "params": "200k", "threads": "1", "backend": " Gloo", "out": out}
    plan = build(MEASURE, given, "en", context={ENVIRONMENT: {}})
    assert plan.sizes == (1, 2)
    assert (plan.warmup, plan.params, plan.batch, plan.steps, plan.repeats) == (0, 2e5, 32, 20, 3)
    assert (plan.workload, plan.sharding, plan.out) == ("mlp", "ddp", out)
    assert (plan.launch.backend, plan.launch.timeout, plan.launch.threads) == ("gloo", 120.0, 1)
    assert (plan.launch.nnodes, plan.launch.node_rank, plan.launch.rdzv_endpoint) == (1, 0, None)


def test_inside_srun_the_nodes_come_from_slurm_unless_given(tmp_path: Path) -> None:
    given = {"nproc": "1", "threads": "1", "out": str(tmp_path / "network.json")}
    plan = build(PROBE, given, "en", context={ENVIRONMENT: SRUN})
    launch = plan.launch
    assert (launch.nnodes, launch.node_rank, launch.rdzv_endpoint) == (2, 1, "gpu01:29555")
    assert plan.out is None  # node 0 writes the profile
    mine = build(PROBE, {**given, "rdzv_endpoint": "10.0.0.1:29500", "nnodes": "2"}, "en", context={ENVIRONMENT: SRUN})
    assert (mine.launch.nnodes, mine.launch.node_rank, mine.launch.rdzv_endpoint) == (2, 0, "10.0.0.1:29500")


def test_probe_import_reads_no_cluster_option(tmp_path: Path) -> None:
    given = {"imports": ["a.txt", "b.txt"], "out": str(tmp_path / "p.json")}
    plan = build(PROBE, given, "en", context={ENVIRONMENT: SRUN})
    assert plan == ImportPlan(("a.txt", "b.txt"), str(tmp_path / "p.json"))


@pytest.mark.usefixtures("no_rank")
@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["measure", "--nnodes", "x"], "nnodes: got 'x'; expected a number written in English"),
        (["measure", "--nnodes", "1.5"], "nnodes: got '1.5'; expected a whole number of at least 1"),
        (["measure", "--node-rank", "-1"], "node_rank: got '-1'; expected a whole number of at least 0"),
        (
            ["measure", "--nnodes", "2", "--node-rank", "2", "--rdzv-endpoint", "10.0.0.1:29500"],
            "node_rank: got '2'; expected a rank from 0 to 1",
        ),
        (["measure", "--warmup", "-1"], "warmup: got '-1'; expected a whole number of at least 0"),
        (["measure", "--workload", "resnet"], "workload: got 'resnet'; expected one of mlp, cnn, transformer"),
        (["measure", "--backend", "MPI"], "backend: got 'MPI'; expected auto, gloo or nccl"),
        (["measure", "--nnodes", "2"], "rdzv_endpoint: missing; expected host:port of node 0, with --nnodes above 1"),
        (["probe", "--max-bytes", "8GiB"], "max_bytes: got '8GiB'; expected from 8 bytes to 1024 MiB"),
        (["probe", "--nproc", "1"], "nproc: got '1'; expected at least 2 ranks in all"),
        (["measure", "--lang", "fr", "--nproc", "0"], "nproc : reçu '0' ; attendu un nombre entier d'au moins 1"),
    ],
)
def test_bad_input_is_one_line_naming_the_option(
    capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {said}")
    assert err.count("\n") == 1


def test_an_srun_step_out_of_place_is_named_by_its_variable(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {**SRUN, "SLURM_NTASKS": "4"}.items():
        monkeypatch.setenv(name, value)
    code, _, err = run(capsys, "probe", "--nproc", "2")
    assert code == 2
    assert err.startswith("error: SLURM_NTASKS: got 4; expected one task per node")
