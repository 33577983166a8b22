"""What every kind of input says to every edge: the base of :mod:`dpscale.kinds`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple, get_args, get_origin

from dpscale.errors import InvalidInput

if TYPE_CHECKING:
    from dpscale.i18n import Lang
    from dpscale.inputs import Input

__all__ = ["ApiParameter", "Kind", "plain_number", "shown_number"]


class ApiParameter(NamedTuple):
    """An input as the API takes it: FastAPI's ``Query`` keywords beyond its description and alias."""

    python: Any  # the value's type (a list's: its elements')
    query: dict[str, Any]  # bounds, lengths, pattern, json_schema_extra
    each: dict[str, Any] | None = None  # a list's: its elements' bounds (None: not a list)
    said: str = ""  # what the parameter's description adds
    described: str = ""  # its description in place of the input's help, where the API takes another shape than text


class Kind:
    """A text taken as typed: the base of every kind, and what each says to every edge."""

    __slots__ = ()
    name: ClassVar[str] = ""  # what definitions call it: Input("devices", "count", …)
    bounded: ClassVar[bool] = False  # the value read is held to the input's bounds (read_input)
    # Written back on the page's language switch (2,5 → 2.5); otherwise kept as typed.
    localized: ClassVar[bool] = False
    numeric: ClassVar[bool] = False  # numbers as people write them: a French page says the other reading of 2,500
    respells: ClassVar[bool] = True  # the switch may respell it in place: 1,5 j → 1.5 d, 80 Go → 80 GB
    kept_when_same: ClassVar[bool] = False  # a text both languages read alike is kept as typed (100Gb/s)
    unit: ClassVar[str] = ""  # what its number counts, as a value is written back: B/s, B, s
    # The page's widget
    element: ClassVar[str] = "input"  # input, select or textarea
    inputmode: ClassVar[str] = "text"  # the keyboard a phone shows
    percent: ClassVar[str] = ""  # in %: "share" (85 and 0.85 mean 85 %) or "variation" (every bare number in %)
    rows: ClassVar[int] = 0  # a textarea's
    file: ClassVar[bool] = False  # a file chooser fills the textarea
    file_types: ClassVar[str] = ""  # what the file chooser offers: its accept list
    file_label: ClassVar[str] = ""  # the file chooser's label, a catalog message
    file_too_large: ClassVar[str] = ""  # a file too large to send, said with %(limit)s bytes and %(mib)s MiB
    beside_preset: ClassVar[bool] = False  # typed in place of a preset chosen above (a link's bandwidth)
    # The command line and the API
    flag: ClassVar[bool] = False  # a flag (--overlap, --no-overlap), not a text
    metavar: ClassVar[str | None] = None  # None: Typer's own
    cli_file: ClassVar[bool] = False  # the command line takes it in a file (its export writes one)
    reads_file: ClassVar[bool] = False  # its text names a file, read at the edge: the value is what it holds
    api_text: ClassVar[bool] = False  # the API takes its text, read as the English page reads it
    posted: ClassVar[bool] = False  # too long for a link: a page posts it and the API takes it in a JSON body

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        """The value ``text`` (typed in ``lang``) holds, errors naming ``field``.

        ``in_percent``: typed where its unit (%) is shown, a bare number read in it (the pages;
        the command line shows no unit). ``most``: the longest list a request may ask for.
        """
        return text

    def read_input(
        self, item: Input, text: str, lang: Lang, *, in_percent: bool = False, most: int | None = None
    ) -> Any:
        """The value of ``item`` in ``text``, within its bounds, said about the text as typed."""
        value = self.read(text, lang, field=item.name, in_percent=in_percent, most=most)
        if not self.bounded:
            return value
        try:
            return item.check(value)
        except InvalidInput as exc:
            raise exc.as_given(item.name, text) from None

    def read_cli(self, item: Input, given: Any, lang: Lang) -> Any:
        """The value of the option as the command line gave it (None: not given)."""
        return None if given is None else self.read_input(item, given, lang)

    def show(self, value: Any, lang: Lang) -> str | None:
        """``value`` as ``lang`` writes it (None: it cannot be written back, its text is kept)."""
        return str(value)

    def plain(self, item: Input, value: Any) -> str:
        """``value`` as the English command line reads it back exactly."""
        return str(value)

    def plain_each(self, item: Input, value: Any) -> tuple[str, ...]:
        """The texts of ``value``, one an option, where the command line takes the option again for each."""
        return (self.plain(item, value),)

    def api_value(self, item: Input, value: Any) -> Any:
        """``value`` as the API's JSON takes it."""
        return value

    def from_api(self, item: Input, given: Any) -> Any:
        """The value the API was given (a query's parameter, a JSON body's key), as the build takes it: a text
        the API takes as typed (:attr:`api_text`) is read as the English page reads it."""
        return self.read_input(item, given, "en") if self.api_text and given is not None else given

    def field_text(self, item: Input, value: Any, text: str) -> str:
        """What the page's field holds once ``value`` is read from ``text`` (a menu: the option it is)."""
        return text

    def options(self, item: Input) -> list[tuple[str, str, bool]]:
        """A menu's options: (value, label, whether the label is a catalog message)."""
        return []

    def api(self, item: Input, *, most: int) -> ApiParameter:
        """The API's parameter (``most``: the longest list a request may send)."""
        return ApiParameter(str, {})

    def schema(self, item: Input, *, most: int) -> dict[str, Any]:
        """The JSON schema of the API's parameter, as :meth:`api` makes it."""
        shape = self.api(item, most=most)
        if shape.each is None:
            return _schema(shape.python, shape.query, "Length")
        array = _schema(list, shape.query, "Items")
        return {**array, "items": _schema(shape.python, shape.each, "Length")}

    def __eq__(self, other: object) -> bool:
        return other is self or (isinstance(other, str) and other == self.name)  # the name it replaces

    def __hash__(self) -> int:
        return hash(self.name)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<kind {self.name}>"


_JSON_TYPE = {int: "integer", float: "number", str: "string", bool: "boolean", list: "array"}


def _schema(python: Any, query: dict[str, Any], lengths: str) -> dict[str, Any]:
    if get_origin(python) is Literal:  # names of a catalogue
        return {"type": "string", "enum": list(get_args(python)), **_schema(str, query, lengths)}
    out: dict[str, Any] = {"type": _JSON_TYPE.get(python, "object")}  # else a model: an object of its fields
    names = {"ge": "minimum", "le": "maximum", "min_length": "min" + lengths, "max_length": "max" + lengths}
    for key, value in query.items():
        if key == "json_schema_extra":
            out.update(value)
        elif value is not None:
            out[names.get(key, key)] = value
    return out


def shown_number(number: float, lang: Lang) -> str:
    """A number as ``lang`` writes it, every digit kept (2 000,5 in French)."""
    from dpscale.format import format_number

    return format_number(number, lang, exact=True)


def plain_number(value: Any) -> str:
    """A number as the English command line and the API read it back exactly."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    number = float(value)
    return str(int(number)) if number.is_integer() and abs(number) < 1e15 else repr(number)
