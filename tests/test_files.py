"""Measurement files and network profiles from users: bounded reads, and one clear error for anything else."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dpscale import _files
from dpscale.errors import InvalidInput, show_value
from dpscale.fit import read_points
from dpscale.parse import number_reader
from dpscale.predict.presets import from_profile
from tests.cli.test_cli import SCRIPT, run

MiB = 2**20
SHORT = 300  # characters: an error about a file's content echoes a few dozen of them, never the file


class Endless(io.RawIOBase):
    """A stream that never ends (a pipe, a device), counting the bytes taken from it."""

    def __init__(self, byte: bytes) -> None:
        self.byte = byte
        self.taken = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        size = len(buffer)
        buffer[:size] = self.byte * size
        self.taken += size
        return size


def refused(read: Callable[[], object]) -> InvalidInput:
    with pytest.raises(InvalidInput) as caught:
        read()
    assert len(str(caught.value)) < SHORT, str(caught.value)[:SHORT]
    return caught.value


def peak_memory(read: Callable[[], object]) -> int:
    """The most memory Python held while ``read`` ran (it must raise InvalidInput)."""
    tracemalloc.start()
    try:
        with pytest.raises(InvalidInput):
            read()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("byte", [b"1", b"\x00", b"\n"])
def test_an_endless_stream_is_refused_after_a_bounded_read(byte: bytes) -> None:
    # One line that never ends, NULs (/dev/zero) or blank lines without end: each is refused
    # having read no more than a line's bound and a buffer or two.
    raw = Endless(byte)
    stream = io.TextIOWrapper(io.BufferedReader(raw), encoding="utf-8", errors="surrogateescape")
    refused(lambda: list(_files.lines(stream, "pipe")))
    assert raw.taken <= max(_files.MAX_LINE, _files.MAX_LINES) + 64 * 1024


def test_a_50_mib_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "runs.csv"
    with big.open("wb") as f:
        f.truncate(50 * MiB)  # sparse: 50 MiB of NULs that take no disk
    err = refused(lambda: read_points(big))
    assert err.field == "file"
    assert "at most 8 MiB" in str(err)
    assert peak_memory(lambda: read_points(big)) < MiB


def test_one_endless_line_is_refused_without_reading_the_file(tmp_path: Path) -> None:
    long = tmp_path / "runs.csv"
    long.write_bytes(b"devices,throughput\n1," + b"9" * (4 * MiB))  # under the size bound, one line
    err = refused(lambda: read_points(long))
    assert err.field == f"{long}, line 2"
    assert f"lines of at most {_files.MAX_LINE} characters" in str(err)
    assert peak_memory(lambda: read_points(long)) < MiB


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_dev_zero_is_refused_at_its_first_line() -> None:
    err = refused(lambda: read_points("/dev/zero"))
    assert err.field == "/dev/zero, line 1"
    assert "not binary data" in str(err)
    assert peak_memory(lambda: read_points("/dev/zero")) < MiB


@pytest.mark.parametrize(
    ("content", "field", "accepted"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "line 1", "UTF-8 text (a byte that is not UTF-8 at column 1)"),
        (b"devices,throughput\n1,2\n2,3\xe9\n", "line 3", "not UTF-8 at column 4"),
        (b"devices,throughput\n1,2\x00\n", "line 2", "not binary data (a NUL byte at column 4)"),
        (b"devices,throughput\n" + b"1,2\n" * 10_001, "line 10002", "at most 10000 measurements"),
        (b"devices,throughput\n1,2\n2,3\n" + b"\n" * 100_000, "line 100001", "100000 lines"),
        (b"x" * 5000 + b"\n", "line 1", "found xxxxxxxx"),  # not a measurement file: refused at its first line
    ],
)
def test_what_is_not_a_measurement_file_is_refused_naming_the_line(
    tmp_path: Path, content: bytes, field: str, accepted: str
) -> None:
    path = tmp_path / "runs.csv"
    path.write_bytes(content)
    err = refused(lambda: read_points(path))
    assert err.field == f"{path}, {field}"
    assert accepted in str(err)


@pytest.mark.parametrize(
    ("line", "accepted"),
    [
        ('{"devices": ' + "[" * 50_000, "nested too deeply"),  # RecursionError in json.loads
        ('{"a": 1, "b": ' + '{"c": ' * 2_000, "nested too deeply"),
        ('{"devices": ' + "1" * 5_000 + ', "throughput": 5}', "a number with too many digits"),  # int limit
        ('{"devices": ' + "[" * 100_000, f"lines of at most {_files.MAX_LINE} characters"),
        ('{"devices": 1, "throughput": 5,}', "at column 32"),
    ],
)
def test_json_lines_that_python_cannot_decode_name_the_file_and_line(line: str, accepted: str) -> None:
    text = '{"devices": 1, "throughput": 5}\n' + line + "\n"
    err = refused(lambda: read_points("runs.jsonl", text=text))
    assert err.field == "runs.jsonl, line 2"
    assert accepted in str(err)


@pytest.mark.parametrize(
    ("record", "column", "shown"),
    [
        ('{"devices": true, "throughput": 5}', "devices", "true"),
        ('{"devices": 2, "throughput": false}', "throughput", "false"),
        ('{"devices": 2, "throughput": ' + "1" * 400 + "}", "throughput", "1111"),  # past float's range
        ('{"devices": ' + "2" * 400 + ', "throughput": 5}', "devices", "2222"),
        ('{"devices": [[[1]]], "throughput": 5}', "devices", "[[[1]]]"),
    ],
)
def test_json_values_that_are_not_numbers_are_refused(record: str, column: str, shown: str) -> None:
    text = '{"devices": 1, "throughput": 5}\n' + record
    err = refused(lambda: read_points("runs.jsonl", text=text))
    assert err.field == f"runs.jsonl, line 2, column {column}"
    assert shown in str(err.value)


@pytest.mark.parametrize(
    "text",
    [
        "devices,throughput\n1," + "9" * 60_000,  # one long cell
        "devices,throughput\n1,2," + "x," * 30_000,  # too many cells
        ",".join(f"column{i}" for i in range(5000)),  # a header of 5000 columns
        ",".join(["devices", "throughput"] * 3000),  # every column repeated
        "{" + ", ".join(f'"key{i}": 1' for i in range(3000)) + "}",  # no devices among 3000 keys
    ],
)
def test_errors_echo_a_few_dozen_characters_of_a_long_line(text: str) -> None:
    err = refused(lambda: read_points("runs.csv", text=text))
    assert len(err.value) <= _files.SHOWN


def test_the_web_pages_pasted_text_is_read_by_the_same_bounded_reader() -> None:
    # dpscale.web.forms reads the /fit page's measurements with read_points(field, text=...).
    nested = '{"devices": ' + "[" * 2_000
    err = refused(lambda: read_points("measurements", text=nested, read_number=number_reader("fr")))
    assert err.field == "measurements, line 1"
    assert "nested too deeply" in err.localized("en")
    assert "moins profondément imbriqués" in err.localized("fr")
    err = refused(lambda: read_points("measurements", text="[" * 2_000, read_number=number_reader("en")))
    assert "a header with devices and throughput" in str(err)
    with pytest.raises(InvalidInput, match="at most 8 MiB"):
        read_points("measurements", text="1," * (4 * MiB + 1))


@pytest.mark.parametrize("source", [0, 1.5, None])
def test_a_source_that_is_not_a_path_is_refused(source: Any) -> None:
    err = refused(lambda: read_points(source))  # open(0) would have read standard input
    assert err.field == "file"


def test_spreadsheet_files_still_read() -> None:
    # A byte-order mark (Excel's "CSV UTF-8"), old Mac line ends and tabs between cells.
    for text in ("\ufeffdevices,throughput\r\n1,100\r\n2,190\r\n", "devices\tthroughput\r1\t100\r2\t190\r"):
        points = read_points("runs.csv", text=text)
        assert [(p.devices, p.throughput) for p in points] == [(1, 100.0), (2, 190.0)]


def test_a_quote_does_not_join_lines() -> None:
    # Each line is one row: a quoted cell across two lines was a ValueError from zip(strict=True).
    err = refused(lambda: read_points("runs.csv", text='devices,throughput\n1,"100\n"\n2,190\n'))
    assert err.field == "runs.csv, line 3"
    assert "2 cells" in str(err)


# --- network profiles (dpscale predict --network) ---------------------------------------------


def profile(tmp_path: Path, text: str) -> str:
    path = tmp_path / "network.json"
    path.write_text(text, encoding="utf-8")
    return str(path)


GOOD = {"intra": {"bandwidth": 1e11, "latency": 3e-6}, "devices_per_node": 4}


@pytest.mark.parametrize(
    ("text", "accepted"),
    [
        ("[" * 50_000, "nested too deeply"),
        ('{"devices_per_node": ' + "1" * 5000 + "}", "a number with too many digits"),
        ('{"intra": {"bandwidth": true, "latency": 1e-6}}', "bandwidth is 'true'"),
        ('{"intra": {"bandwidth": ' + "1" * 400 + ', "latency": 1e-6}}', "bandwidth is '1111"),
        ('{"intra": {"bandwidth": 1e9}}', "no latency"),
        ('{"intra": {"bandwidth": 1e9, "latency": 1e-6}, "devices_per_node": true}', "devices_per_node"),
        ('{"intra": {"bandwidth": 1e9,\n "latency": 1e-6,}}', "at line 2, column 18"),
        ("\x00" * 100, "not binary data"),
    ],
)
def test_bad_profiles_are_one_error_naming_the_file(tmp_path: Path, text: str, accepted: str) -> None:
    path = profile(tmp_path, text)
    err = refused(lambda: from_profile(path))
    assert (err.field, err.value) == ("network", path)
    assert accepted in str(err)


def test_a_profile_reads_and_a_huge_one_is_refused_unread(tmp_path: Path) -> None:
    intra, inter, per_node = from_profile(profile(tmp_path, json.dumps(GOOD)))
    assert (intra is not None and intra.bandwidth, inter, per_node) == (1e11, None, 4)
    huge = tmp_path / "huge.json"
    with huge.open("wb") as f:
        f.truncate(50 * MiB)
    err = refused(lambda: from_profile(str(huge)))
    assert "a file of at most 1 MiB" in str(err)
    assert peak_memory(lambda: from_profile(str(huge))) < MiB


def test_a_profile_link_out_of_range_names_the_file_and_tier(tmp_path: Path) -> None:
    path = profile(tmp_path, '{"inter": {"bandwidth": 0, "latency": 1e-6}}')
    err = refused(lambda: from_profile(path))
    assert err.field == f"{path}, inter bandwidth"


PREDICT = ["predict", "-d", "2", "-v", "1000", "-b", "16", "-p", "1M"]
PATHS = {  # every command option that reads a user's file, as the command line takes it
    "explain": ["explain"],
    "fit": ["fit"],
    "plan --fit": ["plan", "--work", "1e9", "-d", "8", "--fit"],
    "probe --import": ["probe", "--out", "OUT", "--import"],
    "predict --network": [*PREDICT, "--network"],
    "predict --from-trace": [*PREDICT, "--from-trace"],
    "predict --jitter-from": [*PREDICT, "--intra", "nvlink3", "--jitter-from"],
}


@contextlib.contextmanager
def unblocked_after(fifo: Path, seconds: float) -> Iterator[None]:
    """Opens ``fifo`` to write after ``seconds``, should a read of it still wait then: a test fails, never hangs."""
    rescue = threading.Timer(seconds, lambda: os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)))
    rescue.start()
    try:
        yield
    finally:
        rescue.cancel()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
@pytest.mark.parametrize("command", PATHS.values(), ids=PATHS.keys())
def test_a_pipe_no_program_writes_to_is_refused_not_waited_on(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, command: list[str]
) -> None:
    # mkfifo f; dpscale fit f: open() of a named pipe waits for a writer, for ever when none comes.
    monkeypatch.setattr(_files, "PIPE_WAIT", 0.2)
    fifo = tmp_path / "runs.csv"
    os.mkfifo(fifo)
    argv = [str(tmp_path / "n.json") if word == "OUT" else word for word in command]
    started = time.monotonic()
    with unblocked_after(fifo, 30):
        code, out, err = run(capsys, *argv, str(fifo))
    assert time.monotonic() - started < 20
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert "not a regular file" in err
    assert f"{show_value(str(fifo))};" in err  # named as any file is (its name kept whole)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
def test_the_command_itself_refuses_a_pipe_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "runs.csv"
    os.mkfifo(fifo)
    started = time.monotonic()
    done = subprocess.run([SCRIPT, "fit", str(fifo)], capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"error: file: got {show_value(str(fifo))}; expected a readable UTF-8 text file "
        f"(not a regular file: a pipe no program wrote to within {_files.PIPE_WAIT:g} s)\n"
    )
    assert time.monotonic() - started < _files.PIPE_WAIT + 30


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
@pytest.mark.parametrize("late", [0.05, 0.6])
def test_a_pipe_a_program_writes_to_is_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, late: float) -> None:
    # A program that opens it a moment later (cat runs.csv > fifo &), or holds it open and writes
    # after a while (<(ssh node cat runs.csv)): read, however long it takes to write.
    monkeypatch.setattr(_files, "PIPE_WAIT", 0.3)
    fifo = tmp_path / "runs.csv"
    os.mkfifo(fifo)
    opened = 0.0 if late > _files.PIPE_WAIT else late  # the slow one opens at once and writes late

    def write() -> None:
        time.sleep(opened)
        with fifo.open("w", encoding="utf-8") as f:
            time.sleep(late - opened)
            f.write("devices,throughput\n1,100\n2,190\n")

    writer = threading.Thread(target=write)
    writer.start()
    try:
        with unblocked_after(fifo, 30):
            assert [p.devices for p in read_points(fifo)] == [1, 2]
    finally:
        writer.join(timeout=30)


def test_a_folder_is_refused_where_a_file_is_expected(tmp_path: Path) -> None:
    err = refused(lambda: read_points(tmp_path))
    assert (err.field, err.value) == ("file", str(tmp_path))
    assert "(Is a directory)" in str(err)


def test_the_byte_taken_while_looking_for_a_writer_is_read_first() -> None:
    read, write = os.pipe()
    os.write(write, b"evices,throughput\n")
    os.close(write)
    raw = _files._GivenBack(b"d", io.FileIO(read, "rb"))
    with io.TextIOWrapper(io.BufferedReader(raw), encoding="utf-8") as stream:
        assert stream.read() == "devices,throughput\n"
