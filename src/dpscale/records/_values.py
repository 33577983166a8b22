"""What both kinds of record share: JSON values read by key, null for an undefined number, the time noted.

A key that is missing, null or of another type than dpscale writes is refused naming the key
(:data:`JSON_TYPE`); a record or profile that cannot be written is refused naming the input that
gave its path (:func:`unwritten`).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping
from typing import Any

from dpscale.errors import N_, InvalidInput, MissingInput

__all__ = [
    "JSON_TYPE",
    "finite_or_none",
    "integer_at",
    "json_number",
    "number_at",
    "string_at",
    "timestamp",
    "unwritten",
    "value_at",
]

JSON_TYPE = N_("a value of JSON type %(type)s")  # params={"type": "number"}, "integer", "string", "array"


def json_number(value: Any) -> float | None:
    """``value`` as a float if it is a JSON number within float's range, else None (true and false are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:  # an integer of 400 digits
        return None


def finite_or_none(x: float) -> float | None:
    """JSON has no NaN: an undefined number (an interval from one run, an error from two points) is null."""
    return x if math.isfinite(x) else None


def timestamp() -> str:
    """Now in UTC, as records and profiles note it: ``2024-05-01T12:00:00Z``."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def value_at(data: Any, key: str, kind: str, default: Any = None) -> Any:
    """``data[key]``, or MissingInput where it is absent or null (anything but an object holds no key)."""
    value = data.get(key, default) if isinstance(data, Mapping) else None
    if value is None:
        raise MissingInput(key, JSON_TYPE, params={"type": kind})
    return value


def number_at(data: Any, key: str, default: float | None = None) -> float:
    """``data[key]`` as a float, or InvalidInput naming ``key`` where it is not a JSON number."""
    value = value_at(data, key, "number", default)
    number = json_number(value)
    if number is None:
        raise InvalidInput(key, value, JSON_TYPE, params={"type": "number"})
    return number


def integer_at(data: Any, key: str) -> int:
    """``data[key]``, or InvalidInput naming ``key`` where it is not a whole JSON number."""
    value = value_at(data, key, "integer")
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(key, value, JSON_TYPE, params={"type": "integer"})
    return value


def string_at(data: Any, key: str) -> str:
    """``data[key]``, or InvalidInput naming ``key`` where it is not a JSON string."""
    value = value_at(data, key, "string")
    if not isinstance(value, str):
        raise InvalidInput(key, value, JSON_TYPE, params={"type": "string"})
    return value


def unwritten(field: str, path: str | os.PathLike[str], exc: OSError) -> InvalidInput:
    """The complaint about a file that could not be written after all (the disk filled up, the folder went away).

    ``path`` is shown as given (an error shows a long value by its start and end).
    """
    return InvalidInput(
        field,
        path,
        N_("a file that can be written (%(reason)s)"),
        params={"reason": exc.strerror or type(exc).__name__},
    )
