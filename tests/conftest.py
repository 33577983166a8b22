from __future__ import annotations

import math
import os

import pytest
from hypothesis import settings

settings.register_profile("ci", max_examples=300, deadline=None)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def assert_close(actual: float, expected: float, *, rel: float = 1e-12, abs_: float = 0.0) -> None:
    """Numeric comparison with an explicit tolerance, and a message that shows both numbers."""
    assert math.isfinite(actual), f"{actual!r} is not finite"
    assert math.isclose(actual, expected, rel_tol=rel, abs_tol=abs_), f"{actual!r} != {expected!r} (rel {rel})"


@pytest.fixture(autouse=True)
def _english_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests say which language they want; the machine's locale must not decide.
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
