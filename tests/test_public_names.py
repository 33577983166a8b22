"""Every module says what it offers: its ``__all__`` exists, names only what is there, and lists
every public function and class the module defines (not the ones it imports)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest

import dpscale

SKIPPED = {
    "dpscale.__main__": "a script: importing it runs the command line",
    "dpscale.measure.worker": "one rank of a measured run, started by torchrun",
}
SKIPPED_PACKAGES: tuple[str, ...] = ()


def _module_names() -> list[str]:
    names = ["dpscale"]
    # walk_packages imports each package to find what is under it; none of them imports torch
    for info in pkgutil.walk_packages(dpscale.__path__, prefix="dpscale."):
        names.append(info.name)
    return sorted(names)


def _skipped(name: str) -> bool:
    return name in SKIPPED or any(name == p or name.startswith(p + ".") for p in SKIPPED_PACKAGES)


def _needs_torch(exc: BaseException | None) -> bool:
    # MissingExtra("…", "measure") is an ImportError too; the torch import it wraps is its cause
    while exc is not None:
        if isinstance(exc, ImportError) and (exc.name or "").split(".")[0] == "torch":
            return True
        exc = exc.__cause__
    return False


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        if _needs_torch(exc):
            pytest.skip(f"{name} needs torch")
        raise


MODULES = [name for name in _module_names() if not _skipped(name)]


def test_the_walk_finds_the_modules() -> None:
    assert {"dpscale", "dpscale.errors", "dpscale.fit.laws", "dpscale.measure.meter"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_all_names_what_the_module_defines(name: str) -> None:
    module = _import(name)
    listed = getattr(module, "__all__", None)
    assert listed is not None, f"{name} has no __all__"
    assert len(set(listed)) == len(listed), f"{name}.__all__ lists a name twice"
    absent = [n for n in listed if not hasattr(module, n)]
    assert not absent, f"{name}.__all__ names what the module lacks: {absent}"
    defined = sorted(
        n
        for n, obj in vars(module).items()
        if not n.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and getattr(obj, "__module__", None) == name
    )
    unlisted = [n for n in defined if n not in listed]
    assert not unlisted, f"{name} defines public names its __all__ leaves out: {unlisted}"
