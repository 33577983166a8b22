from __future__ import annotations

import math
import os

import pytest
from hypothesis import HealthCheck, settings

# `make test` and CI: the same examples on every run and every machine (derandomized, no example
# database carried between runs), so the suite's verdict depends on the code alone. A failure prints
# a @reproduce_failure blob. 100 examples per test (Schemathesis's per endpoint): the same fixed
# ones on every run, a third of what the suite once ran, since `make fuzz` is where examples are
# explored (2 500 a test, a new seed each run) and its finds are kept as @examples here.
settings.register_profile(
    "deterministic", derandomize=True, database=None, print_blob=True, max_examples=100, deadline=None
)
# `make fuzz` (DPSCALE_HYPOTHESIS=fuzz, or pytest --hypothesis-profile=fuzz): random seeds and many
# more examples, to look for what the fixed examples miss; each find becomes an @example.
settings.register_profile(
    "fuzz",
    max_examples=2500,
    deadline=None,
    database=None,  # a run is replayed by its seed, which `make fuzz` prints
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("DPSCALE_HYPOTHESIS", "deterministic"))


def assert_close(actual: float, expected: float, *, rel: float = 1e-12, abs_: float = 0.0) -> None:
    """Numeric comparison with an explicit tolerance, and a message that shows both numbers."""
    assert math.isfinite(actual), f"{actual!r} is not finite"
    assert math.isclose(actual, expected, rel_tol=rel, abs_tol=abs_), f"{actual!r} != {expected!r} (rel {rel})"


@pytest.fixture(autouse=True)
def _english_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests say which language they want; the machine's locale must not decide.
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
