"""/api/v1/fit answers the core's fit whole, through the response model its schema publishes."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dpscale.fit import fit
from dpscale.web.app import create_app

DLPERF = [(1, 367.29), (4, 1449.48), (8, 2887.65), (16, 5716.79)]  # DLPerf's V100s (validation/)
PAST_ITS_PEAK = [(1, 100), (2, 150), (4, 170), (8, 160)]


def _same(got: Any, want: Any) -> None:
    if isinstance(want, float) and isinstance(got, float):
        assert math.isclose(got, want, rel_tol=1e-12), (got, want)
    elif isinstance(want, dict):
        assert isinstance(got, dict)
        assert got.keys() == want.keys()  # nothing the response model would drop, nothing added
        for key in want:
            _same(got[key], want[key])
    elif isinstance(want, list | tuple):
        assert isinstance(got, list)
        assert len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            _same(a, b)
    else:
        assert got == want


@pytest.mark.parametrize(
    ("points", "at", "models"),
    [
        (DLPERF, [32, 64], []),  # every model, USL and comm too few to rank: nulls in aicc
        (PAST_ITS_PEAK, [8, 1024], ["usl"]),  # an interval cut at 0, said in the warnings
        ([(1, 100), (2, 190)], [4], ["amdahl", "usl"]),  # USL skipped: its reason; no interval for amdahl
    ],
)
def test_the_fit_api_answers_the_core_s_fit(points: list[tuple[int, float]], at: list[int], models: list[str]) -> None:
    body = {"points": [{"devices": n, "throughput": t} for n, t in points], "at": at, "models": models}
    answered = TestClient(create_app()).post("/api/v1/fit", json=body)
    assert answered.status_code == 200, answered.text
    want = json.loads(json.dumps(fit(points, at=at, models=models or None).to_dict()))
    _same(answered.json(), want)


def test_the_fit_api_publishes_its_answer_s_shape() -> None:
    spec = TestClient(create_app()).get("/openapi.json").json()
    answer = spec["paths"]["/api/v1/fit"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert answer == {"$ref": "#/components/schemas/FitOut"}
    fitted = spec["components"]["schemas"]["FitOut"]["properties"]
    assert set(fitted) == {"points", "chosen", "peak_devices", "warnings", "models"}
    forecast = spec["components"]["schemas"]["ForecastOut"]["properties"]
    assert forecast["interval"]["minItems"] == forecast["interval"]["maxItems"] == 2
