"""Numbers as people write them: counts, shares, sizes with their units, times."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from dpscale.kinds.kind import ApiParameter, Kind, plain_number, shown_number

if TYPE_CHECKING:
    from dpscale.i18n import Lang
    from dpscale.inputs import Input

__all__ = ["Bandwidth", "Bytes", "Count", "Duration", "Fraction", "Number", "ScaledCount", "Seconds", "Variation"]


class Number(Kind):
    """A finite number above 0 as people write it (2 000, 2,5 in French)."""

    __slots__ = ()
    name = "number"
    bounded = True
    localized = True
    numeric = True
    inputmode = "decimal"
    python: ClassVar[type] = float

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        from dpscale.parse import parse_number

        return parse_number(text, lang, field=field)

    def show(self, value: Any, lang: Lang) -> str:
        number = shown_number(value, lang)
        return f"{number} {self.unit}" if self.unit else number

    def plain(self, item: Input, value: Any) -> str:
        return plain_number(value) + self.unit

    def api(self, item: Input, *, most: int) -> ApiParameter:
        return ApiParameter(self.python, {"ge": item.low, "le": item.high})


class Count(Number):
    """A whole number: 64, 1 024, 1e3."""

    __slots__ = ()
    name = "count"
    inputmode = "numeric"
    python = int

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        from dpscale.parse import parse_count

        return parse_count(text, lang, field=field)

    def show(self, value: Any, lang: Lang) -> str:
        from dpscale.format import format_number

        return format_number(value, lang)


class Fraction(Number):
    """A share: 90 % or 0.9; on a page, shown in %, a bare 85 is 85 %."""

    __slots__ = ()
    name = "fraction"
    percent = "share"

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        from dpscale.parse import parse_efficiency

        return parse_efficiency(text, lang, field=field, in_percent=in_percent)

    def show(self, value: Any, lang: Lang) -> str:
        from dpscale.format import format_percent

        return format_percent(value, lang, decimals=6)


class Variation(Fraction):
    """A coefficient of variation, 0 to under 1: 2 % or 0.02; on a page every bare number is in %."""

    __slots__ = ()
    name = "variation"
    percent = "variation"

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        from dpscale.parse import parse_variation

        return parse_variation(text, lang, field=field, in_percent=in_percent)


class ScaledCount(Number):
    """A count with an SI suffix, as model sizes are written: 25.6M, 7B."""

    __slots__ = ()
    name = "scaled_count"
    inputmode = "text"

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        from dpscale.parse import parse_scaled_count

        return parse_scaled_count(text, lang, field=field)


class _Quantity(Number):
    """A number and its unit, as people write them; written back as a number of the base unit."""

    __slots__ = ()
    inputmode = "text"
    kept_when_same = True


class Bytes(_Quantity):
    """Bytes from 25MiB, 1.5 GB (80 Go in French)."""

    __slots__ = ()
    name = "bytes"
    unit = "B"

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        from dpscale.parse import parse_bytes

        return parse_bytes(text, lang, field=field)


class Bandwidth(_Quantity):
    """Bytes per second from 100Gb/s, 12.5GB/s."""

    __slots__ = ()
    name = "bandwidth"
    unit = "B/s"
    beside_preset = True

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        from dpscale.parse import parse_bandwidth

        return parse_bandwidth(text, lang, field=field)


class Seconds(_Quantity):
    """Seconds from 5us, 0.3 ms."""

    __slots__ = ()
    name = "seconds"
    unit = "s"

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        from dpscale.parse import parse_seconds

        return parse_seconds(text, lang, field=field)


class Duration(Seconds):
    """Seconds from 30 min, 14 d (14 j in French)."""

    __slots__ = ()
    name = "duration"

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        from dpscale.parse import parse_duration

        return parse_duration(text, lang, field=field)
