"""The CPUs a measurement may use (dpscale.measure.cpus): affinity and cgroup quotas, as srun and containers set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dpscale.measure.cpus import usable_cpus

AFFINITY = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
needs_two = pytest.mark.skipif(len(AFFINITY) < 2, reason="narrowing the affinity needs two CPUs to start from")

# A child whose affinity is narrowed to one CPU, as `srun -c1 --cpu-bind=cores` or `taskset -c 0` leave it.
CHILD = """
import json, os, sys, warnings
os.sched_setaffinity(0, {int(sys.argv[1])})
from dpscale.measure.cpus import usable_cpus
from dpscale.measure.launch import Launch
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    settled = Launch(nproc_per_node=2).settled()
print(json.dumps({
    "cpus": usable_cpus(),
    "one_rank": Launch(nproc_per_node=1).threads_per_rank(),
    "two_ranks": settled.threads,
    "warned": [str(w.message) for w in caught],
}))
"""


@needs_two
def test_a_narrowed_affinity_is_what_a_rank_gets() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(AFFINITY[0])], capture_output=True, text=True, check=True, timeout=60
    )
    seen = json.loads(done.stdout)
    assert seen["cpus"] == 1
    assert seen["one_rank"] == 1  # os.cpu_count() would give it every CPU of the machine
    assert seen["two_ranks"] == 1
    assert len(seen["warned"]) == 1
    assert "2 ranks of 1 thread on the 1 CPU this process may use" in seen["warned"][0]
    assert "ranks share cores" in seen["warned"][0]


def test_ranks_within_the_cpus_are_not_warned_about(recwarn: pytest.WarningsRecorder) -> None:
    from dpscale.measure.launch import Launch

    settled = Launch(nproc_per_node=1).settled()
    assert settled.threads == usable_cpus()
    assert len(recwarn) == 0


def test_threads_given_that_outnumber_the_cpus_are_warned_about() -> None:
    from dpscale.measure.launch import Launch

    many = usable_cpus() + 1
    with pytest.warns(RuntimeWarning, match=f"1 rank of {many} threads on .*: its threads share cores"):
        assert Launch(threads=many).settled().threads == many


def fake_root(tmp_path: Path, cgroup: str, mounts: list[str], files: dict[str, str]) -> Path:
    """A /proc/self and cgroup mounts under ``tmp_path``, as the kernel writes them."""
    (tmp_path / "proc/self").mkdir(parents=True)
    (tmp_path / "proc/self/cgroup").write_text(cgroup, encoding="utf-8")
    (tmp_path / "proc/self/mountinfo").write_text("\n".join(mounts) + "\n", encoding="utf-8")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


V2_MOUNT = "41 31 0:38 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate"
V1_MOUNT = "32 31 0:29 {inside} /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct"
JOB = "system.slice/slurmstepd.scope/job_42/step_0/user/task_0"


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        ({JOB: "max 100000"}, None),  # no quota: the affinity
        ({JOB: "100000 100000"}, 1),
        ({JOB: "150000 100000"}, 1),  # 1.5 CPUs' time: a second thread would be throttled
        ({JOB: "50000 100000"}, 1),  # at least one
        ({JOB: "max 100000", "system.slice/slurmstepd.scope/job_42": "100000 100000"}, 1),  # the job's, above
        ({JOB: "garbage", "system.slice": "-5 0"}, None),  # not as the kernel writes it: no limit
    ],
)
def test_a_cgroup_v2_quota_counts_where_it_is_set(tmp_path: Path, limits: dict[str, str], expected: int | None) -> None:
    files = {f"sys/fs/cgroup/{folder}/cpu.max": text for folder, text in limits.items()}
    root = fake_root(tmp_path, f"0::/{JOB}\n", [V2_MOUNT], files)
    assert usable_cpus(root) == (len(AFFINITY) if expected is None else min(expected, len(AFFINITY)))


@pytest.mark.parametrize(
    ("inside", "own", "quota", "expected"),
    [
        ("/", "/docker/abc", "100000", 1),  # the host's view: the process's folder under the mount
        ("/docker/abc", "/docker/abc", "100000", 1),  # a container's: the mount is its own folder
        ("/", "/docker/abc", "-1", None),  # -1: no limit
    ],
)
def test_a_cgroup_v1_quota_counts_where_it_is_set(
    tmp_path: Path, inside: str, own: str, quota: str, expected: int | None
) -> None:
    folder = "sys/fs/cgroup/cpu,cpuacct" + ("/docker/abc" if inside == "/" else "")
    files = {f"{folder}/cpu.cfs_quota_us": quota, f"{folder}/cpu.cfs_period_us": "100000"}
    cgroup = f"4:memory:{own}\n3:cpu,cpuacct:{own}\n0::/\n"
    root = fake_root(tmp_path, cgroup, [V1_MOUNT.format(inside=inside)], files)
    assert usable_cpus(root) == (len(AFFINITY) if expected is None else min(expected, len(AFFINITY)))


def test_without_proc_the_affinity_alone_counts(tmp_path: Path) -> None:
    assert usable_cpus(tmp_path) == len(AFFINITY)


@needs_two
def test_measure_pinned_to_one_cpu_says_so_and_records_it(tmp_path: Path) -> None:
    # `srun -c1 --cpu-bind=cores dpscale measure --nproc 1,2`: both ranks on the one CPU given.
    out = tmp_path / "runs.jsonl"
    argv = [sys.executable, "-m", "dpscale", "measure", "--nproc", "1,2", "--params", "200k", "--steps", "2"]
    argv += ["--warmup", "0", "--repeats", "1", "--backend", "gloo", "--out", str(out), "--json"]
    done = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        preexec_fn=lambda: os.sched_setaffinity(0, {AFFINITY[0]}),
    )
    assert done.returncode == 0, done.stderr
    assert "warning: 2 ranks of 1 thread on the 1 CPU this process may use" in done.stderr
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [json.loads(line) for line in done.stdout.splitlines()] == written
    assert [(r["devices"], r["threads_per_rank"], r["cpus_usable"]) for r in written] == [(1, 1, 1), (2, 1, 1)]
