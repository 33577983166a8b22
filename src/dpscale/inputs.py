"""What a calculator takes: one definition of its inputs, shared by the library and every edge.

An :class:`Input` names one value (the key the API, the page's query string and JSON use), its
kind (how its text is read: :mod:`dpscale.kinds`), what it is, its default and the bounds it is
held to; apart from that meaning, each edge's extras are a small record of their own: how the
command line spells it (:class:`Cli`), how the page shows it (:class:`Page`), what the API calls it
(:class:`Api`). A :class:`Definition` is the list of a calculator's inputs
and the function that builds the core's objects from their values, applying the defaults and every
rule across fields. The edges read text into values (``dpscale.reading.read_input``) and call
:meth:`Definition.build`; they hold no default, bound or rule of their own, so a new input is
added here once and appears in the CLI, on the page and in the API.

Immutable records (an ``Input`` is a NamedTuple, a ``Definition`` a frozen record) rather than
pydantic models: ``import dpscale`` and the CLI's start-up stay light, and the web layer derives
its pydantic query models from these (``dpscale.web.api``). For the same reason an input names
its kind and this module does not import :mod:`dpscale.kinds` (which reads with the packages these
definitions serve: it would be an import circle); the edges ask ``dpscale.kinds.kind_of``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from typing import Any, Literal, NamedTuple

from dpscale.errors import N_, InvalidInput, MissingInput

__all__ = ["Api", "Cli", "Definition", "Edge", "Input", "KindName", "Page", "Values"]

# The kinds a definition names: dpscale.kinds has a class for each (how its text is read, and what each
# edge does with it), whose object is equal to its name here.
KindName = Literal[
    "count",
    "duration",
    "text",
    "measurements",
    "number",
    "fraction",
    "variation",
    "scaled_count",
    "bytes",
    "bandwidth",
    "seconds",
    "device_list",
    "model_names",
    "choice",
    "switch",
    "path",
    "reference",
    "nccltests",
    "traces",
    "network_profile",
    "step_records",
]
Edge = Literal["cli", "page", "api"]
Values = Mapping[str, Any]  # input name -> value read (None: not given)


class Cli(NamedTuple):
    """How the command line spells an input, where it differs from ``--name-with-dashes``."""

    option: str | None = None  # the CLI's spelling, if not --name-with-dashes (a switch: its --no- form)
    short: str | None = None  # the CLI's one-letter alias: -d
    positional: bool = False  # the CLI takes it as an argument, in the definition's order
    repeatable: bool = False  # the CLI takes the option several times (its values joined by "; ")
    default_text: str = ""  # the default as people write it, where that is not the number: 25MiB, 2%


class Page(NamedTuple):
    """How the page shows an input: its label, the line under it, what it is prefilled with."""

    label: str = ""  # the page's label, a catalog message (translated where shown)
    hint: str = ""  # a line under the page's field, a catalog message
    example: tuple[str, str] | None = None  # what the page is prefilled with: (French, English)
    group: str = ""  # where the page shows it: a fieldset's name
    choice_labels: tuple[str, ...] = ()  # how the page names each choice (catalog messages or product names)
    empty_label: str = ""  # the page's option for no choice, when the input may stay empty
    # The input a value typed here stands in for, shown beside it (a link's preset menu beside its typed
    # bandwidth): the page takes the one typed, where the command line, given both, refuses to guess.
    replaces: str = ""
    # The input whose field this one is drawn beside, on its line (a throughput's unit): its label a small one
    # between the two fields, its messages under the line, after the other's.
    beside: str = ""


class Api(NamedTuple):
    """How the API names and describes an input, where that is not its name and its help."""

    name: str | None = None  # the API's parameter, where it differs: deadline_seconds
    # Its description, where the help names what the API does not take: an option (--max-bubble), a text
    # only the command line and the page read (90%, 8B, 3us) where the API takes a number.
    described: str | None = None


_NO_CLI, _NO_PAGE, _NO_API = Cli(), Page(), Api()


class Input(NamedTuple):
    """One input of a calculator: what it means, and in ``cli``, ``page`` and ``api`` how each edge
    spells it (immutable records: NamedTuples, which cost a fraction of a dataclass to define, and
    this module is on the path of every command, ``dpscale scale`` too)."""

    name: str  # the key: API parameter, query-string field, JSON
    kind: KindName  # how its text is read, and the type of its value: its object is dpscale.kinds.kind_of(item)
    help: str  # what it is, one line in English: the CLI's help, the API's description
    default: Any = None  # the value when not given; None: none (the definition's rules decide)
    required: bool | tuple[Edge, ...] = False  # True: everywhere; or the edges that need it (the others solve for it)
    low: float | None = None  # bounds the schema states (the core checks its own values too)
    high: float | None = None
    choices: tuple[str, ...] = ()
    edges: tuple[Edge, ...] = ("cli", "page", "api")
    unit: str = ""  # what a bare API number means: "bytes/s", "s"
    synonyms: tuple[tuple[str, str], ...] = ()  # other names of a choice, and the choice each one is
    most: int | None = None  # a text's longest, where it is not a label's (a link's carried figures)
    cli: Cli = _NO_CLI
    page: Page = _NO_PAGE
    api: Api = _NO_API

    @property
    def accepted(self) -> tuple[str, ...]:
        """The names a choice is given by: its choices, then their synonyms."""
        return self.choices + tuple(name for name, _ in self.synonyms)

    @property
    def shown_default(self) -> str:
        """The default as the CLI's help says it ("" when there is none to say)."""
        if self.cli.default_text or self.default is None or isinstance(self.default, bool):
            return self.cli.default_text
        return f"{self.default:g}" if isinstance(self.default, float) else str(self.default)

    def required_on(self, edge: Edge) -> bool:
        """Whether ``edge`` must be given a value (it has no default there, and nothing solves for it)."""
        return self.required is True or (isinstance(self.required, tuple) and edge in self.required)

    @property
    def cli_option(self) -> str:
        return self.cli.option or "--" + self.name.replace("_", "-")

    @property
    def cli_name(self) -> str:
        """The input as the CLI's errors name it: its option without dashes (``intra_bw``)."""
        return self.cli_option.lstrip("-").replace("-", "_")

    @property
    def help_accepted(self) -> str:
        """The help as what a missing value should have been: "device counts: 8,16,64 or …"."""
        text = self.help.rstrip(".")
        return text[0].lower() + text[1:] if text[1:2].islower() else text

    def check(self, value: Any) -> Any:
        """``value`` if within the bounds and choices (each element of a list), else InvalidInput."""
        if value is None:
            return None
        if self.choices:
            if not isinstance(value, str) or value not in self.accepted:
                raise InvalidInput(
                    self.name, value, N_("one of %(choices)s"), params={"choices": ", ".join(self.accepted)}
                )
            return dict(self.synonyms).get(value, value)
        if self.low is None and self.high is None:
            return value
        kind = type(value)
        if (kind is int or kind is float) and self.kind != "device_list":  # the usual case, in bounds
            low, high = self.low, self.high
            if (low is None or value >= low) and (high is None or value <= high):
                return value
        # The two facts of its kind the core needs, by its name (a kind's object is equal to it):
        # dpscale.kinds reads with the packages these definitions serve, so this module cannot ask it.
        listed = self.kind == "device_list"
        if listed != isinstance(value, list | tuple) or (listed and not value):
            raise InvalidInput(self.name, value, N_("a list of numbers") if listed else N_("a number"))
        for number in value if listed else [value]:
            if isinstance(number, bool) or not isinstance(number, numbers.Real):
                raise InvalidInput(self.name, value, N_("a number"))
            real = float(number) if not isinstance(number, int) else number  # ints compared exactly
            if not (self.low is None or real >= self.low) or not (self.high is None or real <= self.high):
                show = _percent if self.kind in ("fraction", "variation") else _g
                bounds = {"low": show(self.low), "high": show(self.high)}
                if self.unit:  # a bandwidth read from 10 Gb/s: its bounds in the unit it was turned into
                    accepted = N_("a value from %(low)s to %(high)s %(unit)s")
                    bounds["unit"] = self.unit
                    raise InvalidInput(self.name, value, accepted, params=bounds)
                raise InvalidInput(self.name, value, N_("a value from %(low)s to %(high)s"), params=bounds)
        return value


class Definition:
    """A calculator's inputs and how their values become the core's objects.

    Immutable, compared and hashed by its four fields, as a frozen dataclass would be: written out,
    since defining a dataclass costs about a millisecond on the path of every command.
    """

    __slots__ = ("besides", "build", "groups", "inputs", "name")
    name: str
    inputs: tuple[Input, ...]
    build: Callable[[Values], Any]
    groups: tuple[tuple[str, str], ...]  # the page's fieldsets: (group, legend as a catalog message)
    # Made of the inputs, for the page that draws each field: the inputs drawn beside each (Page.beside), by its name.
    besides: Mapping[str, tuple[Input, ...]]

    def __init__(
        self,
        name: str,
        inputs: tuple[Input, ...],
        build: Callable[[Values], Any],
        groups: tuple[tuple[str, str], ...] = (),
    ) -> None:
        set_field = object.__setattr__
        set_field(self, "name", name)
        set_field(self, "inputs", inputs)
        set_field(self, "build", build)
        set_field(self, "groups", groups)
        besides: dict[str, tuple[Input, ...]] = {}
        for item in inputs:
            if item.page.beside:
                besides[item.page.beside] = (*besides.get(item.page.beside, ()), item)
        set_field(self, "besides", besides)

    def _fields(self) -> tuple[Any, ...]:
        return (self.name, self.inputs, self.build, self.groups)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._fields() == other._fields()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__qualname__}(name={self.name!r}, inputs={self.inputs!r}, "
            f"build={self.build!r}, groups={self.groups!r})"
        )

    def on(self, edge: Edge) -> tuple[Input, ...]:
        """The inputs ``edge`` takes."""
        return tuple(i for i in self.inputs if edge in i.edges)

    def get(self, name: str) -> Input | None:
        """The input named ``name`` (or whose API parameter is), if any."""
        return next((item for item in self.inputs if name in (item.name, item.api.name)), None)

    def complete(self, values: Values) -> dict[str, Any]:
        """``values`` with every input present, the default where one was not given, each within its bounds.

        MissingInput for an input required everywhere and not given (one that only some edges
        require is the definition's rules' to ask for); InvalidInput for a value past its bounds or
        not among its choices.
        """
        out: dict[str, Any] = {}
        for item in self.inputs:
            value = values.get(item.name)
            if value is None:
                if item.required is True:
                    raise MissingInput(item.name, item.help_accepted)
                value = item.default
            out[item.name] = item.check(value)
        return out


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _g(bound: float | None) -> Any:
    """A bound as an error states it: 10¹⁵ and 10⁻⁶ rather than 1e+15; other numbers as the user's
    language writes them (a float among a message's values is localized: 0,125 in French)."""
    if bound is None:
        return "any"
    if bound > 0 and abs(math.log10(bound)) >= 6 and (exponent := round(math.log10(bound))) == math.log10(bound):
        return "10" + str(exponent).translate(_SUPERSCRIPT)
    return bound


def _percent(bound: float | None) -> str:
    return "any" if bound is None else f"{bound * 100:g}%"
