"""Which language a page speaks: ?lang=, else the browser's Accept-Language, else French.

A browser that asks only for other languages (German, Spanish…) gets English: its reader is
likelier to read English, and English pages refuse ``2,500`` where French ones read 2.5.
"""

from __future__ import annotations

from babel.core import negotiate_locale
from fastapi import Request

from dpscale.i18n import LANGUAGES, Lang

__all__ = ["choose_lang", "lang_of"]


def choose_lang(request: Request, lang: str | None) -> Lang:
    """?lang= first, then Accept-Language (English for any other language), then French (the seed's)."""
    return lang_of(lang, request.headers.get("accept-language", ""))


def lang_of(lang: str | None, accept_language: str) -> Lang:
    """:func:`choose_lang` from the ``lang`` parameter and the Accept-Language header's text."""
    if lang in LANGUAGES:
        return lang
    header = accept_language
    preferred = [part.split(";")[0].strip().replace("-", "_") for part in header.split(",") if part.strip()]
    chosen = negotiate_locale(preferred, list(LANGUAGES), sep="_") if preferred else None
    if chosen is None and preferred:
        chosen = negotiate_locale([p.split("_")[0] for p in preferred], list(LANGUAGES), sep="_")
    if chosen in LANGUAGES:
        return chosen
    return "en" if preferred else "fr"
