"""A chart written out: the SVG a page shows (rendered by the server, no script needed) and the
``--plot`` files, SVG, PNG or the Vega-Lite spec as JSON. Needs the ``plot`` extra (vl-convert-python)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dpscale.errors import InvalidInput, MissingExtra
from dpscale.i18n import Lang

if TYPE_CHECKING:
    import altair as alt

__all__ = ["save_chart", "to_svg"]


def _vlc() -> Any:
    try:
        import vl_convert
    except ImportError as exc:
        raise MissingExtra("chart export", "plot") from exc
    return vl_convert


def _spec(chart: alt.TopLevelMixin, width: int) -> dict[str, Any]:
    spec: dict[str, Any] = chart.to_dict()
    spec["width"] = width  # "container" has no meaning outside a page
    return spec


def to_svg(chart: alt.TopLevelMixin, *, lang: Lang = "en", width: int = 640) -> str:
    """The chart as an SVG document, numbers formatted in ``lang``."""
    vlc = _vlc()
    locale = "fr-FR" if lang == "fr" else "en-US"
    return str(vlc.vegalite_to_svg(_spec(chart, width), format_locale=locale))


def save_chart(chart: alt.TopLevelMixin, path: str | Path, *, lang: Lang = "en") -> Path:
    """Write the chart to ``path``: ``.svg``, ``.png`` or ``.json`` (the Vega-Lite spec)."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix == ".svg":
        target.write_text(to_svg(chart, lang=lang), encoding="utf-8")
    elif suffix == ".png":
        vlc = _vlc()
        locale = "fr-FR" if lang == "fr" else "en-US"
        target.write_bytes(vlc.vegalite_to_png(_spec(chart, 640), scale=2, format_locale=locale))
    elif suffix == ".json":
        import json

        target.write_text(json.dumps(_spec(chart, 640), ensure_ascii=False), encoding="utf-8")
    else:
        raise InvalidInput("plot", str(path), "a file name ending in .svg, .png or .json")
    return target
