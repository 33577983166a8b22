"""The README's examples are run and must print what the README shows."""

from __future__ import annotations

import doctest
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from dpscale.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"
BIN = Path(sys.executable).parent


def console_examples() -> list[tuple[str, str]]:
    examples = []
    for block in re.findall(r"```console\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S):
        command, output = None, []
        for line in block.splitlines():
            if line.startswith("$ "):
                if command is not None:
                    examples.append((command, "\n".join(output)))
                command, output = line[2:], []
            else:
                output.append(line)
        if command is not None:
            examples.append((command, "\n".join(output)))
    return examples


def test_readme_opens_with_the_two_commands() -> None:
    head = README.read_text(encoding="utf-8")[:400]
    assert "make run" in head
    assert "make test" in head


def _lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:  # Rich pads a table with a blank last line
        lines.pop()
    return lines


@pytest.mark.parametrize(("command", "expected"), console_examples())
def test_console_example(
    command: str, expected: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each example, run in this process by the command line's own entry point (as `dpscale` runs it)."""
    argv = shlex.split(command)
    assert argv[0] == "dpscale"
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit):
        main(argv[1:])
    printed = capsys.readouterr()
    assert _lines(printed.out + printed.err) == _lines(expected)


def test_the_first_console_example_as_its_own_process() -> None:
    """The installed `dpscale` script prints the same as the examples run in this process."""
    command, expected = console_examples()[0]
    env = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_ALL", "LANGUAGE", "LC_MESSAGES")}
    done = subprocess.run(
        [str(BIN / "dpscale"), *shlex.split(command)[1:]],
        capture_output=True,
        text=True,
        env={**env, "COLUMNS": "100"},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert _lines(done.stdout + done.stderr) == _lines(expected)


def test_console_examples_were_found() -> None:
    assert len(console_examples()) >= 5


def test_python_examples() -> None:
    failures, tried = doctest.testfile(str(README), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert tried >= 5
    assert failures == 0
