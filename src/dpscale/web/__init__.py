"""The web calculator; needs the ``web`` extra (FastAPI, Jinja2, uvicorn)."""

__all__: list[str] = []
