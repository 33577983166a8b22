"""The kind of a fit's choice of models: which scaling laws it tries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from dpscale.kinds.kind import ApiParameter, Kind

if TYPE_CHECKING:
    from dpscale.inputs import Input

__all__ = ["AUTO", "ModelNames", "models_named"]

AUTO = "auto"  # every model, ranked by AICc


def models_named(text: str | None) -> list[str] | None:
    """The models ``text`` names (``amdahl,usl``); None for all of them (``auto``, or nothing)."""
    if text is None or text.strip().lower() in ("", AUTO):
        return None
    return [name.strip().lower() for name in text.split(",")]  # fit() says which name it does not know


class ModelNames(Kind):
    """``auto`` (every model, ranked by AICc) or the models' names (``amdahl,usl``) as text; a list of names in
    the API, which leaves it out for every model."""

    __slots__ = ()
    name = "model_names"
    element = "select"

    def options(self, item: Input) -> list[tuple[str, str, bool]]:
        """Every model ranked by AICc, or one of the catalogue, as a reader calls it (the page's menu)."""
        from dpscale.errors import N_
        from dpscale.fit.laws import MODELS

        catalogue = [(law.name, law.title or law.name, bool(law.title)) for law in MODELS.values()]
        return [(AUTO, N_("all, ranked by AICc"), True), *catalogue]

    def api(self, item: Input, *, most: int) -> ApiParameter:
        from dpscale.fit.laws import MODELS

        described = "The models to fit, each ranked by AICc; left out, every one."
        names: Any = Literal.__getitem__(tuple(MODELS))  # held to the catalogue, and said so in the schema
        return ApiParameter(names, {}, {}, described=described)  # an empty list: every model, as before

    def field_text(self, item: Input, value: Any, text: str) -> str:
        """The menu's option a link's one model names (AMDAHL: amdahl), so that the page shows what it fitted."""
        named = models_named(text)
        return named[0] if named is not None and len(named) == 1 else text

    def api_value(self, item: Input, value: Any) -> Any:
        return models_named(value)

    def from_api(self, item: Input, given: Any) -> Any:
        return None if given is None else ",".join(given)
