"""Languages: which ones dpscale speaks, how one is chosen, and the gettext catalogs."""

from __future__ import annotations

import functools
import gettext
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = ["LANGUAGES", "Lang", "Message", "language_from_env", "language_name", "lang_code", "translation"]

Lang = Literal["fr", "en"]
LANGUAGES: tuple[Lang, ...] = ("fr", "en")
LOCALE_DIR = Path(__file__).parent / "locales"
DOMAIN = "dpscale"
_NAMES = {"fr": "French", "en": "English"}


def language_name(lang: Lang) -> str:
    return _NAMES[lang]


def lang_code(value: object) -> Lang | None:
    """``fr`` or ``en`` from ``fr``, ``fr_FR``, ``en-GB`` and the like; None for any other language."""
    code = value.strip().replace("-", "_").split("_")[0].lower() if isinstance(value, str) else ""
    return code if code in LANGUAGES else None


def language_from_env(default: Lang = "en") -> Lang:
    """The language of the environment's locale (LANGUAGE, LC_ALL, LC_MESSAGES, LANG), else ``default``."""
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(name, "")
        for candidate in value.split(":"):
            code = candidate.split(".")[0].replace("-", "_").split("_")[0].lower()
            if code in LANGUAGES:
                return code
            if code and code not in ("c", "posix"):
                return default
    return default


@functools.cache
def translation(lang: Lang) -> gettext.NullTranslations:
    """The compiled catalog for ``lang``; English is the source language."""
    if lang == "en":  # the messages are written in English: nothing to look up
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, localedir=LOCALE_DIR, languages=[lang], fallback=True)


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
        from dpscale.format import format_number  # Babel, only where a message holds a number

        return format_number(value, lang)
    return value
