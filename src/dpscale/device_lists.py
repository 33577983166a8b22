"""Lists of device counts as people type them: ``8,16,64``, ``1..1024``, ``8..64+8``.

Each count is read as :func:`dpscale.parse.parse_count` reads one, in the page's language; the list
is refused whole, quoting it as typed, where one count in it is wrong.
"""

from __future__ import annotations

import re

from dpscale import _validate
from dpscale.errors import N_, InvalidInput
from dpscale.i18n import Lang
from dpscale.parse import parse_count

__all__ = ["MAX_DEVICE_LIST", "parse_device_list"]

MAX_DEVICE_LIST = 4096
TOO_MANY = N_("at most %(most)s device counts")


def parse_device_list(text: str, lang: Lang, *, field: str = "devices", most: int = MAX_DEVICE_LIST) -> list[int]:
    """Device counts: ``8,16,64`` or ``8;16;64``, ``1..1024`` (the powers of two from 1 to 1024),
    ``8..64+8`` (8 to 64 in steps of 8). Commas separate counts, so none is written with a thousands
    comma (``1024``, not ``1,024``, which is refused with a hint rather than read as 1 and 24; a space,
    ``1 024``, is fine). At most ``most`` counts."""
    accepted = N_("counts such as 8,16,64, a range of powers of two such as 1..1024, or 8..64+8 for steps of 8")
    if not isinstance(text, str) or not text.strip() or len(text) > 1000:
        raise InvalidInput(field, text, accepted)
    counts: list[int] = []
    pieces = re.split(r"([;,])", text)  # the pieces, and between them the separator that came before each
    for index, part in enumerate(pieces[::2]):
        part = part.strip()
        _no_thousands_comma(part, pieces, index, field, text, accepted)
        if ".." in part:
            low_text, _, rest = part.partition("..")
            high_text, _, step_text = rest.partition("+")
            low = _device_count(low_text, lang, field=field, typed=text)
            high = _device_count(high_text, lang, field=field, typed=text)
            if high < low:
                raise InvalidInput(field, text, accepted)
            if step_text:
                step = _device_count(step_text, lang, field=field, typed=text, bounded=False)
                stepped = range(low, high + 1, step)
                if len(counts) + len(stepped) > most:  # refused before a billion ints are made
                    raise InvalidInput(field, text, TOO_MANY, params={"most": most})
                counts.extend(stepped)
            else:
                n = low
                while n < high:
                    counts.append(n)
                    n *= 2
                counts.append(high)
        else:
            counts.append(_device_count(part, lang, field=field, typed=text))
        if len(counts) > most:
            raise InvalidInput(field, text, TOO_MANY, params={"most": most})
    return sorted(set(counts))


def _no_thousands_comma(part: str, pieces: list[str], index: int, field: str, typed: str, accepted: str) -> None:
    """Refuse ``1,024``: a comma then three digits, the first a 0, is a thousands group, not a count (no count
    begins with 0), and reading it as 1 and 24 would answer another question. ``8,16,128`` stays a list."""
    # Not a group: the first piece, one after a semicolon or after a comma and a space, or one without a leading 0.
    # A space after the digits changes nothing (1,024 with a space after it, at the list's end, is 1024 still).
    if index == 0 or pieces[2 * index - 1] != "," or pieces[2 * index][:1].isspace() or not part.startswith("0"):
        return
    before = pieces[2 * index - 2].rpartition("..")[2].lstrip()
    digits = part + before
    if len(part) == 3 and 1 <= len(before) <= 3 and digits.isascii() and digits.isdigit():
        hint = N_("commas separate counts: for %(joined)s devices, write %(joined)s without a comma")
        raise InvalidInput(field, typed, accepted, hint=hint, params={"joined": before + part})


def _device_count(text: str, lang: Lang, *, field: str, typed: str, bounded: bool = True) -> int:
    """One count of the list ``typed``; refused as a count is, quoting the list as it was typed (not the piece)."""
    try:
        number = parse_count(text, lang, field=field)
        return _validate.device_count(field, number) if bounded else number
    except InvalidInput as exc:
        raise exc.as_given(field, typed) from None
