"""A result in a notebook: every result type shows as its table, and ``import dpscale`` loads no presentation."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dpscale import scale, solve
from dpscale._display import ShowsAsTable
from dpscale.batch import effective_batch
from dpscale.explain import explain
from dpscale.fit import fit
from dpscale.notebook import show_html
from dpscale.pipeline import bubble
from dpscale.plan import devices_for_deadline, plan
from dpscale.predict import presets
from dpscale.predict.model import Cluster, Workload, predict
from tests.explain.test_explain import ONE_STEP, write


def _prediction(_: Path) -> Any:
    cluster = Cluster(presets.link("intra", "nvlink3"), 8, presets.link("inter", "ib-hdr", nics=8))
    return predict([8, 64], Workload(938, 256, 25.6e6), cluster)


RESULTS: dict[str, Callable[[Path], Any]] = {  # one of each result type, and its table's class
    "dpscale-scaling": lambda _: scale(64, 2000, 0.9),
    "dpscale-solution": lambda _: solve(devices=64, per_device_throughput=2000, actual_throughput=115_200),
    "dpscale-batch": lambda _: effective_batch(32, 4, 64),
    "dpscale-bubble": lambda _: bubble(4, 8),
    "dpscale-plan": lambda _: plan(1.28e9, 64, 2000, 0.9),
    "dpscale-plan dpscale-plan-options": lambda _: devices_for_deadline(1.28e9, 36 * 3600, 2000, 0.9),
    "dpscale-prediction": _prediction,
    "dpscale-fit": lambda _: fit([(1, 370), (2, 735), (4, 1460), (8, 2890)]),
    "dpscale-explanation dpscale-explanation-ranks": lambda tmp: explain(write(tmp / "r0.json", ONE_STEP)),
}


@pytest.mark.parametrize("classes", RESULTS)
def test_each_result_shows_as_its_tables(classes: str, tmp_path: Path) -> None:
    page = RESULTS[classes](tmp_path)._repr_html_()
    assert page.startswith(("<table", "<p", "<h4"))  # its tables, or the sentence it is about (or under) first
    tables = {name for found in re.findall(r'<table class="([^"]*)"', page) for name in found.split()}
    assert set(classes.split()) <= tables, tables


def test_every_type_that_shows_itself_has_its_own_table(tmp_path: Path) -> None:
    made = {type(make(tmp_path)) for make in RESULTS.values()}
    # a dataclass with slots is a new class: the one it replaced stays among the subclasses
    types = {t for t in ShowsAsTable.__subclasses__() if getattr(sys.modules[t.__module__], t.__qualname__, None) is t}
    assert types == made  # a new result type is listed above, and so shown here
    fallback = show_html.dispatch(object)
    assert [t.__name__ for t in types if show_html.dispatch(t) is fallback] == []


def test_a_type_without_a_table_shows_its_repr_escaped() -> None:
    class Unshown(ShowsAsTable):
        def __repr__(self) -> str:
            return "<Unshown & co>"

    assert Unshown()._repr_html_() == "<pre>&lt;Unshown &amp; co&gt;</pre>"


def test_import_dpscale_loads_no_presentation_until_a_result_is_shown() -> None:
    probe = (
        "import sys, dpscale\n"
        "shown = ('dpscale.calculators.shown', 'dpscale.notebook', 'dpscale.format')\n"
        "print(sorted(m for m in shown if m in sys.modules))\n"
        "print(dpscale.scale(64, 2000, 0.9)._repr_html_()[:31])\n"
        "print('dpscale.notebook' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["[]", '<table class="dpscale-scaling">', "True"]
