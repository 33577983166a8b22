"""Schemathesis over the OpenAPI description: every generated request gets an answer that
matches the schema, never a 5xx, and every schema-valid request to /api/v1/scaling is accepted.

The other endpoints have rules across fields that OpenAPI cannot state (base_learning_rate needs
base_batch; chunks > 1 needs the interleaved schedule; devices or a deadline, not both; a link
preset or a bandwidth, not both; measurements at two sizes or more), and /api/v1/explain's files
must be profiler traces, which a schema cannot say, so a schema-valid request may get a 422
there; it must then name a field of the request.
"""

from __future__ import annotations

from typing import Any

import schemathesis
from fastapi.testclient import TestClient
from hypothesis import example, given
from hypothesis import strategies as st
from schemathesis.config._checks import NegativeDataRejectionConfig
from schemathesis.specs.openapi.checks import positive_data_acceptance

from dpscale.web.api import FitIn, PredictIn
from dpscale.web.app import create_app

schema = schemathesis.openapi.from_asgi("/openapi.json", create_app())
# Invalid input may also be refused with 414 or 413 when it makes the query string or the body too long.
schema.config.checks.negative_data_rejection = NegativeDataRejectionConfig(
    expected_statuses=[*NegativeDataRejectionConfig._DEFAULT_EXPECTED_STATUSES, "413", "414"]
)
CROSS_FIELD_RULES = {
    "/api/v1/batch",
    "/api/v1/pipeline",
    "/api/v1/plan",
    "/api/v1/predict",
    "/api/v1/fit",
    "/api/v1/explain",
}


def a_422_names_a_field_of_the_request(ctx: Any, response: Any, case: schemathesis.Case) -> None:
    if response.status_code != 422:
        return
    errors = response.json()["errors"]
    assert errors, "a 422 without errors"
    # "request": the handler's name for the request as a whole (a missing or malformed body).
    parameters = {p.name for p in case.operation.iter_parameters()} | {"request"}
    parameters |= set(case.query or {})  # a parameter the endpoint does not take, refused by its name
    if case.operation.path == "/api/v1/fit":  # a JSON body: the keys its model declares, and a key it does not know
        parameters |= {field.alias or name for name, field in FitIn.model_fields.items()}
        parameters |= set(case.body) if isinstance(case.body, dict) else set()
    if case.operation.path == "/api/v1/explain":  # a form of files
        parameters |= {"trace"}
    if case.operation.path == "/api/v1/predict" and case.operation.method.upper() == "POST":
        # its keys, and a key it does not know, refused by name (extra="forbid")
        parameters |= set(PredictIn.model_fields) | (set(case.body) if isinstance(case.body, dict) else set())
    for error in errors:
        assert error["message"], error
        assert names_one_of(error["field"], parameters), error


def names_one_of(field: str, parameters: set[str]) -> bool:
    """Whether an error's ``field`` names one of ``parameters``: itself, an element or a place in it.

    An unknown key is named whole, dots and all (a 300-character key once failed this check, which
    read "a.b" as the element b of a); devices.0 is the first element of devices; "nccl_log, line
    28" a line of the log (the README's example).
    """
    return field in parameters or field.split(".")[0] in parameters or field.split(", line ")[0] in parameters


@schema.parametrize()
def test_api_conforms_to_its_schema(case: schemathesis.Case) -> None:
    if case.operation.path in CROSS_FIELD_RULES:
        case.call_and_validate(
            excluded_checks=[positive_data_acceptance], additional_checks=[a_422_names_a_field_of_the_request]
        )
    else:
        case.call_and_validate()


client = TestClient(create_app())
PREDICT = {"devices": [8, 64], "batch": 32, "params": 1e6, "per_device_throughput": 1000, "intra": "nvlink3"}


@given(key=st.text(max_size=300))
@example(key="k" * 150 + "." + "k" * 149)  # make fuzz SEED=3087713602: read as the element kkk… of kkk…
@example(key="devices.0")  # named as sent: not the first element of devices
@example(key="")
def test_a_key_the_body_does_not_take_is_named_whole(key: str) -> None:
    # POST /api/v1/predict refuses a key it does not know by its name, as GET does a parameter,
    # saying those it takes: the field is the key as sent (the body is bounded: 1 MiB).
    response = client.post("/api/v1/predict", json={**PREDICT, key: 1})
    if key in PredictIn.model_fields:
        return
    assert response.status_code == 422
    [error] = response.json()["errors"]
    assert error["field"] == key
    assert error["message"].startswith("got 1; expected a parameter of this endpoint: accumulation, ")
    assert names_one_of(error["field"], set(PredictIn.model_fields) | {key})


@given(log=st.text(max_size=40))
@example(log="\x93^\x9d\x07\x11\x1f\xce\x8c\x00\xe6")  # make fuzz SEED=3087713602: nccl_log, line 1
def test_a_bad_log_names_its_field_and_line(log: str) -> None:
    for response in (
        client.get("/api/v1/predict", params={**PREDICT, "nccl_log": log}),
        client.post("/api/v1/predict", json={**PREDICT, "nccl_log": log}),
    ):
        assert response.status_code in (200, 422), response.text
        for error in response.json().get("errors", []):
            assert names_one_of(error["field"], set(PredictIn.model_fields)), error
