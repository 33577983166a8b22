"""Measurement files into points: CSV (a spreadsheet's copy too) or the JSON lines dpscale measure writes.

Read a line at a time within the bounds of :mod:`dpscale._files`.
"""

from __future__ import annotations

import csv
import itertools
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO

from dpscale import _files, _validate, records
from dpscale.errors import N_, InvalidInput
from dpscale.fit.results import Point, fitted_throughput

__all__ = ["read_points"]

_DELIMITERS = (",", ";", "\t")  # commas, semicolons or tabs (a spreadsheet's copy) between cells


def read_points(
    source: str | Path, *, text: str | None = None, read_number: Callable[[str], float] | None = None
) -> tuple[Point, ...]:
    """Measurements from a CSV file (``devices`` and ``throughput`` columns) or JSON lines.

    Lines starting with ``#`` are comments. JSON lines need ``devices`` and ``throughput`` keys
    (``dpscale measure`` writes them; records marked ``"complete": false`` are skipped). Errors
    name the line and the column. A CSV cell is a number as Python writes it (``367.29``,
    ``1e3``); failing that, ``read_number`` may read it as people write it in their language (the
    edges pass :func:`dpscale.parse.parse_decimal`: ``367,29`` from a French spreadsheet).

    ``text``, when given, is read instead of the file ``source`` names. Either is read a line at
    a time within the bounds of :mod:`dpscale._files` (8 MiB, lines of 65 536 characters, 10 000
    measurements): a file that is not one is refused at its first line, without reading on.
    """
    name = str(source)
    if text is None:
        with _files.open_text(
            source,
            field="file",
            most=_files.MAX_FILE_BYTES,
            missing=N_("an existing CSV or JSON-lines file"),
            unreadable=N_("a readable UTF-8 text file (%(reason)s)"),
        ) as stream:
            return _read(name, stream, read_number)
    return _read(name, _files.text_stream(text, name, most=_files.MAX_FILE_BYTES), read_number)


def _read(name: str, stream: TextIO, read_number: Callable[[str], float] | None) -> tuple[Point, ...]:
    rows = _files.lines(stream, name)
    first = next(rows, None)
    if first is None:
        raise InvalidInput("file", name, "measurements: a devices,throughput header and one row per run")
    if first[1].lstrip().startswith("{"):
        return _read_jsonl(name, itertools.chain([first], rows))
    return _read_csv(name, first, rows, read_number)


def _number(
    name: str, line: int, column: str, cell: Any, *, whole: bool, read: Callable[[str], float] | None = None
) -> Any:
    try:
        value = _cell(cell, read)
        return _validate.device_count(column, value) if whole else fitted_throughput(column, value)
    except InvalidInput as exc:
        raise exc.as_given(_files.where(name, line, column), _files.shown(cell)) from None
    except (TypeError, ValueError, OverflowError):  # OverflowError: an integer past float's range
        accepted, params = (_validate.WHOLE_NUMBER, {"minimum": 1}) if whole else (_validate.POSITIVE, None)
        raise InvalidInput(_files.where(name, line, column), _files.shown(cell), accepted, params=params) from None


def _cell(cell: Any, read: Callable[[str], float] | None) -> float:
    if isinstance(cell, bool):  # JSON's true is no count of devices, though Python's float(True) is 1
        raise TypeError(cell)
    try:
        return float(cell)
    except ValueError:
        if read is None or not isinstance(cell, str):
            raise
        return read(cell)  # InvalidInput is a ValueError too


def _cells(name: str, number: int, line: str, delimiter: str) -> list[str]:
    try:
        return next(csv.reader([line], delimiter=delimiter, skipinitialspace=True))
    except csv.Error as exc:
        raise InvalidInput(
            _files.where(name, number), _files.excerpt(line), N_("a CSV line (%(reason)s)"), params={"reason": exc}
        ) from None


def _delimiter(header: str) -> str:
    """The delimiter that gives the header a devices and a throughput column, else the one giving most cells.

    Linear in the header's length: csv.Sniffer's regular expressions take a minute on a long line.
    """
    best = _DELIMITERS[0]
    most = 0
    for delimiter in _DELIMITERS:
        try:
            cells = {h.strip().lower() for h in next(csv.reader([header], delimiter=delimiter))}
        except csv.Error:
            continue
        if {"devices", "throughput"} <= cells:
            return delimiter
        if len(cells) > most:
            best, most = delimiter, len(cells)
    return best


def _read_csv(
    name: str,
    first: tuple[int, str],
    rows: Iterable[tuple[int, str]],
    read_number: Callable[[str], float] | None = None,
) -> tuple[Point, ...]:
    head_number, head_line = first
    delimiter = _delimiter(head_line)
    header = [h.strip().lower() for h in _cells(name, head_number, head_line, delimiter)]
    duplicates = sorted({h for h in header if header.count(h) > 1})
    if duplicates:
        raise InvalidInput(
            _files.where(name, head_number),
            _files.excerpt(head_line),
            N_("each column once (%(columns)s repeated)"),
            params={"columns": _files.excerpt(", ".join(duplicates))},
        )
    missing = [c for c in ("devices", "throughput") if c not in header]
    if missing:
        raise InvalidInput(
            _files.where(name, head_number),
            _files.excerpt(head_line),
            N_("a header with devices and throughput columns (missing %(missing)s; found %(found)s)"),
            params={"missing": ", ".join(missing), "found": _files.excerpt(", ".join(header)) or "—"},
        )
    d_col, a_col = header.index("devices"), header.index("throughput")
    out = []
    for count, (number, line) in enumerate(rows, 1):
        _files.check_rows(count, name, number, line)
        row = _cells(name, number, line, delimiter)
        if len(row) != len(header):
            raise InvalidInput(
                _files.where(name, number),
                _files.excerpt(line),
                N_("%(cells)s cells, as in the header"),
                params={"cells": len(header)},
            )
        out.append(
            Point(
                _number(name, number, "devices", row[d_col].strip(), whole=True, read=read_number),
                _number(name, number, "throughput", row[a_col].strip(), whole=False, read=read_number),
            )
        )
    if not out:
        raise InvalidInput(name, "a header and no rows", "one row per measured run")
    return tuple(out)


def _read_jsonl(name: str, rows: Iterable[tuple[int, str]]) -> tuple[Point, ...]:
    out = []
    for count, (number, line) in enumerate(rows, 1):
        _files.check_rows(count, name, number, line)
        place = _files.where(name, number)
        record = _files.decode_json(line, place, _files.excerpt(line), N_("one JSON object per line (%(reason)s)"))
        if not isinstance(record, dict):
            raise InvalidInput(place, _files.excerpt(line), "a JSON object with devices and throughput")
        if not records.is_complete(record):
            continue
        for key in ("devices", "throughput"):
            if key not in record:
                raise InvalidInput(
                    place,
                    _files.excerpt(line),
                    N_("a %(key)s key (found %(found)s)"),
                    params={"key": key, "found": _files.excerpt(", ".join(record)) or "—"},
                )
        out.append(
            Point(
                _number(name, number, "devices", record["devices"], whole=True),
                _number(name, number, "throughput", record["throughput"], whole=False),
            )
        )
    if not out:
        raise InvalidInput(name, "no complete record", "at least one complete measurement")
    return tuple(out)
