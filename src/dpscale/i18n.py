"""Languages: which ones dpscale speaks, how one is chosen, and the gettext catalogs."""

from __future__ import annotations

import functools
import gettext
import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from babel import Locale

__all__ = ["LANGUAGES", "Lang", "babel_locale", "language_from_env", "language_name", "lang_code", "translation"]

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
def babel_locale(lang: Lang) -> Locale:
    """Babel's locale data for ``lang``, parsed once: numbers are read and written with it."""
    from babel import Locale

    return Locale.parse(lang)


@functools.cache
def translation(lang: Lang) -> gettext.NullTranslations:
    """The compiled catalog for ``lang``; English is the source language."""
    if lang == "en":  # the messages are written in English: nothing to look up
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, localedir=LOCALE_DIR, languages=[lang], fallback=True)
