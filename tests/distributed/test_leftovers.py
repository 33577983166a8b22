"""The run folder of a launcher killed outright (SIGKILL) before any worker started: removed by the next run.

Workers remove their run's folder when they find the launcher gone; killed in its first second,
the launcher leaves no worker to do it. Its lock on the folder's marker dies with it, and the
next run removes such folders, never one whose launcher runs, nor a folder it did not make.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dpscale.measure import _lifeline

BIN = Path(sys.executable).parent
CLAIM = (  # a launcher's part: the folder marked as its own, then nothing until it is killed
    "import sys, time; from pathlib import Path; from dpscale.measure._lifeline import owned\n"
    "with owned(Path(sys.argv[1])):\n"
    "    print('owned', flush=True); time.sleep(600)\n"
)

needs_flock = pytest.mark.skipif(not hasattr(os, "getuid"), reason="flock and user ids: POSIX only")


def claimed(folder: Path) -> subprocess.Popen[str]:
    """A process that holds ``folder`` as a launcher does, once it has said so."""
    folder.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", CLAIM, str(folder)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "owned\n"
    return proc


def killed(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)


@needs_flock
def test_only_folders_whose_launcher_is_gone_are_removed(tmp_path: Path) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    dead, live = temp / "dpscale-dead", temp / "dpscale-live"
    dying, living = claimed(dead), claimed(live)
    (dead / "status").mkdir()
    (dead / "status" / "pid-0").write_text("123", encoding="utf-8")
    killed(dying)
    unmarked = temp / "dpscale-explain-upload"  # a folder of dpscale's, but not a launcher's: no marker
    unmarked.mkdir()
    elsewhere = tmp_path / "dpscale-elsewhere"  # a launcher's, dead, outside: reached through a link only
    killed(claimed(elsewhere))
    (temp / "dpscale-link").symlink_to(elsewhere)
    other = temp / "mine-dead"  # not named as a run's folder
    killed(claimed(other))
    try:
        assert _lifeline.remove_leftovers(temp) == [dead]
        assert sorted(p.name for p in temp.iterdir()) == [
            "dpscale-explain-upload",
            "dpscale-link",
            "dpscale-live",
            "mine-dead",
        ]
        assert (live / _lifeline.OWNER).exists()
        assert (elsewhere / _lifeline.OWNER).exists()
    finally:
        killed(living)
    assert _lifeline.remove_leftovers(temp) == [live]  # once its launcher is gone


@needs_flock
def test_the_owner_file_takes_its_name_locked(tmp_path: Path) -> None:
    # Never found unlocked while its launcher lives: a run starting beside it would remove it.
    folder = tmp_path / "dpscale-x"
    folder.mkdir()
    with _lifeline.owned(folder):
        assert [p.name for p in folder.iterdir()] == [_lifeline.OWNER]
        assert _lifeline.remove_leftovers(tmp_path) == []
    assert _lifeline.remove_leftovers(tmp_path) == [folder]


@pytest.mark.distributed
@needs_flock
@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="reads the process table in /proc")
def test_a_launcher_killed_in_its_first_second_leaves_nothing_once_the_next_run_ends(tmp_path: Path) -> None:
    temp = tmp_path / "temp"  # the runs' folders go here (TMPDIR)
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    out = tmp_path / "runs.jsonl"
    quick = ["--params", "200k", "--steps", "3", "--warmup", "1", "--repeats", "1", "--threads", "1"]
    first = subprocess.Popen(
        [str(BIN / "dpscale"), "measure", "--nproc", "2", *quick, "--out", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        deadline = time.monotonic() + 120
        while not list(temp.glob(f"dpscale-*/{_lifeline.OWNER}")) and first.poll() is None:
            assert time.monotonic() < deadline, "the run never made its folder"
            time.sleep(0.005)
        first.send_signal(signal.SIGKILL)  # as soon as its folder is there: before any worker runs
    finally:
        if first.poll() is None:
            first.kill()
        first.wait(timeout=60)
    left = list(temp.glob("dpscale-*"))  # usually left; a worker that started in time removes it itself
    live = temp / "dpscale-live"
    holder = claimed(live)
    try:
        done = subprocess.run(
            [str(BIN / "dpscale"), "measure", "--nproc", "1", *quick, "--out", str(out)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        deadline = time.monotonic() + 30  # a worker of the first run may still be leaving
        while [p for p in temp.glob("dpscale-*") if p != live] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert list(temp.glob("dpscale-*")) == [live], left
    finally:
        killed(holder)
