"""Kinds read from a word or a list: a label, a path, a choice, a switch, device counts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dpscale.errors import InvalidInput
from dpscale.kinds.kind import ApiParameter, Kind

if TYPE_CHECKING:
    from dpscale.i18n import Lang
    from dpscale.inputs import Input

__all__ = ["Choice", "DeviceList", "Path", "Switch", "Text"]


class Text(Kind):
    """A short label the core checks (samples/s, EUR); its default follows the user's language."""

    __slots__ = ()
    name = "text"

    def read_cli(self, item: Input, given: Any, lang: Lang) -> Any:
        if given is None and item.page.example and item.default == item.page.example[1]:
            return item.page.example[0] if lang == "fr" else item.page.example[1]  # as the page is prefilled
        return super().read_cli(item, given, lang)

    def api(self, item: Input, *, most: int) -> ApiParameter:
        from dpscale._validate import LABEL_LENGTH, LABEL_PATTERN

        return ApiParameter(str, {"min_length": 1, "max_length": item.most or LABEL_LENGTH, "pattern": LABEL_PATTERN})


class Path(Kind):
    """A file the command line reads; no page or API takes a path on the server."""

    __slots__ = ()
    name = "path"


class Choice(Kind):
    """One of the input's choices (or a synonym), read in lower case; the page's menu."""

    __slots__ = ()
    name = "choice"
    element = "select"

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        return text.strip().lower() if isinstance(text, str) else text

    def plain(self, item: Input, value: Any) -> str:
        return str(item.check(value))

    def api_value(self, item: Input, value: Any) -> Any:
        return item.check(value)

    def field_text(self, item: Input, value: Any, text: str) -> str:
        try:
            return str(item.check(value))  # a synonym (full_shard, hsdp) as the choice it is
        except InvalidInput:
            return text  # kept as typed, for its error to quote

    def options(self, item: Input) -> list[tuple[str, str, bool]]:
        empty = [("", item.page.empty_label, True)] if item.page.empty_label else []
        labels = item.page.choice_labels
        return empty + [(value, labels[i] if labels else value, bool(labels)) for i, value in enumerate(item.choices)]

    def api(self, item: Input, *, most: int) -> ApiParameter:
        return ApiParameter(str, {"json_schema_extra": {"enum": list(item.accepted)}})


class Switch(Kind):
    """On or off (yes/no, oui/non): the command line's flag, the page's menu."""

    __slots__ = ()
    name = "switch"
    bounded = True
    element = "select"
    flag = True

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        from dpscale.parse import parse_switch

        return parse_switch(text, lang, field=field)

    def read_cli(self, item: Input, given: Any, lang: Lang) -> Any:
        return (not item.default) if given else None  # the flag says the other than the default

    def show(self, value: Any, lang: Lang) -> str:
        return "on" if value else "off"

    def plain(self, item: Input, value: Any) -> str:
        return self.show(value, "en")

    def field_text(self, item: Input, value: Any, text: str) -> str:
        return self.show(value, "en")  # a link's yes or oui as the menu's option

    def options(self, item: Input) -> list[tuple[str, str, bool]]:
        return [("on", item.page.choice_labels[0], True), ("off", item.page.choice_labels[1], True)]

    def api(self, item: Input, *, most: int) -> ApiParameter:
        return ApiParameter(bool, {})


class DeviceList(Kind):
    """Device counts: 8,16,64 or 1..1024 (a list of ints); commas separate them in both languages."""

    __slots__ = ()
    name = "device_list"
    bounded = True

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        from dpscale.device_lists import parse_device_list

        if most is None:
            return parse_device_list(text, lang, field=field)
        return parse_device_list(text, lang, field=field, most=most)

    def show(self, value: Any, lang: Lang) -> str:
        return ",".join(str(n) for n in value)

    def plain(self, item: Input, value: Any) -> str:
        return self.show(value, "en")

    def api(self, item: Input, *, most: int) -> ApiParameter:
        return ApiParameter(
            int, {"min_length": 1, "max_length": most}, {"ge": item.low, "le": item.high}, " (repeat the key)"
        )
