"""One definition of a calculator's inputs (dpscale.inputs): every edge takes each input from it.

For each input of each calculator's definition, the CLI has its option, the page its field and the API
its parameter with the bounds the definition states; a value past those bounds is refused the
same way everywhere. A new input added to the definition appears on all three (the test walks
the definition, not a list of its own).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dpscale.calculators.bubble import PIPELINE
from dpscale.calculators.effective_batch import BATCH
from dpscale.calculators.fit import AT, FIT
from dpscale.calculators.plan import PLAN
from dpscale.calculators.scale import SCALING
from dpscale.cli import main
from dpscale.errors import InvalidInput, MissingInput
from dpscale.fit.laws import MODELS
from dpscale.i18n import Lang
from dpscale.inputs import Api, Cli, Definition, Input, Page
from dpscale.predict.definition import PREDICT
from dpscale.web.app import create_app
from dpscale.web.security import MAX_SIZES as REQUEST_SIZES

REQUIRED = {"devices": [8, 64], "per_device_throughput": 938.0, "batch": 256.0, "params": 25.6e6}


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


# Every calculator's definition, with its command, its page and its API endpoint (the fit's takes
# a JSON body made from its definition, as predict's POST does).
EDGES = [
    (SCALING, "scale", "/", "/api/v1/scaling"),
    (BATCH, "batch", "/batch", "/api/v1/batch"),
    (PIPELINE, "bubble", "/pipeline", "/api/v1/pipeline"),
    (PLAN, "plan", "/plan", "/api/v1/plan"),
    (PREDICT, "predict", "/predict", "/api/v1/predict"),
    (FIT, "fit", "/fit", "/api/v1/fit"),
]
by_name = pytest.mark.parametrize(
    ("definition", "command", "page", "endpoint"), EDGES, ids=[definition.name for definition, *_ in EDGES]
)


# What an input means, which every edge reads; how each edge spells it is its own record.
MEANING = ("name", "kind", "help", "default", "required", "low", "high", "choices", "edges", "unit", "synonyms", "most")
EXTRAS = {"cli": Cli, "page": Page, "api": Api}
# The names the edges' extras had on Input itself, gone: each is read from its edge's record.
OLD_NAMES = {
    **{field: ("cli", field) for field in Cli._fields},
    **{field: ("page", field) for field in Page._fields},
    "api_name": ("api", "name"),
}


def test_an_input_holds_its_meaning_and_each_edge_its_own_record() -> None:
    assert Input._fields == (*MEANING, *EXTRAS)
    assert not set(OLD_NAMES) & set(Input._fields)
    item = Input("x", "text", "")
    for edge, record in EXTRAS.items():
        assert getattr(item, edge) == record(), edge  # an input no edge spells apart has the records' defaults


def test_the_old_names_are_gone_from_an_input() -> None:
    item = Input("x", "text", "")
    for old in OLD_NAMES:
        assert not hasattr(item, old), old


@by_name
def test_every_input_is_a_cli_option(
    capsys: pytest.CaptureFixture[str], definition: Definition, command: str, page: str, endpoint: str | None
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    help_text = capsys.readouterr().out
    for item in definition.on("cli"):
        if item.cli.positional:
            assert re.search(rf"\b{item.name.upper()}\b", help_text), item.name
            if not (item.cli.option or item.cli.short):
                continue
        assert re.search(rf"{re.escape(item.cli_option)}\b", help_text), item.name
        if item.cli.short:
            assert f"{item.cli.short}, {item.cli_option}" in help_text, item.name


@by_name
def test_every_input_is_a_field_of_the_page(
    client: TestClient, definition: Definition, command: str, page: str, endpoint: str | None
) -> None:
    text = client.get(page, params={"lang": "en"}).text
    for item in definition.on("page"):
        assert f'name="{item.name}"' in text, item.name
    for item in definition.inputs:
        if "page" not in item.edges:
            assert f'name="{item.name}"' not in text, item.name  # e.g. a file on the server: the CLI's alone


def _api_parameters(openapi: dict[str, Any], endpoint: str) -> dict[str, dict[str, Any]]:
    """What ``endpoint`` takes, each name with whether it is required and its schema: a GET's query parameters,
    or the keys of a POST's JSON body where it has no GET (the fit)."""
    operations = openapi["paths"][endpoint]
    if "get" in operations:
        return {p["name"]: {"required": p["required"], "schema": p["schema"]} for p in operations["get"]["parameters"]}
    ref = operations["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    body = openapi["components"]["schemas"][ref.rsplit("/", 1)[1]]
    return {
        name: {"required": name in body.get("required", ()), "schema": schema}
        for name, schema in body["properties"].items()
    }


@by_name
def test_every_input_is_an_api_parameter_with_its_bounds(
    client: TestClient, definition: Definition, command: str, page: str, endpoint: str
) -> None:
    parameters = _api_parameters(client.get("/openapi.json").json(), endpoint)
    assert set(parameters) == {item.api.name or item.name for item in definition.on("api")}
    for item in definition.on("api"):
        parameter = parameters[item.api.name or item.name]
        assert parameter["required"] == item.required_on("api"), item.name
        if item.high is not None:
            assert _found(parameter["schema"], "maximum") == item.high, item.name
            assert _found(parameter["schema"], "minimum") == item.low, item.name
        if item.choices:
            assert parameter["schema"]["enum"] == list(item.accepted), item.name


def test_every_calculator_is_walked_and_each_edge_takes_its_definitions_inputs(client: TestClient) -> None:
    """The calculators of the pages and of the command line are EDGES' (a new one is walked once added
    there), and the command, the page and the API each take the inputs the definition gives them: no
    more, no fewer."""
    import inspect

    from dpscale.cli.commands import create_app as create_cli
    from dpscale.cli.definitions import TWIN
    from dpscale.web.forms import CALCULATORS

    walked = {definition.name: (definition, command, page, endpoint) for definition, command, page, endpoint in EDGES}
    pages = {calc.definition.name: calc for calc in CALCULATORS.values() if calc.definition is not None}
    assert set(pages) == set(walked)
    commands = {  # those made from a definition: their signature is the definition's options, then their own
        info.callback.__name__: info
        for info in create_cli().registered_commands
        if info.callback is not None and "__signature__" in vars(info.callback)
    }
    from dpscale.calculators.explain import EXPLAIN
    from dpscale.measure.clusterfields import MEASURE, PROBE

    alone = {d.name: d for d in (MEASURE, PROBE, EXPLAIN)}  # the command line's alone: no page, no API
    assert set(commands) == set(walked) | set(alone)
    for name, definition in alone.items():
        options = {p.removesuffix(TWIN) for p in inspect.signature(commands[name].callback).parameters}
        assert options & {item.name for item in definition.inputs} == {item.name for item in definition.on("cli")}
        assert all(item.edges == ("cli",) for item in definition.inputs), name
    openapi = client.get("/openapi.json").json()
    for name, (definition, command, page, endpoint) in walked.items():
        names = {item.name for item in definition.inputs}
        options = {p.removesuffix(TWIN) for p in inspect.signature(commands[name].callback).parameters}
        assert commands[name].name == command
        assert options & names == {item.name for item in definition.on("cli")}, name
        assert pages[name].path == page
        assert set(pages[name].fields) == {item.name for item in definition.on("page")}, name
        taken = set(_api_parameters(openapi, endpoint))
        assert taken == {item.api.name or item.name for item in definition.on("api")}, name


def test_the_fit_body_states_the_definitions_bounds(client: TestClient) -> None:
    """The fit's JSON body is made from its definition: its keys are the inputs' API names (points, models),
    each with the bounds its input and kind state, the sizes as many as any request may ask for."""
    schema = client.get("/openapi.json").json()["components"]["schemas"]["FitIn"]["properties"]
    assert set(schema) == {"points", "at", "models"}
    assert _found(schema["at"], "maxItems") == REQUEST_SIZES
    assert _found(schema["points"], "minItems") == 2
    assert _found(schema["at"], "maximum") == AT.high
    assert _found(schema["at"], "minimum") == AT.low
    assert _found(schema["models"], "enum") == list(MODELS)
    answer = client.post("/api/v1/fit", json={"points": [{"devices": 1, "throughput": 1.0}] * 2, "models": ["x"]})
    assert answer.status_code == 422
    assert answer.json()["errors"][0]["field"] == "models.0"  # the first of the list, held to the catalogue
    [example] = schema["points"]["examples"]  # what the docs page offers to send is answered
    assert client.post("/api/v1/fit", json={"points": example}).status_code == 200


def test_a_json_bodys_lists_are_said_to_be_arrays(client: TestClient) -> None:
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    for body in ("FitIn", "PredictIn"):
        for name, schema in schemas[body]["properties"].items():
            assert "repeat the key" not in schema["description"], (body, name)  # a query's way, not JSON's
    assert schemas["PredictIn"]["properties"]["devices"]["description"].endswith("(a JSON array)")


@pytest.mark.parametrize(
    ("argv", "query"),
    [
        (["64", "1e15", "90%"], {"devices": 64, "per_device_throughput": 1e15, "efficiency": 0.9}),
        (["64", "2000", "0.0000001"], {"devices": 64, "per_device_throughput": 2000, "efficiency": 1e-7}),
        (["2000000000", "2000", "90%"], {"devices": 2_000_000_000, "per_device_throughput": 2000, "efficiency": 0.9}),
    ],
)
def test_the_scaling_calculator_holds_every_edge_to_the_same_bounds(
    client: TestClient, capsys: pytest.CaptureFixture[str], argv: list[str], query: dict[str, float]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["scale", *argv, "--lang", "en"])
    assert exited.value.code == 2
    assert "expected a value from" in capsys.readouterr().err
    assert client.get("/api/v1/scaling", params=query).status_code == 422
    page = client.get("/", params={**{k: str(v) for k, v in query.items()}, "lang": "en"}).text
    assert "expected a value from" in page


def _found(schema: object, key: str) -> object:
    """The first ``key`` in a JSON schema, however nested (anyOf for optional values, items for lists)."""
    if isinstance(schema, dict):
        if key in schema:
            return schema[key]
        for value in schema.values():
            found = _found(value, key)
            if found is not None:
                return found
    if isinstance(schema, list):
        for value in schema:
            found = _found(value, key)
            if found is not None:
                return found
    return None


@pytest.mark.parametrize(
    "item", [i for i in PREDICT.inputs if i.high is not None and i.kind != "device_list"], ids=lambda i: i.name
)
def test_a_value_past_its_bound_is_refused_by_the_core_itself(item: Input) -> None:
    with pytest.raises(InvalidInput) as caught:
        PREDICT.build({**REQUIRED, "intra": "nvlink3", item.name: item.high * 10 if item.high else 1})
    assert caught.value.field == item.name


def test_a_required_input_is_missing_by_its_name() -> None:
    for name in REQUIRED:
        with pytest.raises(MissingInput) as caught:
            PREDICT.build({**{k: v for k, v in REQUIRED.items() if k != name}, "intra": "nvlink3"})
        assert caught.value.field == name


def test_the_same_request_gives_the_same_prediction_on_every_edge(
    client: TestClient, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    library = PREDICT.build({**REQUIRED, "intra": "nvlink3", "inter": "ib-hdr", "nics": 4}).predict().to_dict()
    api = client.get("/api/v1/predict", params={**REQUIRED, "intra": "nvlink3", "inter": "ib-hdr", "nics": 4}).json()
    with pytest.raises(SystemExit):
        main(
            [
                "predict",
                "-d",
                "8,64",
                "-v",
                "938",
                "-b",
                "256",
                "-p",
                "25.6M",
                "--intra",
                "nvlink3",
                "--inter",
                "ib-hdr",
                "--nics",
                "4",
                "--json",
            ]
        )
    cli = json.loads(capsys.readouterr().out)
    assert library["predictions"] == api["predictions"] == cli["predictions"]


def test_an_input_added_to_a_definition_appears_on_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    import typer

    from dpscale.cli.definitions import command

    seen: dict[str, object] = {}
    extended = Definition(
        "demo",
        (*PREDICT.inputs, Input("decoder_layers", "count", "Decoder layers.", default=32, low=1, high=10_000)),
        lambda values: seen.update(values),
    )

    def run(given: dict[str, object]) -> None:
        from dpscale.cli.definitions import read_values

        extended.build(extended.complete(read_values(extended, given, "en")))

    demo = typer.Typer()
    demo.command("demo")(command(extended, run, [], "A demo."))
    demo(["--decoder-layers", "48", "-d", "8", "-v", "1", "-b", "1", "-p", "1M"], standalone_mode=False)
    assert seen["decoder_layers"] == 48
    assert seen["grad_bytes"] == 4.0  # the default, from the definition


def test_a_bound_is_said_about_the_text_as_typed_and_in_percent_for_a_share(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["predict", "-d", "8", "-v", "1", "-b", "1", "-p", "1M", "--intra", "nvlink3", "--jitter", "60%"])
    assert capsys.readouterr().err == "error: jitter: got '60%'; expected a value from 0% to 50%\n"


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({**REQUIRED, "devices": "8,16"}, "devices"),  # text where the library takes a list
        ({**REQUIRED, "devices": 8}, "devices"),
        ({**REQUIRED, "devices": [10**5000]}, "devices"),  # the error's own text must not raise
        ({**REQUIRED, "devices": [None]}, "devices"),
        ({**REQUIRED, "batch": "256"}, "batch"),
        ({**REQUIRED, "batch": [256.0]}, "batch"),
        ({**REQUIRED, "intra": 3}, "intra"),
    ],
)
def test_library_values_of_the_wrong_type_are_named_errors(values: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        PREDICT.build({"intra": "nvlink3", **values})
    assert caught.value.field == field
    assert len(caught.value.message) < 200


@pytest.mark.parametrize(
    ("lang", "low", "high", "said"),
    [
        ("en", 1e-6, 1e12, "from 10⁻⁶ to 10¹²"),
        ("fr", 0.125, 16.0, "de 0,125 à 16"),
        ("en", 1, 2.5e7, "from 1 to 25,000,000"),
    ],
)
def test_bounds_read_as_people_write_them(lang: Lang, low: float, high: float, said: str) -> None:
    item = Input("x", "number", "", low=low, high=high)
    with pytest.raises(InvalidInput) as caught:
        item.check(high * 10)
    assert said in caught.value.localized(lang)
