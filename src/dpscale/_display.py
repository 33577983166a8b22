"""How a result shows itself in a notebook: a registry that :mod:`dpscale.report` fills.

A result's ``_repr_html_`` (from :class:`ShowsAsTable`) asks this module, which knows neither the
result types nor the report. The report registers, for each result class, the function that
writes it as HTML, so the core never imports the presentation layer. ``import dpscale`` loads the
report, so the registry is full before any result exists.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["ShowsAsTable", "class_path", "registered", "shows"]

_HTML: dict[str, Callable[[Any], str]] = {}
_F = TypeVar("_F", bound=Callable[..., str])


def class_path(cls: type) -> str:
    """``dpscale.scaling.Scaling``: a class as the registry names it."""
    return f"{cls.__module__}.{cls.__qualname__}"


def shows(path: str) -> Callable[[_F], _F]:
    """Register the decorated function as the HTML of the class at ``path``."""

    def register(fn: _F) -> _F:
        _HTML[path] = fn
        return fn

    return register


def registered() -> frozenset[str]:
    """The classes a function is registered for."""
    return frozenset(_HTML)


class ShowsAsTable:
    """A result that a notebook displays as the table the report writes for it."""

    __slots__ = ()

    def _repr_html_(self) -> str:
        writer = _HTML.get(class_path(type(self)))
        return writer(self) if writer is not None else f"<pre>{html.escape(repr(self))}</pre>"
