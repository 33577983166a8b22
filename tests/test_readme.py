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


@pytest.mark.parametrize(("command", "expected"), console_examples())
def test_console_example(command: str, expected: str) -> None:
    argv = shlex.split(command)
    assert argv[0] == "dpscale"
    env = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_ALL", "LANGUAGE", "LC_MESSAGES")}
    done = subprocess.run(
        [str(BIN / "dpscale"), *argv[1:]],
        capture_output=True,
        text=True,
        env={**env, "COLUMNS": "100"},
        timeout=60,
        check=False,
    )
    printed = [line.rstrip() for line in (done.stdout + done.stderr).splitlines()]
    shown = [line.rstrip() for line in expected.splitlines()]
    while printed and not printed[-1]:  # Rich pads a table with a blank last line
        printed.pop()
    while shown and not shown[-1]:
        shown.pop()
    assert printed == shown


def test_console_examples_were_found() -> None:
    assert len(console_examples()) >= 5


def test_python_examples() -> None:
    failures, tried = doctest.testfile(str(README), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert tried >= 5
    assert failures == 0
