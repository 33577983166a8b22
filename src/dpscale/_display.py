"""How a result shows itself in a notebook, without the core importing the presentation layer.

A result's ``_repr_html_`` (from :class:`ShowsAsTable`) hands the result to the one presenter
plugged in here: ``dpscale/__init__.py``, which sits above both the core and the presentation,
plugs in a function that loads ``dpscale.notebook`` on the first display, whose ``show_html``
is registered per result type. So the core never imports the presentation (no import circle),
and ``import dpscale`` loads none of it. Until a presenter is plugged in, a result shows as its
``repr``.
"""

from __future__ import annotations

import html
from collections.abc import Callable

__all__ = ["ShowsAsTable", "plug"]

_presenter: Callable[[object], str] | None = None


def plug(presenter: Callable[[object], str]) -> None:
    """Show every result through ``presenter`` from now on (the package face calls this once)."""
    global _presenter
    _presenter = presenter


class ShowsAsTable:
    """A result that a notebook displays as the table the report writes for it."""

    __slots__ = ()

    def _repr_html_(self) -> str:
        if _presenter is None:
            return f"<pre>{html.escape(repr(self))}</pre>"
        return _presenter(self)
