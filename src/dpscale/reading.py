"""An input's text read by its kind (see :mod:`dpscale.inputs`): what every edge calls on what it was given.

The parsers themselves are :mod:`dpscale.parse`'s; this is the table from an input's kind to its
parser, and the check of the value read against the input's bounds, said about the text as typed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dpscale.errors import InvalidInput
from dpscale.i18n import Lang
from dpscale.inputs import Input
from dpscale.parse import (
    number_reader,
    parse_bandwidth,
    parse_bytes,
    parse_count,
    parse_device_list,
    parse_duration,
    parse_efficiency,
    parse_number,
    parse_references,
    parse_scaled_count,
    parse_seconds,
    parse_switch,
    parse_variation,
)

__all__ = ["MAX_LOG_CHARACTERS", "PERCENT_KINDS", "read_input"]

MAX_LOG_CHARACTERS = 2**20  # an nccl-tests log sent as text: 5 to 20 kB as runs print them; a request's own bound


def read_input(item: Input, text: str, lang: Lang, *, in_percent: bool = False) -> Any:
    """The value of ``item`` in ``text`` as typed in ``lang`` (a choice: its name in lower case).

    ``in_percent``: a fraction or a variation typed where its unit (%) is shown, so that a bare
    number above 1 is read in it (the pages; the CLI shows no unit and keeps refusing ``90``).
    """
    if item.kind == "choice":
        return text.strip().lower() if isinstance(text, str) else text
    if item.kind in ("path", "text"):
        return text
    if item.kind == "nccltests":  # a log's text, as a file of it is read; its errors name the input and the line
        from dpscale._files import excerpt
        from dpscale.nccltests import read_text

        try:
            return read_text(text, item.name, most=MAX_LOG_CHARACTERS)
        except InvalidInput as exc:  # about the whole text: shown by its start, as a line would be
            raise exc.as_given(item.name, excerpt(" ".join(text.split()))) if exc.field == "import" else exc from None
    if item.kind == "measurements":  # a file's points, its numbers read as people write them in lang
        from dpscale.fit import read_points

        return read_points(text, read_number=number_reader(lang))
    if in_percent and item.kind in PERCENT_KINDS:
        value = _READERS[item.kind](text, lang, field=item.name, in_percent=True)
    else:
        value = _READERS[item.kind](text, lang, field=item.name)
    try:
        return item.check(value)  # within its bounds, said about the text as typed
    except InvalidInput as exc:
        raise exc.as_given(item.name, text) from None


PERCENT_KINDS = ("fraction", "variation")  # the kinds a page shows in %

_READERS: dict[str, Callable[..., Any]] = {
    "count": parse_count,
    "number": parse_number,
    "fraction": parse_efficiency,
    "variation": parse_variation,
    "scaled_count": parse_scaled_count,
    "bytes": parse_bytes,
    "bandwidth": parse_bandwidth,
    "seconds": parse_seconds,
    "device_list": parse_device_list,
    "switch": parse_switch,
    "duration": parse_duration,
    "reference": parse_references,
}
