"""The errors dpscale raises.

The core raises these; only the edges (CLI, web) turn them into exit codes and HTTP statuses.

    DpscaleError                      base of everything dpscale raises on purpose
     ├── InvalidInput (ValueError)    a value out of range or unreadable; knows field, value, accepted
     │    ├── AmbiguousInput          readable two ways (an efficiency of "90"); says how to write it
     │    └── MissingInput            a required value not given at all
     ├── MissingExtra (ImportError)   a dependency is not installed; says what to install
     └── RunFailed (RuntimeError)     a measured run did not complete: which rank, how, what was left
"""

from __future__ import annotations

from typing import Any, ClassVar

from dpscale.i18n import lang_code, translation
from dpscale.messages import Message

__all__ = [
    "N_",
    "SHOWN",
    "AmbiguousInput",
    "DpscaleError",
    "InvalidInput",
    "MissingExtra",
    "MissingInput",
    "RunFailed",
    "escaped",
    "one_line",
    "show_value",
    "shortened",
]


def N_(text: str) -> str:  # gettext's name for "mark for translation, translate where shown"
    """Mark ``text`` for the message catalog; it is translated where it is shown (see InvalidInput.localized)."""
    return text


class DpscaleError(Exception):
    """Base class of every error dpscale raises on purpose."""


class InvalidInput(DpscaleError, ValueError):
    """A value that dpscale cannot use.

    ``field`` is the name of the input (as the user knows it; a :class:`~dpscale.messages.Message`
    where it is a place in words, such as a file's line), ``value`` what was given and
    ``accepted`` a short description of what would have been accepted. ``accepted`` and ``hint``
    are catalog messages, %-templates filled with ``params`` (a literal % is written %%): the
    exception reads in English, and :meth:`localized` in the user's language.
    """

    frame: ClassVar[str] = N_("%(field)s: got %(value)s; expected %(accepted)s")
    beside: ClassVar[str] = N_("got %(value)s; expected %(accepted)s")  # shown beside its field

    def __init__(
        self,
        field: str | Message,
        value: Any,
        accepted: str,
        *,
        hint: str | None = None,
        params: dict[str, Any] | None = None,
    ) -> None:
        values = tuple((params or {}).items())
        self.place = field
        self.value = value
        self.expected = Message(accepted, values)
        self.advice = None if hint is None else Message(hint, values)
        super().__init__(self.message)

    @property
    def field(self) -> str:
        return str(self.place)

    @property
    def accepted(self) -> str:
        return str(self.expected)

    @property
    def hint(self) -> str | None:
        return None if self.advice is None else str(self.advice)

    @property
    def message(self) -> str:
        return self.localized("en")

    def as_given(self, field: str | Message, value: Any) -> InvalidInput:
        """The same complaint, about ``value`` as the user gave it (the text a number was read from)."""
        return _rebuild(InvalidInput, field, value, self.expected, self.advice)

    def renamed(self, field: str | Message) -> InvalidInput:
        """The same complaint, of the same kind, about the field as an edge names it (``intra_bw``)."""
        return _rebuild(type(self), field, self.value, self.expected, self.advice)

    def localized(self, lang: str, *, named: bool = True) -> str:
        """The complaint in ``lang`` (``fr`` or ``en``, else English); a text missing from the catalog stays English.

        ``named=False`` leaves the field's name out, for a message shown beside the field itself.
        """
        language = lang_code(lang) or "en"  # a language dpscale does not speak: English
        _ = translation(language).gettext
        values = {
            "field": self.place.localized(language) if isinstance(self.place, Message) else self.place,
            "value": show_value(self.value),
            "accepted": self.expected.localized(language),
        }
        text = _(self.frame if named else self.beside) % values
        if self.advice is not None:
            text = _("%(message)s (%(hint)s)") % {"message": text, "hint": self.advice.localized(language)}
        return escaped(text)  # a file's name in the field, a value among the params: never a raw escape

    def __reduce__(self) -> tuple[Any, ...]:  # the same error, subclass and all, through pickling
        return (_rebuild, (type(self), self.place, self.value, self.expected, self.advice))


class AmbiguousInput(InvalidInput):
    """A value that could be read in more than one way; the hint says how to write it."""


class MissingInput(InvalidInput):
    """A required value that was not given; ``value`` is None."""

    frame: ClassVar[str] = N_("%(field)s: missing; expected %(accepted)s")
    beside: ClassVar[str] = N_("missing; expected %(accepted)s")

    def __init__(
        self, field: str | Message, accepted: str, *, hint: str | None = None, params: dict[str, Any] | None = None
    ) -> None:
        super().__init__(field, None, accepted, hint=hint, params=params)


class MissingExtra(DpscaleError, ImportError):
    """A dependency is missing; the message says what to install.

    ``extra`` names the extra of pyproject.toml that provides it (``pip install 'dpscale[fit]'``).
    A core dependency (``package``, such as pint) has no extra: every correct install has it, so
    the message says to reinstall dpscale.
    """

    def __init__(self, feature: str, extra: str | None = None, *, package: str | None = None) -> None:
        self.feature = feature
        self.extra = extra
        self.package = package
        if extra is not None:
            message = f"{feature} needs the '{extra}' extra: pip install 'dpscale[{extra}]'"
        else:
            needed = package or "a dependency"
            message = (
                f"{feature} needs {needed}, which every install of dpscale includes but this one lacks: "
                "reinstall dpscale (pip install --force-reinstall dpscale)"
            )
        super().__init__(message)


class RunFailed(DpscaleError, RuntimeError):
    """A distributed run stopped before it completed; the message names the rank and the cause."""


SHOWN = 60  # characters of a value an error echoes: enough to recognise it, never a whole file


def show_value(value: Any) -> str:
    """``value`` as an error shows it: quoted if text, cut to about :data:`SHOWN` characters with "…".

    Long text keeps its start and its end (a path keeps its file name); a huge number or list
    is described rather than written out.
    """
    if isinstance(value, str):
        if len(value) <= SHOWN:
            return repr(value)
        head, tail = value[: SHOWN // 3], value[-(SHOWN - SHOWN // 3) :]
        return repr(head)[:-1] + "…" + repr(tail)[1:]
    if isinstance(value, int) and value.bit_length() > 4 * SHOWN:  # str() of 10**5000 raises
        return f"{'-' if value < 0 else ''}a {int(value.bit_length() * 0.30103) + 1}-digit integer"
    if isinstance(value, list | tuple | dict) and len(value) > 8:  # never build the text of a huge container
        return f"{type(value).__name__} of {len(value)} items"
    try:
        text = str(value)
    except ValueError:  # a short list holding a 5000-digit integer
        return f"{type(value).__name__} of {len(value) if hasattr(value, '__len__') else '?'} items"
    return shortened(text, SHOWN)


def shortened(text: str, most: int) -> str:
    """``text`` whole when it has at most ``most`` characters, else its start and "…", ``most`` characters in all."""
    return text if len(text) <= most else text[: most - 1] + "…"


def one_line(text: str) -> str:
    """``text`` on one line: each run of white space (a line break, a table's padding) one space, none at the ends."""
    return " ".join(text.split())


_UNSAFE = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))  # control, format (bidi), lone surrogate, line breaks


def escaped(text: str) -> str:
    """``text`` with every control, format or line-separator character written as ``repr`` writes it.

    The same escapes the quoted value of an error gets (``'\\x1b'``), for the rest of what it quotes
    (a file's name in ``bad\\x1b[2J.csv, line 2``): a terminal shows a message, it never obeys it.
    Spaces and the narrow no-break space of French numbers are left as they are.
    """
    if text.isprintable():  # the usual case, at C speed
        return text
    import unicodedata  # only for a message that needs it

    return "".join(repr(c)[1:-1] if unicodedata.category(c) in _UNSAFE else c for c in text)


def _rebuild(
    cls: type[InvalidInput], place: str | Message, value: Any, expected: Message, advice: Message | None
) -> InvalidInput:
    err = cls.__new__(cls)
    err.place, err.value, err.expected, err.advice = place, value, expected, advice
    Exception.__init__(err, err.message)
    return err
