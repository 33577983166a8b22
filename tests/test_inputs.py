"""One definition of a calculator's inputs (dpscale.inputs): every edge takes each input from it.

For each input of predict's definition, the CLI has its option, the page its field and the API
its parameter with the bounds the definition states; a value past those bounds is refused the
same way everywhere. A new input added to the definition appears on all three (the test walks
the definition, not a list of its own).
"""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from dpscale.cli import main
from dpscale.errors import InvalidInput, MissingInput
from dpscale.inputs import Definition, Input
from dpscale.predict.inputs import PREDICT
from dpscale.web.app import create_app

REQUIRED = {"devices": [8, 64], "per_device_throughput": 938.0, "batch": 256.0, "params": 25.6e6}


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def test_every_input_is_a_cli_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["predict", "--help"])
    help_text = capsys.readouterr().out
    for item in PREDICT.on("cli"):
        assert re.search(rf"{re.escape(item.cli_option)}\b", help_text), item.name
        if item.short:
            assert f"{item.short}, {item.cli_option}" in help_text, item.name


def test_every_input_is_a_field_of_the_page(client: TestClient) -> None:
    page = client.get("/predict", params={"lang": "en"}).text
    for item in PREDICT.on("page"):
        assert f'name="{item.name}"' in page, item.name
    assert 'name="network"' not in page  # a file on the server: the CLI's alone


def test_every_input_is_an_api_parameter_with_its_bounds(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    parameters = {p["name"]: p for p in schema["paths"]["/api/v1/predict"]["get"]["parameters"]}
    assert set(parameters) == {item.name for item in PREDICT.on("api")}
    for item in PREDICT.on("api"):
        parameter = parameters[item.name]
        assert parameter["required"] == item.required, item.name
        if item.high is not None:
            assert _found(parameter["schema"], "maximum") == item.high, item.name
            assert _found(parameter["schema"], "minimum") == item.low, item.name
        if item.choices:
            assert parameter["schema"]["enum"] == list(item.choices), item.name


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
        (*PREDICT.inputs, Input("layers", "count", "Transformer layers.", default=32, low=1, high=10_000)),
        lambda values: seen.update(values),
    )

    def run(given: dict[str, object]) -> None:
        from dpscale.cli.definitions import read_values

        extended.build(extended.complete(read_values(extended, given, "en")))

    demo = typer.Typer()
    demo.command("demo")(command(extended, run, [], "A demo."))
    demo(["--layers", "48", "-d", "8", "-v", "1", "-b", "1", "-p", "1M"], standalone_mode=False)
    assert seen["layers"] == 48
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
