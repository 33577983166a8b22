"""A message to show a user: a catalog template and its values, in English or in the user's language.

Apart from :mod:`dpscale.i18n` (the languages and their catalogs, which imports nothing of
dpscale's), because a number among a message's values is written by :mod:`dpscale.format`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpscale.i18n import Lang, translation

__all__ = ["Message"]


@dataclass(frozen=True, slots=True)
class Message:
    """A catalog message and the values it holds, for text the core writes and the edges show.

    ``template`` is a %-template (a literal % written %%) that Babel extracts from the call;
    ``str()`` gives it in English, :meth:`localized` in the user's language.
    """

    template: str
    params: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, template: str, **params: Any) -> Message:
        return cls(template, tuple(params.items()))

    def __str__(self) -> str:
        return self.template % {k: _shown(v, "en") for k, v in self.params}

    def localized(self, lang: Lang) -> str:
        """The message in ``lang``; a message among the values is localized too, a number written as ``lang`` does."""
        values = {k: _shown(v, lang) for k, v in self.params}
        return translation(lang).gettext(self.template) % values


def _shown(value: Any, lang: Lang) -> Any:
    """A value as a message shows it: a message in ``lang``, a float as ``lang`` writes it (9.4e+08: 943,718,400)."""
    if isinstance(value, Message):
        return value.localized(lang)
    if isinstance(value, float):  # ints (counts, limits, line numbers) stay as written
        from dpscale.format import format_number  # only where a message holds a number

        return format_number(value, lang)
    return value
