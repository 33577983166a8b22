"""/api/v1/scaling answers what the scaling calculator's build makes of the same values, though it calls
``scale`` straight away, and in the very bytes FastAPI writes through the route's model, though it writes
them itself; its unknown parameters and its Accept header are read as they always were."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from dpscale.calculators.scale import SCALING
from dpscale.errors import InvalidInput
from dpscale.web.app import create_app
from dpscale.web.schemas import ScalingOut


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def _built(values: dict[str, object]) -> dict[str, object]:
    return dict(SCALING.build(values).scaling.to_dict())


_SHOWN: list[dict[str, object]] = []
_through_the_model = FastAPI()


@_through_the_model.get("/", response_model=ScalingOut)
async def _shown() -> dict[str, object]:
    return _SHOWN[-1]


@pytest.fixture(scope="module")
def reference() -> TestClient:
    """A route that answers a dict as FastAPI writes it through ScalingOut (what the API's route did)."""
    return TestClient(_through_the_model)


def _as_the_model_writes(reference: TestClient, answer: dict[str, object]) -> tuple[bytes, str]:
    _SHOWN.append(answer)
    r = reference.get("/")
    return r.content, r.headers["content-type"]


@settings(max_examples=150, deadline=None)
@given(
    devices=st.integers(1, 10**9),
    per_device=st.floats(1e-6, 1e12),
    efficiency=st.floats(1e-6, 1.0),
    unit=st.sampled_from([None, "samples/s", " tokens/s ", "images/s", "échantillons/s", "x" * 40]),
)
def test_the_answer_is_the_builds(
    client: TestClient, reference: TestClient, devices: int, per_device: float, efficiency: float, unit: str | None
) -> None:
    params: dict[str, object] = {
        "devices": devices,
        "per_device_throughput": repr(per_device),
        "efficiency": repr(efficiency),
    }
    if unit is not None:
        params["unit"] = unit
    r = client.get("/api/v1/scaling", params=params)
    assert r.status_code == 200
    values = {"devices": devices, "per_device_throughput": per_device, "efficiency": efficiency}
    if unit is not None:
        values["unit"] = unit
    assert r.json() == _built(values)
    assert (r.content, r.headers["content-type"]) == _as_the_model_writes(reference, _built(values))
    assert r.headers["content-length"] == str(len(r.content))


@pytest.mark.parametrize(
    "query",
    [
        "devices=1&per_device_throughput=1e-6&efficiency=1e-6",  # d·v·E at its smallest
        "devices=1000000000&per_device_throughput=1e12&efficiency=1",  # and at its largest
        "devices=64&per_device_throughput=2000&efficiency=0.9&unit=%20tokens/s%20",  # the unit trimmed
        "devices=3&per_device_throughput=0.1&efficiency=0.7",
    ],
)
def test_the_bounds_answer_as_the_build_does(client: TestClient, reference: TestClient, query: str) -> None:
    r = client.get(f"/api/v1/scaling?{query}")
    assert r.status_code == 200
    pairs = dict(part.split("=") for part in query.split("&"))
    values: dict[str, object] = {
        "devices": int(pairs["devices"]),
        "per_device_throughput": float(pairs["per_device_throughput"]),
        "efficiency": float(pairs["efficiency"]),
    }
    if "unit" in pairs:
        values["unit"] = pairs["unit"].replace("%20", " ")
    assert r.json() == _built(values)
    assert r.content == _as_the_model_writes(reference, _built(values))[0]


def test_a_unit_the_core_refuses_is_refused_as_before(client: TestClient) -> None:
    with pytest.raises(InvalidInput) as built:
        _built({"devices": 2, "per_device_throughput": 1.0, "efficiency": 1.0, "unit": "a\u200bb"})
    r = client.get(
        "/api/v1/scaling", params={"devices": 2, "per_device_throughput": 1, "efficiency": 1, "unit": "a\u200bb"}
    )
    assert r.status_code == 422
    assert r.json()["errors"][0]["field"] == built.value.field == "unit"


def test_the_first_unknown_parameter_is_named(client: TestClient) -> None:
    r = client.get("/api/v1/scaling?devices=2&zeta=1&per_device_throughput=1&efficiency=1&alpha=2")
    assert r.status_code == 422
    assert r.json() == {
        "errors": [
            {
                "field": "zeta",
                "message": "got '1'; expected a parameter of this endpoint: "
                "devices, efficiency, per_device_throughput, unit",
            }
        ]
    }


def test_a_parameter_given_twice_is_no_unknown_one(client: TestClient) -> None:
    r = client.get("/api/v1/scaling?devices=2&devices=3&per_device_throughput=1&efficiency=1")
    assert r.status_code == 422  # one value asked for: refused by its own name, not as a parameter unknown
    assert [error["field"] for error in r.json()["errors"]] == ["devices"]
    assert "given once" in r.json()["errors"][0]["message"]


@pytest.mark.parametrize(
    ("accepts", "kind"),
    [
        ([], "application/json"),
        (["text/csv"], "text/csv; charset=utf-8"),
        (["application/json, text/csv"], "application/json"),
        (["text/csv", "application/json"], "text/csv; charset=utf-8"),  # the first Accept header is read
        (["application/json", "text/csv"], "application/json"),
    ],
)
def test_the_first_accept_header_chooses_csv(client: TestClient, accepts: list[str], kind: str) -> None:
    headers = [("accept", value) for value in accepts]
    r = client.get("/api/v1/scaling?devices=2&per_device_throughput=1&efficiency=1", headers=headers)
    assert r.status_code == 200
    assert r.headers["content-type"] == kind
