"""The errors dpscale raises.

The core raises these; only the edges (CLI, web) turn them into exit codes and HTTP statuses.

    DpscaleError                      base of everything dpscale raises on purpose
     ├── InvalidInput (ValueError)    a value out of range or unreadable; knows field, value, accepted
     │    ├── AmbiguousInput          readable two ways (an efficiency of "90"); says how to write it
     │    └── MissingInput            a required value not given at all
     ├── MissingExtra (ImportError)   an optional part is not installed; says what to pip install
     └── RunFailed (RuntimeError)     a measured run did not complete: which rank, how, what was left
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Protocol

__all__ = ["N_", "AmbiguousInput", "DpscaleError", "InvalidInput", "MissingExtra", "MissingInput", "RunFailed"]


def N_(text: str) -> str:  # gettext's name for "mark for translation, translate where shown"
    """Mark ``text`` for the message catalog; it is translated where it is shown (see InvalidInput.localized)."""
    return text


class DpscaleError(Exception):
    """Base class of every error dpscale raises on purpose."""


class InvalidInput(DpscaleError, ValueError):
    """A value that dpscale cannot use.

    ``field`` is the name of the input (as the user knows it; a :class:`dpscale.i18n.Message` where
    it is a place in words, such as a file's line, kept in English in :attr:`field`), ``value`` what was given and
    ``accepted`` a short description of what would have been accepted, in English. ``accepted``
    and ``hint`` are catalog messages: given ``params`` (even ``{}``) they are %-templates, filled
    in here and, translated, by :meth:`localized` (the French page and ``--lang fr`` show that).
    """

    frame: ClassVar[str] = N_("%(field)s: got %(value)s; expected %(accepted)s")
    beside: ClassVar[str] = N_("got %(value)s; expected %(accepted)s")  # shown beside its field

    def __init__(
        self,
        field: str | Localizable,
        value: Any,
        accepted: str,
        *,
        hint: str | None = None,
        params: dict[str, Any] | None = None,
    ) -> None:
        self.field = str(field)
        self.place = field
        self.value = value
        self.params = None if params is None else dict(params)
        self.templates = (accepted, hint)
        self.accepted = _fill(accepted, self.params)
        self.hint = None if hint is None else _fill(hint, self.params)
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """The complaint in English: the catalog's messages as written."""
        return self._text(lambda text: text, "en")

    def as_given(self, field: str | Localizable, value: Any) -> InvalidInput:
        """The same complaint, about ``value`` as the user gave it (the text a number was read from)."""
        accepted, hint = self.templates
        return InvalidInput(field, value, accepted, hint=hint, params=self.params)

    def localized(self, lang: str, *, named: bool = True) -> str:
        """:attr:`message` in ``lang`` (``fr`` or ``en``); a text missing from the catalog stays English.

        ``named=False`` leaves the field's name out, for a message shown beside the field itself.
        """
        if lang == "en" and named:
            return self.message
        from dpscale.i18n import translation, validate_lang

        language = validate_lang(lang)
        return self._text(translation(language).gettext, language, named=named)

    def _text(self, _: Callable[[str], str], lang: Any, *, named: bool = True) -> str:
        accepted, hint = (None if t is None else _fill(_(t), self.params) for t in self.templates)
        field = self.field if isinstance(self.place, str) else self.place.localized(lang)
        frame = self.frame if named else self.beside
        text = _(frame) % {"field": field, "value": _show(self.value), "accepted": accepted}
        return _("%(message)s (%(hint)s)") % {"message": text, "hint": hint} if hint else text

    def __reduce__(self) -> tuple[Any, ...]:  # keep field/value/accepted through pickling
        accepted, hint = self.templates
        return (_rebuild, (type(self), self.place, self.value, accepted, hint, self.params))


class AmbiguousInput(InvalidInput):
    """A value that could be read in more than one way; the hint says how to write it."""


class MissingInput(InvalidInput):
    """A required value that was not given; ``value`` is None."""

    frame: ClassVar[str] = N_("%(field)s: missing; expected %(accepted)s")
    beside: ClassVar[str] = N_("missing; expected %(accepted)s")

    def __init__(
        self, field: str | Localizable, accepted: str, *, hint: str | None = None, params: dict[str, Any] | None = None
    ) -> None:
        super().__init__(field, None, accepted, hint=hint, params=params)

    def __reduce__(self) -> tuple[Any, ...]:
        accepted, hint = self.templates
        return (_rebuild_missing, (self.place, accepted, hint, self.params))


class MissingExtra(DpscaleError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, feature: str, extra: str) -> None:
        self.feature = feature
        self.extra = extra
        super().__init__(f"{feature} needs the '{extra}' extra: pip install 'dpscale[{extra}]'")


class RunFailed(DpscaleError, RuntimeError):
    """A distributed run stopped before it completed; the message names the rank and the cause."""


def _show(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    return str(value)


class Localizable(Protocol):
    """Text that can be shown in English (``str()``) or in a language (``localized``)."""

    def localized(self, lang: Any) -> str: ...


def _fill(template: str, params: dict[str, Any] | None) -> str:
    # A template given params (even none: {}) is %-formatted, so it writes a literal % as %%.
    return template if params is None else template % params


def _rebuild(
    cls: type[InvalidInput],
    field: str | Localizable,
    value: Any,
    accepted: str,
    hint: str | None,
    params: dict[str, Any] | None,
) -> InvalidInput:
    return cls(field, value, accepted, hint=hint, params=params)


def _rebuild_missing(
    field: str | Localizable, accepted: str, hint: str | None, params: dict[str, Any] | None
) -> MissingInput:
    return MissingInput(field, accepted, hint=hint, params=params)
