"""The API's descriptions say what the API takes: no command-line option, and for a parameter the API takes as a
number, no text that only the command line and the pages read (90%, '2 000', 8B, 3us, 300GB/s)."""

from __future__ import annotations

import re
from typing import Any

from fastapi.testclient import TestClient

from dpscale.web.app import create_app

OPTION = re.compile(r"(?<![\w-])--[a-z]")  # --max-bubble, --fit: the command line's
TEXT_ONLY = re.compile(r"\d\s?%|'\d|\b\d+(?:\.\d+)?\s?(?:[kMBT]|us|ms|[GM]B/s|Gb/s)\b")  # read from text, not JSON


def _types(schema: dict[str, Any]) -> set[str]:
    found = {schema["type"]} if "type" in schema else set()
    for each in schema.get("anyOf", []):
        found |= _types(each)
    return found


def _described() -> list[tuple[str, set[str], str]]:
    spec = TestClient(create_app()).get("/openapi.json").json()
    out = []
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                name = f"{method.upper()} {path} {parameter['name']}"
                out.append((name, _types(parameter["schema"]), parameter.get("description", "")))
    for model, schema in spec["components"]["schemas"].items():
        for key, prop in schema.get("properties", {}).items():
            out.append((f"{model}.{key}", _types(prop), prop.get("description", "")))
    return out


def test_no_description_names_a_command_line_option() -> None:
    said = [(name, text) for name, _, text in _described() if OPTION.search(text)]
    assert said == []


def test_a_number_is_described_as_the_api_takes_it() -> None:
    numbers = [(name, text) for name, types, text in _described() if types and types <= {"number", "integer", "null"}]
    assert len(numbers) > 40  # every calculator's numeric parameters, in queries and bodies
    assert [(name, text) for name, text in numbers if TEXT_ONLY.search(text)] == []
    # the help of the command line, where it reads text, still shows its text forms
    from dpscale.calculators.scale import SCALING

    efficiency = next(item for item in SCALING.inputs if item.name == "efficiency")
    assert "90%" in efficiency.help
    assert efficiency.api.described is not None
    assert "90%" not in efficiency.api.described
