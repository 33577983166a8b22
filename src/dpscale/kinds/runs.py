"""What runs measured: a cluster's throughputs, a measurement file's points, an nccl-tests log;
and the files the command line names (a run's traces, a network profile, records of step times),
read where their text is, so that a calculator's build is given what they hold, never a path."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from dpscale.errors import N_, InvalidInput
from dpscale.kinds.kind import ApiParameter, Kind, plain_number, shown_number

if TYPE_CHECKING:
    from dpscale.i18n import Lang
    from dpscale.inputs import Input

__all__ = ["MAX_LOG_CHARACTERS", "Measurements", "NcclTests", "NetworkProfile", "Reference", "StepRecords", "Traces"]

MAX_LOG_CHARACTERS = 2**20  # an nccl-tests log sent as text: 5 to 20 kB as runs print them; a request's own bound


class Reference(Kind):
    """Measurements of the whole cluster, devices:throughput, several separated by semicolons (8:7500; 64:52000)."""

    __slots__ = ()
    name = "reference"
    bounded = True
    localized = True
    numeric = True
    respells = False  # pairs, not one number and its unit
    api_text = True

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        from dpscale.parse import parse_references

        return parse_references(text, lang, field=field)

    def read_cli(self, item: Input, given: Any, lang: Lang) -> Any:
        """As typed (``8:7500``, ``8:7500; 64:52000``, the option given again) or in a records file
        (the command line reads files; no page or API does): a value without a colon, or naming a
        file, is a file's path."""
        if given is None:
            return None
        import os

        found: list[tuple[int, float]] = []
        for text in given if isinstance(given, list) else [given]:
            if ":" not in text and not os.path.isfile(text):
                accepted = N_("devices:throughput (8:7500), or an existing file of measurements")
                raise InvalidInput(item.cli_name, text, accepted)
            if os.path.isfile(text):
                from dpscale.fit import read_points

                found += [(p.devices, p.throughput) for p in read_points(text)]
            else:
                found += self.read_input(item, text, lang)
        return tuple(found) or None

    def show(self, value: Any, lang: Lang) -> str:
        return "; ".join(f"{devices}:{shown_number(throughput, lang)}" for devices, throughput in value)

    def plain(self, item: Input, value: Any) -> str:
        return "; ".join(self.plain_each(item, value))

    def plain_each(self, item: Input, value: Any) -> tuple[str, ...]:
        return tuple(f"{devices}:{plain_number(throughput)}" for devices, throughput in value)

    def api_value(self, item: Input, value: Any) -> Any:
        return self.plain(item, value)

    def api(self, item: Input, *, most: int) -> ApiParameter:
        return ApiParameter(str, {}, said=": devices:throughput (8:7500)")


class Measurements(Kind):
    """The points a measurement file holds: a file on the command line, its text pasted on a page."""

    __slots__ = ()
    name = "measurements"
    localized = True
    kept_when_same = True
    cli_file = True
    element = "textarea"
    rows = 8
    file = True
    file_types = ".csv,.tsv,.txt,.jsonl,.json"
    file_label = N_("Or load a file")
    file_too_large = N_(
        "This file is too large to send: a request may send at most %(limit)s bytes (%(mib)s MiB). "
        "Keep fewer measurements, or fit it with dpscale fit on the command line."
    )

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        """The points of a file's text, its numbers read as people write them in ``lang``; its header
        added where the page can tell it is missing, or read in English where it is French."""
        from dpscale.fit import read_points
        from dpscale.parse import number_reader

        return read_points(field, text=_with_header(text), read_number=number_reader(lang))

    def read_cli(self, item: Input, given: Any, lang: Lang) -> Any:
        from dpscale.fit import read_points
        from dpscale.parse import number_reader

        return None if given is None else read_points(given, read_number=number_reader(lang))

    def show(self, value: Any, lang: Lang) -> str:
        """A CSV both languages read (367.29 as a program writes it)."""
        return "devices,throughput\n" + "\n".join(f"{p.devices},{p.throughput!r}" for p in value)

    def plain(self, item: Input, value: Any) -> str:
        return "devices,throughput\n" + "".join(f"{p.devices},{plain_number(p.throughput)}\n" for p in value)

    def api_value(self, item: Input, value: Any) -> Any:
        return [{"devices": p.devices, "throughput": p.throughput} for p in value]

    def api(self, item: Input, *, most: int) -> ApiParameter:
        """A list of points in a JSON body (a query cannot carry them): at least two, as many as a file holds."""
        from dpscale._files import MAX_ROWS

        described = "The measured runs: a list of {devices, throughput} objects, cluster throughput at each size."
        example = [{"devices": 1, "throughput": 367.29}, {"devices": 8, "throughput": 2887.65}]  # DLPerf's V100s
        lengths = {"min_length": 2, "max_length": MAX_ROWS, "json_schema_extra": {"examples": [example]}}
        return ApiParameter(_point(), lengths, {}, described=described)

    def from_api(self, item: Input, given: Any) -> Any:
        return None if given is None else [(point["devices"], point["throughput"]) for point in given]


@functools.cache
def _point() -> type:
    """A measured point as the API's JSON body holds it, each number within its bounds and of its JSON type: true
    is not a device count, nor "8" a number (pydantic is imported when the API's shapes are made, not before)."""
    from pydantic import BaseModel, ConfigDict, Field

    from dpscale._validate import MAX_DEVICES
    from dpscale.scaling import MAX_THROUGHPUT, MIN_POSITIVE

    class PointIn(BaseModel):
        model_config = ConfigDict(strict=True)

        devices: int = Field(ge=1, le=MAX_DEVICES)
        throughput: float = Field(ge=MIN_POSITIVE, le=MAX_THROUGHPUT * MAX_DEVICES)

    return PointIn


# A header as a French spreadsheet may name its columns, read as the file format's English names.
_FRENCH_HEADER = {"appareils": "devices", "nombre d'appareils": "devices", "débit": "throughput"}


def _with_header(text: str) -> str:
    """The pasted text with the ``devices,throughput`` header a file needs, where the page can tell it.

    Two columns of numbers with no header are read as devices then throughput (as the hint says);
    a French header (``appareils;débit``) is read as the English one. JSON lines are left as they are.
    """
    lines = text.lstrip("\ufeff").splitlines()
    at = next((i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")), None)
    if at is None or lines[at].lstrip().startswith("{"):
        return text
    first = lines[at]
    delimiter = ";" if ";" in first else "\t" if "\t" in first else ","
    cells = [cell.strip().lower() for cell in first.split(delimiter)]
    if any(cell in _FRENCH_HEADER for cell in cells):
        lines[at] = delimiter.join(_FRENCH_HEADER.get(cell, cell) for cell in cells)
    elif len(cells) == 2 and not any(ch.isalpha() and ch not in "eE" for ch in first):  # numbers: no header
        lines.insert(at, f"devices{delimiter}throughput")
    else:
        return text
    return "\n".join(lines)


class NcclTests(Kind):
    """The text of an nccl-tests output, sent by a page or a request: the run it describes."""

    __slots__ = ()
    name = "nccltests"
    element = "textarea"
    rows = 4
    file = True
    file_types = ".txt,.log,.out,.json"
    file_label = N_("Or choose the log file")
    file_too_large = N_(
        "This file is too large to send: a request may send at most %(limit)s bytes (%(mib)s MiB). "
        "An nccl-tests log is usually 5 to 20 kB a run: keep only the runs you need."
    )
    api_text = True
    posted = True

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        """Every run of the text (predict fits them together), as a file of them is read; errors name
        the input and the line."""
        from dpscale._files import excerpt
        from dpscale.errors import one_line
        from dpscale.nccltests import read_texts

        try:
            return read_texts(text, field, most=MAX_LOG_CHARACTERS)
        except InvalidInput as exc:  # about the whole text: shown by its start, as a line would be
            raise exc.as_given(field, excerpt(one_line(text))) if exc.field == "import" else exc from None

    def show(self, value: Any, lang: Lang) -> str | None:
        return None  # a run read is not its text: the page keeps the log as pasted

    def api_value(self, item: Input, value: Any) -> Any:
        return getattr(value, "text", value)

    def api(self, item: Input, *, most: int) -> ApiParameter:
        return ApiParameter(str, {}, said=" In a query string only a short one fits: POST it.")


class _ReadFromFile(Kind):
    """A file the command line names (no page or API takes a path on the server), read as its text is:
    the value is what the file holds, which no text writes back (the command line's text is its path).

    Each reads with the function of the package that knows the file, which a calculator's build calls
    too on a path a library caller gives it in place of the value (the one place it is read either way).
    """

    __slots__ = ()
    reads_file = True

    def show(self, value: Any, lang: Lang) -> str | None:
        return None  # what a file holds is not its path: the text is kept as typed


class Traces(_ReadFromFile):
    """A run's profiler traces, files or a folder of them: the run :func:`dpscale.explain.explain` makes of them."""

    __slots__ = ()
    name = "traces"

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        from dpscale.explain import explain

        return explain(text, field=field)


class NetworkProfile(_ReadFromFile):
    """A profile from ``dpscale probe``: the links it measured (:class:`dpscale.predict.presets.Profile`)."""

    __slots__ = ()
    name = "network_profile"

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        from dpscale.predict.presets import read_profile

        return read_profile(text)


class StepRecords(_ReadFromFile):
    """Records of ``dpscale measure`` or Meter: the step-time variation (cv) their step times show."""

    __slots__ = ()
    name = "step_records"

    def read(self, text: str, lang: Lang, *, field: str, in_percent: bool = False, most: int | None = None) -> Any:
        from dpscale.predict.measured import jitter_from

        return jitter_from(text)
