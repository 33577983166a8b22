"""The examples in the core modules' docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "dpscale.scaling",
    "dpscale.batch",
    "dpscale.pipeline",
    "dpscale.plan.budget",
    "dpscale.predict.model",
    "dpscale.fit.fitting",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
