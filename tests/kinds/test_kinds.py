"""Each kind of input (dpscale.kinds) says everything the edges do with it, and says it once.

The tests walk :data:`~dpscale.kinds.KINDS`: each kind reads a text in French and in English and
writes the value back so that it reads the same (the page's language switch), has a widget the
page draws and a schema the API publishes. A new kind is held to all of it by being listed there.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Annotated, Any, get_args

import pytest
from fastapi import FastAPI, Query
from fastapi.testclient import TestClient
from pydantic import Field

from dpscale.calculators.bubble import PIPELINE
from dpscale.calculators.effective_batch import BATCH
from dpscale.calculators.plan import PLAN
from dpscale.calculators.scale import SCALING
from dpscale.i18n import Lang
from dpscale.inputs import Definition, Input, KindName, Page
from dpscale.kinds import KINDS, Kind, kind_of
from dpscale.predict.definition import PREDICT
from dpscale.web.app import create_app
from dpscale.web.forms import CALCULATORS
from dpscale.web.security import MAX_SIZES

LOG = (Path(__file__).parents[1] / "data" / "nccl" / "all_reduce_1node.txt").read_text(encoding="utf-8")
FILES = Path(__file__).parent / "data"  # what the command line's files hold: a run's traces, a profile, records
TRACES, PROFILE, RECORDS = (str(FILES / name) for name in ("traces", "network.json", "runs.jsonl"))

# A text of each kind as French and English write it, and the input it is read for.
TYPED: dict[str, tuple[str, str, Input]] = {
    "count": ("1 024", "1,024", Input("x", "count", "")),
    "number": ("2 000,5", "2,000.5", Input("x", "number", "")),
    "fraction": ("90 %", "90%", Input("x", "fraction", "")),
    "variation": ("2 %", "2%", Input("x", "variation", "")),
    "scaled_count": ("25,6M", "25.6M", Input("x", "scaled_count", "")),
    "bytes": ("80 Go", "80 GB", Input("x", "bytes", "")),
    "bandwidth": ("12,5 Go/s", "100Gb/s", Input("x", "bandwidth", "")),
    "seconds": ("5 µs", "0.3 ms", Input("x", "seconds", "")),
    "duration": ("1,5 j", "90 min", Input("x", "duration", "")),
    "device_list": ("8,16,64", "1..1024", Input("x", "device_list", "")),
    "choice": ("FSDP", "ddp", Input("x", "choice", "", choices=("ddp", "fsdp"))),
    "switch": ("oui", "off", Input("x", "switch", "", page=Page(choice_labels=("on", "off")))),
    "text": ("échantillons/s", "samples/s", Input("x", "text", "")),
    "model_names": ("amdahl, usl", "auto", Input("x", "model_names", "")),
    "path": ("mesures.csv", "runs.csv", Input("x", "path", "")),
    "reference": ("8:7 500 ; 64:52 000", "8:7,500; 64:52000", Input("x", "reference", "")),
    "measurements": (
        "appareils;débit\n1;367,29\n4;1 449,48",
        "1,367.29\n4,1449.48",
        Input("x", "measurements", ""),
    ),
    "nccltests": (LOG, LOG, Input("x", "nccltests", "")),
    "traces": (TRACES, TRACES, Input("x", "traces", "")),
    "network_profile": (PROFILE, PROFILE, Input("x", "network_profile", "")),
    "step_records": (RECORDS, RECORDS, Input("x", "step_records", "")),
}
by_kind = pytest.mark.parametrize("kind", KINDS, ids=str)
LANGS: tuple[Lang, Lang] = ("fr", "en")


def test_every_kind_is_listed_once_and_named_where_definitions_name_it() -> None:
    def subclasses(cls: type[Kind]) -> list[type[Kind]]:
        return [c for sub in cls.__subclasses__() for c in (sub, *subclasses(sub))]

    concrete = {cls for cls in subclasses(Kind) if not cls.__name__.startswith("_")}
    assert {type(kind) for kind in KINDS} == concrete
    assert sorted(kind.name for kind in KINDS) == sorted(set(get_args(KindName))) == sorted(TYPED)


@by_kind
def test_a_kind_is_equal_to_the_name_it_replaces(kind: Kind) -> None:
    assert kind == kind.name
    assert kind in (kind.name,)
    assert {kind.name: 1}[kind] == 1  # hashed as its name: a table by name finds it
    assert kind != next(other for other in KINDS if other is not kind)
    assert kind_of(TYPED[kind.name][2]) is kind


@by_kind
@pytest.mark.parametrize("lang", LANGS)
def test_a_value_written_back_reads_the_same_in_either_language(kind: Kind, lang: Lang) -> None:
    french, english, item = TYPED[kind.name]
    value = kind.read_input(item, french if lang == "fr" else english, lang)
    assert value is not None
    for target in LANGS:
        shown = kind.show(value, target)
        if shown is None:  # a run read from a log is not its text: the page keeps the log as pasted
            assert not kind.localized
            continue
        assert kind.read_input(item, shown, target) == value, (shown, target)


@by_kind
def test_a_kind_read_on_the_page_in_percent_reads_the_same_where_the_unit_is_typed(kind: Kind) -> None:
    french, english, item = TYPED[kind.name]
    for lang, text in zip(LANGS, (french, english), strict=True):
        assert kind.read_input(item, text, lang, in_percent=True, most=MAX_SIZES) == kind.read_input(item, text, lang)


@by_kind
def test_every_kind_has_a_widget(kind: Kind) -> None:
    item = TYPED[kind.name][2]
    assert kind.element in ("input", "select", "textarea")
    assert kind.inputmode in ("numeric", "decimal", "text")
    assert kind.percent in ("", "share", "variation")
    assert (kind.element == "select") == bool(kind.options(item))
    assert (kind.element == "textarea") == (kind.rows > 0)
    assert not kind.file or kind.element == "textarea"
    assert not kind.file or (kind.file_types and kind.file_label and "%(limit)s" in kind.file_too_large)


@by_kind
def test_every_kind_has_a_schema_and_a_text_for_the_command_line(kind: Kind) -> None:
    _, english, item = TYPED[kind.name]
    schema = kind.schema(item, most=MAX_SIZES)
    assert schema["type"] in ("integer", "number", "string", "boolean", "array")
    value = kind.read_input(item, english, "en")
    if kind.cli_file:  # a file's content, which the command line reads again
        assert kind.read(kind.plain(item, value), "en", field="x") == value
    elif kind.reads_file:  # what a file the command line names holds: read as the edges read its path
        assert kind.read_cli(item, english, "en") == value
    elif not (kind.posted or kind.flag):  # a log is sent whole; a flag is its option alone
        assert all(kind.read_input(item, text, "en") for text in kind.plain_each(item, value))
        assert kind.read_cli(item, kind.plain(item, value), "en") == value


# The calculators whose API takes a query, with their endpoints.
QUERIED = [(SCALING, "/api/v1/scaling"), (BATCH, "/api/v1/batch"), (PIPELINE, "/api/v1/pipeline")]
QUERIED += [(PLAN, "/api/v1/plan"), (PREDICT, "/api/v1/predict")]
by_endpoint = pytest.mark.parametrize(("definition", "endpoint"), QUERIED, ids=[d.name for d, _ in QUERIED])


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    return dict(TestClient(create_app()).get("/openapi.json").json())


def _flat(schema: dict[str, Any]) -> dict[str, Any]:
    """A parameter's schema without FastAPI's ``anyOf`` of its type and null (an input that may stay unset)."""
    typed = [member for member in schema.get("anyOf", []) if member.get("type") != "null"]
    return {**{k: v for k, v in schema.items() if k != "anyOf"}, **(typed[0] if typed else {})}


@by_endpoint
def test_the_api_publishes_each_inputs_schema_as_its_kind_says(
    openapi: dict[str, Any], definition: Definition, endpoint: str
) -> None:
    parameters = {p["name"]: p for p in openapi["paths"][endpoint]["get"]["parameters"]}
    for item in definition.on("api"):
        published = _flat(parameters[item.api.name or item.name]["schema"])
        fragment = kind_of(item).schema(item, most=MAX_SIZES)
        assert {k: published.get(k) for k in fragment} == fragment, item.name


def _parameter(item: Input) -> inspect.Parameter:
    """The query parameter made from ``item``'s kind alone, as ``dpscale.web.api`` may make it."""
    helped = item.api.described or item.help  # the API's own words, where the help names what it does not take
    description = f"{helped} ({item.unit})" if item.unit else helped
    if item.api.name is not None:
        description = f"{description} (as {item.api.name})"
    shape = kind_of(item).api(item, most=MAX_SIZES)
    base: Any = shape.python if shape.each is None else list[Annotated[shape.python, Field(**shape.each)]]
    query = Query(description=description + shape.said, alias=item.api.name, **shape.query)
    if item.required_on("api"):
        return inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[base, query])
    annotation = Annotated[base | None, query] if item.default is None else Annotated[base, query]
    return inspect.Parameter(item.name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=item.default)


@by_endpoint
def test_an_inputs_kind_makes_the_query_parameter_the_api_has(
    openapi: dict[str, Any], definition: Definition, endpoint: str
) -> None:
    def endpoint_function(**values: Any) -> None:
        return None

    endpoint_function.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [_parameter(item) for item in definition.on("api")]
    )
    app = FastAPI()
    app.get(endpoint)(endpoint_function)
    made = TestClient(app).get("/openapi.json").json()["paths"][endpoint]["get"]["parameters"]
    assert made == openapi["paths"][endpoint]["get"]["parameters"]


def test_the_page_draws_each_input_as_its_kind_says() -> None:
    client = TestClient(create_app())
    drawn = 0
    for calc in CALCULATORS.values():  # every page, the scaling and fit pages too
        assert calc.definition is not None, calc.name
        assert calc.definition.groups, calc.name
        page = client.get(calc.path, params={"lang": "en"}).text
        for item in calc.definition.on("page"):
            kind = calc.fields[item.name].kind
            if kind.element == "input":
                tag = re.search(rf'<input id="{item.name}"[^>]*>', page)
                assert tag is not None, item.name
                assert f'inputmode="{kind.inputmode}"' in tag.group(0), item.name
            else:
                assert f'<{kind.element} id="{item.name}"' in page, item.name
            if kind.file:  # its file chooser beside it, offering the files the kind reads
                chooser = re.search(rf'<input id="{item.name}-file"[^>]*>', page)
                assert chooser is not None, item.name
                assert f'accept="{kind.file_types}"' in chooser.group(0), item.name
            drawn += 1
    assert drawn > 20


def test_every_input_of_every_calculator_has_its_kind() -> None:
    for calc in CALCULATORS.values():
        assert calc.definition is not None
        for item in calc.definition.inputs:
            assert kind_of(item) == item.kind, item.name
