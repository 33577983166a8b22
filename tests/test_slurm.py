"""Slurm's host lists and srun's variables, read into torch.distributed's (dpscale.slurm)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpscale.errors import InvalidInput, MissingInput
from dpscale.slurm import MAX_HOSTS, SlurmStep, expand_nodelist
from tests.cli.test_cli import run


@pytest.mark.parametrize(
    ("text", "hosts"),
    [
        ("node1", ("node1",)),
        ("gpu[01-03,07],login2", ("gpu01", "gpu02", "gpu03", "gpu07", "login2")),
        ("n[08-10]", ("n08", "n09", "n10")),  # padding as the lower bound is written
        ("n[8-10]", ("n8", "n9", "n10")),
        ("r[1-2]n[1-2]", ("r1n1", "r1n2", "r2n1", "r2n2")),
        ("a[1-2]-ib,b", ("a1-ib", "a2-ib", "b")),
        ("10.0.0.[1-2]", ("10.0.0.1", "10.0.0.2")),
        (" gpu[1] ", ("gpu1",)),
    ],
)
def test_host_lists_expand_as_slurm_writes_them(text: str, hosts: tuple[str, ...]) -> None:
    assert expand_nodelist(text) == hosts


def test_the_largest_list_accepted_is_max_hosts() -> None:
    hosts = expand_nodelist(f"n[1-{MAX_HOSTS}]")
    assert len(hosts) == MAX_HOSTS
    assert hosts[-1] == f"n{MAX_HOSTS}"


@pytest.mark.parametrize(
    "text",
    [
        f"n[1-{MAX_HOSTS + 1}]",
        "n[0-999999999999999999]",  # a billion billion names: refused by counting, not by making them
        "a[1-60000]b[1-60000]",  # each range allowed, their product not
        "a[1-2]" * 20,  # 2**20 names from a short text
        ",".join(f"n[1-{MAX_HOSTS // 2}]" for _ in range(3)),  # entries past the bound together
        "n[1-3",
        "n1-3]",
        "n[[1-3]]",
        "n[3-1]",
        "n[x]",
        "n[1-]",
        "n[]",
        "a,,b",
        ",",
        "a b",
        "a;rm -rf",
        "",
        "   ",
        "n" * 70_000,
        "n[0-9999999999999999999999]",
    ],
)
def test_hostile_host_lists_are_refused(text: str) -> None:
    with pytest.raises(InvalidInput, match="a Slurm host list"):
        expand_nodelist(text)


def test_a_host_list_that_is_not_text_is_refused() -> None:
    with pytest.raises(InvalidInput, match="nodelist"):
        expand_nodelist(None)  # type: ignore[arg-type]


TASK = {
    "SLURM_STEP_ID": "0",
    "SLURM_PROCID": "13",
    "SLURM_NTASKS": "16",
    "SLURM_LOCALID": "5",
    "SLURM_NNODES": "2",
    "SLURM_NODEID": "1",
    "SLURM_STEP_NODELIST": "gpu[07-08]",
    "SLURM_JOB_NODELIST": "gpu[07-09]",
}


def test_a_task_of_srun_gets_torchruns_variables() -> None:
    step = SlurmStep.from_env(TASK)
    assert step is not None
    assert step.torch_env() == {
        "RANK": "13",
        "WORLD_SIZE": "16",
        "LOCAL_RANK": "5",
        "LOCAL_WORLD_SIZE": "8",
        "GROUP_RANK": "1",
        "MASTER_ADDR": "gpu07",
        "MASTER_PORT": "29500",
    }
    assert SlurmStep.from_env({**TASK, "MASTER_PORT": "41000"}).torch_env()["MASTER_PORT"] == "41000"  # type: ignore[union-attr]
    # The step's own list first; the job's (or SLURM_NODELIST) where srun set no other.
    without = {k: v for k, v in TASK.items() if k != "SLURM_STEP_NODELIST"}
    assert SlurmStep.from_env(without).hosts == ("gpu07", "gpu08")  # type: ignore[union-attr]


def test_outside_srun_slurm_is_not_read() -> None:
    # The batch script sees the job's variables but is one process on the first node.
    batch = {k: v for k, v in TASK.items() if k != "SLURM_STEP_ID"}
    assert SlurmStep.from_env(batch) is None
    assert SlurmStep.from_env({}) is None


@pytest.mark.parametrize(
    ("changes", "field", "expected"),
    [
        ({"SLURM_PROCID": "16"}, "SLURM_PROCID", "from 0 to 15"),
        ({"SLURM_PROCID": "-1"}, "SLURM_PROCID", "from 0 to 15"),
        ({"SLURM_PROCID": "1e3"}, "SLURM_PROCID", "a whole number"),
        ({"SLURM_NODEID": "2"}, "SLURM_NODEID", "from 0 to 1"),
        ({"SLURM_LOCALID": "8"}, "SLURM_LOCALID", "from 0 to 7"),
        ({"SLURM_NTASKS": "15"}, "SLURM_NTASKS", "as many tasks on every node"),
        ({"SLURM_NNODES": "0"}, "SLURM_NNODES", "from 1 to"),
        ({"SLURM_NNODES": "99999999999"}, "SLURM_NNODES", "a whole number"),
        ({"SLURM_STEP_NODELIST": "gpu07"}, "SLURM_STEP_NODELIST", "at least 2 hosts"),
        ({"SLURM_STEP_NODELIST": "gpu[0-9999999]"}, "SLURM_STEP_NODELIST", "a Slurm host list"),
        ({"MASTER_PORT": "70000"}, "MASTER_PORT", "from 1 to 65535"),
    ],
)
def test_variables_out_of_place_are_named(changes: dict[str, str], field: str, expected: str) -> None:
    with pytest.raises(InvalidInput) as error:
        SlurmStep.from_env({**TASK, **changes})
    assert error.value.field == field
    assert expected in str(error.value)


def test_missing_variables_are_named() -> None:
    bare = {k: v for k, v in TASK.items() if "NODELIST" not in k}
    with pytest.raises(MissingInput, match="SLURM_STEP_NODELIST"):
        SlurmStep.from_env(bare)
    with pytest.raises(MissingInput, match="SLURM_NNODES"):
        SlurmStep.from_env({k: v for k, v in TASK.items() if k != "SLURM_NNODES"})


def test_dpscale_runs_once_per_node() -> None:
    per_node = {**TASK, "SLURM_NTASKS": "2", "SLURM_PROCID": "1", "SLURM_LOCALID": "0"}
    assert SlurmStep.from_env(per_node).placement() == (2, 1, "gpu07:29500")  # type: ignore[union-attr]
    alone = {**per_node, "SLURM_NTASKS": "1", "SLURM_NNODES": "1", "SLURM_NODEID": "0", "SLURM_PROCID": "0"}
    assert SlurmStep.from_env(alone).placement() == (1, 0, None)  # type: ignore[union-attr]
    with pytest.raises(InvalidInput, match="one task per node"):
        SlurmStep.from_env(TASK).placement()  # type: ignore[union-attr]


# Inside `salloc -N1 -n2` (or `sbatch --ntasks=2` on one node), srun takes the allocation's two
# tasks and ignores --ntasks-per-node=1 given alone: the advice names what works there.
ONE_NODE_TWO_TASKS = {**TASK, "SLURM_NTASKS": "2", "SLURM_NNODES": "1", "SLURM_NODEID": "0", "SLURM_LOCALID": "1"}
ONE_NODE_TWO_TASKS["SLURM_PROCID"] = "1"


@pytest.mark.parametrize(
    ("env", "works", "where"),
    [
        (ONE_NODE_TWO_TASKS, "srun -n1 dpscale", "1 task on 1 node"),
        (TASK, "srun --ntasks=$SLURM_NNODES --ntasks-per-node=1 dpscale", "2 tasks on 2 nodes"),
    ],
)
def test_the_refusal_says_what_works_inside_an_allocation(env: dict[str, str], works: str, where: str) -> None:
    with pytest.raises(InvalidInput) as error:
        SlurmStep.from_env(env).placement()  # type: ignore[union-attr]
    assert error.value.field == "SLURM_NTASKS"
    assert works in str(error.value)
    assert where in str(error.value)
    assert "here 1" not in str(error.value)


@pytest.mark.parametrize(("env", "works"), [(TASK, "--ntasks=$SLURM_NNODES"), (ONE_NODE_TWO_TASKS, "srun -n1")])
def test_cli_under_srun_with_a_task_per_gpu_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, env: dict[str, str], works: str
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for command in ("probe", "measure"):
        code, printed, err = run(capsys, command)
        assert code == 2
        assert printed == ""
        assert err.count("\n") == 1
        assert "SLURM_NTASKS" in err
        assert "one task per node" in err
        assert works in err


@given(st.text(alphabet="ab01-9[],. x", max_size=60))
def test_any_text_expands_or_is_refused_within_bounds(text: str) -> None:
    try:
        hosts = expand_nodelist(text)
    except InvalidInput:
        return
    assert 1 <= len(hosts) <= MAX_HOSTS
    assert all(host and "[" not in host and "," not in host for host in hosts)
