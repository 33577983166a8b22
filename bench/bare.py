"""The yardsticks for the web bench: a bare Starlette endpoint that returns a constant JSON, and
the same answer from FastAPI with the scaling API's typed query parameters (the floor FastAPI's
own request handling sets, before dpscale does anything)."""

from typing import Annotated

from fastapi import FastAPI, Query
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

BODY = {"devices": 64, "per_device_throughput": 2000.0, "efficiency": 0.9, "actual_throughput": 115200.0}


async def constant(request: Request) -> JSONResponse:
    return JSONResponse(BODY)


app = Starlette(routes=[Route("/", constant)])

typed = FastAPI()


@typed.get("/")
async def typed_constant(
    devices: Annotated[int, Query(ge=1, le=10**9)] = 64,
    per_device_throughput: Annotated[float, Query(ge=1e-6, le=1e12)] = 2000.0,
    efficiency: Annotated[float, Query(ge=1e-6, le=1.0)] = 0.9,
    unit: Annotated[str, Query(max_length=40)] = "samples/s",
) -> dict[str, float]:
    return BODY
