"""Results to take away: a calculator's answer as JSON and CSV, its request as a command and an API call.

Made from the calculator's definition (``dpscale.inputs``), one piece for every page: each input
with a value is written as the command line reads it (its ``option``, a positional argument, a
switch's ``--no-`` form, a file for measurements) and as the API takes it (its ``api_name``, a
number in its unit, a list as a repeated key, a JSON body where the page posts). The values
written are those the page read, in the form the English command line reads back exactly (a
float by its ``repr``), so that the command gives the page's figures.

The CSV is the JSON's rows (``ROWS``: a prediction's sizes, a deadline's options, a fit's models;
else the answer is one row), a nested value flattened to ``key.sub`` and ``key.0``.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import re
import shlex
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple
from urllib.parse import quote, unquote

from dpscale.inputs import Input
from dpscale.kinds import Kind, kind_of
from dpscale.kinds.kind import plain_number

__all__ = [
    "COMMANDS",
    "ROWS",
    "Command",
    "Takeaway",
    "takeaway",
    "answer_of",
    "api_call",
    "command_of",
    "csv_text",
    "plans_of",
    "query_string",
    "query_values",
    "rows_of",
]

# The command line's name for each calculator (dpscale.cli registers them).
COMMANDS = {
    "scaling": "scale",
    "batch": "batch",
    "pipeline": "bubble",
    "plan": "plan",
    "predict": "predict",
    "fit": "fit",
}

# Where an answer keeps its rows, when it has several.
ROWS = ("predictions", "options", "models")


# What a query string carries as it is (urllib's always-safe characters): most names and values are only these.
_SAFE = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.~-"
_AS_IS = re.compile(r"[A-Za-z0-9_.~-]*")
# What quote_plus writes for each byte of a text's UTF-8: itself where safe, + for a space, else %XX. A page's
# unit (échantillons/s) and efficiency (90 %) are quoted on every request; a lookup per byte is quicker
# than urllib's own quoter (tests/web/test_page_speed_query.py holds the two to the same text).
_BYTE_QUOTED = tuple(chr(b) if b in _SAFE else "+" if b == 0x20 else f"%{b:02X}" for b in range(256))


def _quoted(text: str) -> str:
    """``quote_plus(text)``: the same text, written sooner."""
    return text if _AS_IS.fullmatch(text) else "".join(map(_BYTE_QUOTED.__getitem__, text.encode()))


def query_string(values: Mapping[str, str] | Iterable[tuple[str, str]]) -> str:
    """``urllib.parse.urlencode(values)`` of names and values that are text: the same string, written sooner."""
    pairs = values.items() if isinstance(values, Mapping) else values
    return "&".join([f"{_quoted(name)}={_quoted(value)}" for name, value in pairs])


def query_values(raw: bytes) -> dict[str, str]:
    """A request's query string read as Starlette reads it, ``dict(parse_qsl(raw.decode("latin-1"),
    keep_blank_values=True))`` (the last of a repeated name): the same values, read sooner."""
    values = {}
    for pair in raw.decode("latin-1").split("&"):
        if pair:
            name, _, value = pair.partition("=")
            values[_unquoted(name)] = _unquoted(value)
    return values


def _unquoted(text: str) -> str:
    if "+" in text:
        text = text.replace("+", " ")
    return unquote(text) if "%" in text else text


def answer_of(result: Any) -> dict[str, Any]:
    """The API's JSON of what a page computed (a prediction with its levers, as /api/v1/predict answers)."""
    prediction = getattr(result, "prediction", None)
    if prediction is not None:
        return {**prediction.to_dict(), "levers": [lever.to_dict() for lever in result.levers]}
    return dict(result.to_dict())


def rows_of(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """The answer's rows, each flattened to scalar columns."""
    for key in ROWS:
        listed = answer.get(key)
        if isinstance(listed, list) and listed and all(isinstance(row, dict) for row in listed):
            return [dict(_flat(row)) for row in listed]
    return [dict(_flat(answer))]


def _flat(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _flat(inner, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list | tuple):
        for i, inner in enumerate(value):
            yield from _flat(inner, f"{prefix}.{i}")
    else:
        yield prefix, value


def csv_text(answer: dict[str, Any]) -> str:
    """The answer's rows as CSV: a header of every column, numbers as JSON writes them.

    Columns come in the order first met, those of one key side by side (a fit's ``params.*``, then its
    ``standard_errors.*``), though a later row brings a parameter the first did not have."""
    rows = rows_of(answer)
    columns = list(dict.fromkeys(key for row in rows for key in row))
    place: dict[str, int] = {}  # each key's place, as its first column was met
    for column in columns:
        place.setdefault(column.partition(".")[0], len(place))
    columns.sort(key=lambda column: place[column.partition(".")[0]])  # stable: first met within each key
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if row.get(c) is None else _cell(row[c]) for c in columns])
    return out.getvalue()


def _cell(value: Any) -> str:
    return json.dumps(value) if isinstance(value, bool | float) else str(value)


def _given(item: Input, value: Any) -> bool:
    """Whether ``value`` says more than the input's default (a command and a call leave defaults out)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return False
    return not (item.default is not None and value == item.default)


@dataclass(frozen=True)
class Command:
    """A ``dpscale`` command: its arguments, the files it reads (written first, by a shell's here-document)
    and what the page used that the command line does not take."""

    args: tuple[str, ...]
    files: tuple[tuple[str, str], ...] = ()
    left_out: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """As a shell runs it: each file written with ``cat > NAME <<'EOF'``, then the command."""
        written = [f"cat > {name} <<'EOF'\n{content.rstrip()}\nEOF\n" for name, content in self.files]
        return "".join(written) + shlex.join(self.args)


def command_of(name: str, inputs: tuple[Input, ...], values: dict[str, Any]) -> Command:
    """The command that computes what ``values`` (the page's inputs, read) do, in English."""
    args = ["dpscale", COMMANDS[name]]
    files: list[tuple[str, str]] = []
    left_out: list[str] = []
    positional: list[str | None] = []
    for item, kind, place, option in _edges(inputs).cli:
        value = values.get(item.name)
        if place == "no cli":
            if _given(item, value):
                left_out.append(item.name)
            continue
        if place == "argument":  # in the definition's order
            text = _positional(item, kind, value, files)
            positional.append(text)
            continue
        if not _given(item, value):
            continue
        if kind.flag:  # written only where it says the other than the default
            args.append(option)
        elif kind.cli_file:
            files.append((f"{item.name}.csv", kind.plain(item, value)))
            args += [option, f"{item.name}.csv"]
        else:  # once, or once for each of its values (devices:throughput pairs)
            for text in kind.plain_each(item, value):
                args += [option, text]
    while positional and positional[-1] is None:
        positional.pop()
    if None in positional:  # an argument left out before one given: the command line cannot say it
        raise ValueError("a positional input is missing before one given")
    at = 2
    args[at:at] = [text for text in positional if text is not None]
    return Command(tuple(args), tuple(files), tuple(left_out))


def _positional(item: Input, kind: Kind, value: Any, files: list[tuple[str, str]]) -> str | None:
    if value is None:
        return None if item.default is None else kind.plain(item, item.default)
    if kind.cli_file:
        files.append((f"{item.name}.csv", kind.plain(item, value)))
        return f"{item.name}.csv"
    return kind.plain(item, value)


class _Edges(NamedTuple):
    """What a definition's inputs are to the command line and the API, found once per definition (what a request
    writes depends on its values alone): each input with its kind and its place on the command line (an
    ``option``, an ``argument``, ``no cli``) and its option, and the API's inputs with their kind and key."""

    cli: tuple[tuple[Input, Kind, str, str], ...]
    api: tuple[tuple[Input, Kind, str], ...]


def _edges(inputs: tuple[Input, ...]) -> _Edges:
    # Kept by the tuple's identity: hashing a definition's inputs costs more than finding their edges.
    kept = _EDGES.get(id(inputs))
    if kept is not None and kept[0] is inputs:
        return kept[1]
    if len(_EDGES) >= 64:  # a few definitions in an application; tests make more
        _EDGES.clear()
    cli = tuple((item, kind_of(item), _place(item), item.cli_option) for item in inputs)
    api = tuple((item, kind_of(item), item.api.name or item.name) for item in inputs if "api" in item.edges)
    found = _Edges(cli, api)
    _EDGES[id(inputs)] = (inputs, found)
    return found


_EDGES: dict[int, tuple[tuple[Input, ...], _Edges]] = {}


def _place(item: Input) -> str:
    if "cli" not in item.edges:
        return "no cli"
    return "argument" if item.cli.positional and not (item.cli.option or item.cli.short) else "option"


@functools.lru_cache(maxsize=256)
def _quoted_name(name: str) -> str:
    """An API key quoted: a definition's own name, the same on every request."""
    return _quoted(name)


def api_call(
    name: str, inputs: tuple[Input, ...], values: dict[str, Any], base: str, *, posted: bool, texts: dict[str, str]
) -> str:
    """A ``curl`` of the API that answers what ``values`` ask: a GET with its query, or a POST of a JSON body.

    ``texts``: an input's text as the page holds it, where the API wants text (an nccl-tests log).
    """
    given = [
        (item, kind, key, value)
        for item, kind, key in _edges(inputs).api
        if _given(item, value := values.get(item.name))
    ]
    url = f"{base.rstrip('/')}/api/v1/{name}"
    if posted and (name == "fit" or any(kind.posted for _, kind, _, _ in given)):
        body: dict[str, Any] = {}
        for item, kind, key, value in given:
            body[key] = (
                texts.get(item.name, kind.api_value(item, value)) if kind.posted else kind.api_value(item, value)
            )
        data = json.dumps({k: v for k, v in body.items() if v is not None}, ensure_ascii=False)
        return f"curl {shlex.quote(url)} -H 'Content-Type: application/json' --data-binary @- <<'EOF'\n{data}\nEOF"
    query: list[str] = []
    for item, kind, key, value in given:
        shown = kind.api_value(item, value)
        quoted_key = _quoted_name(key)
        for each in shown if isinstance(shown, list) else [shown]:
            query.append(f"{quoted_key}={_quoted(each if isinstance(each, str) else plain_number(each))}")
    return f"curl {shlex.quote(url + ('?' + '&'.join(query) if query else ''))}"


@dataclass(frozen=True)
class Takeaway:
    """What a page offers to take away: its answer's files (links, or data URIs where the inputs are too
    long for a link), and its request as a command and as an API call."""

    json_href: str
    csv_href: str
    command: Command
    call: str
    plans: tuple[tuple[int, float, str], ...] = ()  # a prediction's E(n) handed to /plan: (n, E, its link)


def takeaway(name: str, inputs: tuple[Input, ...], form: Any, query: str, base: str, *, posted: bool) -> Takeaway:
    """The take-away of ``form`` (a page's read form, with a result) on the calculator ``name``.

    ``query``: the page's query string, linked where it fits (``""``: too long, the files come inline).
    """
    if query:
        json_href, csv_href = f"/export/{name}.json?{query}", f"/export/{name}.csv?{query}"
    else:
        answer = answer_of(form.result)
        json_href = "data:application/json;charset=utf-8," + quote(json.dumps(answer, ensure_ascii=False))
        csv_href = "data:text/csv;charset=utf-8," + quote(csv_text(answer))
    return Takeaway(
        json_href,
        csv_href,
        command_of(name, inputs, form.parsed),
        api_call(name, inputs, form.parsed, base, posted=posted, texts=form.values),
        plans_of(form.result, form.lang),
    )


def plans_of(result: Any, lang: str) -> tuple[tuple[int, float, str], ...]:
    """A prediction's sizes, each as a link to /plan with its devices, per-device throughput and E(n).

    Written in English (``from=en``): the plan page rewrites them in its language, as its switch does.
    """
    prediction = getattr(result, "prediction", None)
    if prediction is None:
        return ()
    out = []
    for devices, efficiency in zip(prediction.devices, prediction.efficiency, strict=True):
        query = {
            "lang": lang,
            "from": "en",
            "devices": str(int(devices)),
            "per_device_throughput": plain_number(prediction.per_device_throughput),
            "efficiency": f"{float(efficiency) * 100:.4f}%",
        }
        out.append((int(devices), float(efficiency), "/plan?" + query_string(query)))
    return tuple(out)
