"""The yardstick for the web bench: a bare Starlette endpoint that returns a constant JSON."""

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

BODY = {"devices": 64, "per_device_throughput": 2000.0, "efficiency": 0.9, "actual_throughput": 115200.0}


async def constant(request: Request) -> JSONResponse:
    return JSONResponse(BODY)


app = Starlette(routes=[Route("/", constant)])
