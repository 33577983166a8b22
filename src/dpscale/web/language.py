"""Which language a page speaks: ?lang= first, then the browser's Accept-Language, then French."""

from __future__ import annotations

from babel.core import negotiate_locale
from fastapi import Request

from dpscale.i18n import LANGUAGES, Lang

__all__ = ["choose_lang"]


def choose_lang(request: Request, lang: str | None) -> Lang:
    """?lang= first, then Accept-Language, then French (the seed's language)."""
    if lang in LANGUAGES:
        return lang
    header = request.headers.get("accept-language", "")
    preferred = [part.split(";")[0].strip().replace("-", "_") for part in header.split(",") if part.strip()]
    chosen = negotiate_locale(preferred, list(LANGUAGES), sep="_") if preferred else None
    if chosen is None and preferred:
        chosen = negotiate_locale([p.split("_")[0] for p in preferred], list(LANGUAGES), sep="_")
    return chosen if chosen in LANGUAGES else "fr"
