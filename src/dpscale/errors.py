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

from typing import Any

__all__ = ["AmbiguousInput", "DpscaleError", "InvalidInput", "MissingExtra", "MissingInput", "RunFailed"]


class DpscaleError(Exception):
    """Base class of every error dpscale raises on purpose."""


class InvalidInput(DpscaleError, ValueError):
    """A value that dpscale cannot use.

    ``field`` is the name of the input (as the user knows it), ``value`` what was given and
    ``accepted`` a short description of what would have been accepted.
    """

    def __init__(self, field: str, value: Any, accepted: str, *, hint: str | None = None) -> None:
        self.field = field
        self.value = value
        self.accepted = accepted
        self.hint = hint
        super().__init__(self.message)

    @property
    def message(self) -> str:
        text = f"{self.field}: got {_show(self.value)}; expected {self.accepted}"
        if self.hint:
            text += f" ({self.hint})"
        return text

    def __reduce__(self) -> tuple[Any, ...]:  # keep field/value/accepted through pickling
        return (_rebuild, (type(self), self.field, self.value, self.accepted, self.hint))


class AmbiguousInput(InvalidInput):
    """A value that could be read in more than one way; the hint says how to write it."""


class MissingInput(InvalidInput):
    """A required value that was not given; ``value`` is None."""

    def __init__(self, field: str, accepted: str, *, hint: str | None = None) -> None:
        super().__init__(field, None, accepted, hint=hint)

    @property
    def message(self) -> str:
        text = f"{self.field}: missing; expected {self.accepted}"
        return f"{text} ({self.hint})" if self.hint else text

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_missing, (self.field, self.accepted, self.hint))


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


def _rebuild(cls: type[InvalidInput], field: str, value: Any, accepted: str, hint: str | None) -> InvalidInput:
    return cls(field, value, accepted, hint=hint)


def _rebuild_missing(field: str, accepted: str, hint: str | None) -> MissingInput:
    return MissingInput(field, accepted, hint=hint)
