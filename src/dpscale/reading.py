"""An input's text read by its kind (see :mod:`dpscale.kinds`): what every edge calls on what it was given.

The parsers themselves are :mod:`dpscale.parse`'s, and which one reads an input is its kind's
(:meth:`dpscale.kinds.Kind.read`); here the value read is held to the input's bounds, said about
the text as typed.
"""

from __future__ import annotations

from typing import Any

from dpscale.i18n import Lang
from dpscale.inputs import Input
from dpscale.kinds import MAX_LOG_CHARACTERS, kind_of

__all__ = ["MAX_LOG_CHARACTERS", "read_input"]


def read_input(item: Input, text: str, lang: Lang, *, in_percent: bool = False, most: int | None = None) -> Any:
    """The value of ``item`` in ``text`` as typed in ``lang`` (a choice: its name in lower case).

    ``in_percent``: a fraction or a variation typed where its unit (%) is shown, so that a bare
    number above 1 is read in it (the pages; the CLI shows no unit and keeps refusing ``90``).
    ``most``: the most device counts a list may hold, where a request bounds it (the pages).
    A measurement table is its text, as a page holds it (the command line reads its file:
    :meth:`dpscale.kinds.Kind.read_cli`).
    """
    return kind_of(item).read_input(item, text, lang, in_percent=in_percent, most=most)
