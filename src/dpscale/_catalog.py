"""The texts of the shipped TOML tables that pages show, found for the translation catalog.

``make locales`` runs Babel's extraction with ``babel.cfg``, which names :func:`extract_descriptions`
for ``presets.toml``: each ``description`` there (how the page's menus name a link preset) becomes a
catalog message, so French pages name "NVLink 4 via NVSwitch" where English ones say "through".
Only Babel imports this module; nothing in dpscale does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator, Mapping
from typing import IO, Any

__all__ = ["extract_descriptions"]

_DESCRIPTION = re.compile(r'^\s*description\s*=\s*"((?:[^"\\]|\\.)*)"\s*(?:#.*)?$')


def extract_descriptions(
    fileobj: IO[bytes], keywords: Mapping[str, Any], comment_tags: Collection[str], options: Mapping[str, Any]
) -> Iterator[tuple[int, str, str, list[str]]]:
    """Babel's extraction method: (line, function, message, comments) for each ``description = "…"``."""
    for number, line in enumerate(fileobj.read().decode("utf-8").splitlines(), start=1):
        if found := _DESCRIPTION.match(line):
            yield number, "", json.loads(f'"{found.group(1)}"'), ["A link preset's name in a menu."]
