"""Schemathesis over the OpenAPI description: every generated request gets an answer that
matches the schema, no 5xx, and every schema-valid request is accepted."""

from __future__ import annotations

import schemathesis

from dpscale.web.app import app

schema = schemathesis.openapi.from_asgi("/openapi.json", app)


@schema.parametrize()
def test_api_conforms_to_its_schema(case: schemathesis.Case) -> None:
    case.call_and_validate()
