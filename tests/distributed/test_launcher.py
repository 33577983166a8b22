"""The launcher's diagnosis, without starting a rank: a failed run told from torchrun's log in clean sentences."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpscale.measure import launcher

pytestmark = pytest.mark.distributed

# torchrun's log when rank 1 exits with status 3 at its second step (torch 2.13, trimmed).
CRASH = """\
[rank0]: Traceback (most recent call last):
[rank0]:   File "<frozen runpy>", line 198, in _run_module_as_main
[rank0]:     loss_fn(net(x), y).backward()
[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:537] Read error \
[127.0.0.1]:44265: Connection reset by peer. This is typically caused by a remote worker hanging or bugs in the \
application. Check the logs of the remote worker before reporting an error. GLHF!
W1203 17:51:07.811000 5927 torch/distributed/elastic/multiprocessing/api.py:1028] Sending process 5931 closing \
signal SIGTERM
E1203 17:51:07.876000 5927 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: 3) local_rank: 1 \
(pid: 5932) of binary: /usr/bin/python
Traceback (most recent call last):
  File "/usr/lib/python3.11/site-packages/torch/distributed/launcher/api.py", line 383, in launch_agent
    raise ChildFailedError(
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
dpscale.measure.worker FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2026-12-03_17:51:07
  host      : localhost
  rank      : 0 (local_rank: 0)
  exitcode  : -15 (pid: 5931)  (SIGTERM)
  error_file: <N/A>
  traceback : Signal 15 (SIGTERM) received by PID 5931
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-12-03_17:51:07
  host      : localhost
  rank      : 1 (local_rank: 1)
  exitcode  : 3 (pid: 5932)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================
"""

TORCHRUN_NOISE = ("error_file", "<N/A>", "https://", "Traceback", "traceback", "ChildFailedError", "pair.cc", "GLHF")


def _log(tmp_path: Path, text: str, joined: tuple[int, ...] = (0, 1)) -> tuple[Path, Path]:
    status = tmp_path / "status"
    status.mkdir()
    for rank in joined:
        (status / f"joined-{rank}").write_text("0")
    log = tmp_path / "torchrun.log"
    log.write_text(text)
    return status, log


def test_a_crash_is_told_in_clean_sentences_root_cause_first(tmp_path: Path) -> None:
    status, log = _log(tmp_path, CRASH)
    message = launcher._diagnose("train", status, 2, log, 1, False, 20)
    assert message == (
        "train on 2 ranks did not complete: rank 1 exited with status 3; rank 0 was then stopped by torchrun"
    )


def test_the_exception_a_rank_raised_is_its_cause(tmp_path: Path) -> None:
    raised = CRASH.replace("[rank0]: RuntimeError", "[rank1]: ValueError: the batch is empty. More words.\n[rank0]: X")
    status, log = _log(tmp_path, raised)
    message = launcher._diagnose("train", status, 2, log, 1, False, 20)
    assert "rank 1 exited with status 3 (ValueError: the batch is empty)" in message
    assert not any(noise in message for noise in TORCHRUN_NOISE), message


def test_a_hung_rank_is_named_before_the_one_that_waited_for_it(tmp_path: Path) -> None:
    hung = (
        CRASH.replace("Read error [127.0.0.1]:44265: Connection reset by peer", "Timed out waiting 5000ms for recv")
        .replace("rank      : 0 (local_rank: 0)", "rank      : X")
        .replace("rank      : 1 (local_rank: 1)", "rank      : 0 (local_rank: 0)")
        .replace("rank      : X", "rank      : 1 (local_rank: 1)")
        .replace("exitcode  : 3 (pid: 5932)", "exitcode  : 1 (pid: 5932)")
    )
    status, log = _log(tmp_path, hung)
    message = launcher._diagnose("train", status, 2, log, 1, False, 5)
    assert message == (
        "train on 2 ranks did not complete: rank 1 stopped responding and was ended (SIGTERM); "
        "rank 0 exited with status 1 (timed out waiting for the others)"
    )


def test_a_rank_that_never_joined_is_not_said_to_have_been_stopped(tmp_path: Path) -> None:
    absent = (
        CRASH.replace("[rank0]: RuntimeError: [/__w", "torch.distributed.DistStoreError: wait timeout after 5000ms\n[")
        .replace("rank      : 0 (local_rank: 0)", "rank      : X")
        .replace("rank      : 1 (local_rank: 1)", "rank      : 0 (local_rank: 0)")
        .replace("rank      : X", "rank      : 1 (local_rank: 1)")
        .replace("exitcode  : 3 (pid: 5932)", "exitcode  : 1 (pid: 5932)")
    )
    status, log = _log(tmp_path, absent, joined=(0,))
    message = launcher._diagnose("train", status, 2, log, 1, False, 5)
    assert message == (
        "train on 2 ranks did not complete: rank 0 exited with status 1 (timed out waiting for the others); "
        "rank 1 never joined"
    )


def test_torchrun_failing_alone_is_told_by_its_exception(tmp_path: Path) -> None:
    text = (
        "Traceback (most recent call last):\n  File x\ntorch.distributed.elastic.rendezvous.RendezvousTimeoutError:\n"
    )
    status, log = _log(tmp_path, text, joined=())
    message = launcher._diagnose("probe", status, 2, log, 1, False, 5)
    assert message == (
        "probe on 2 ranks did not complete: no rank joined the process group (rendezvous did not form); "
        "torchrun exited with status 1 (RendezvousTimeoutError)"
    )
