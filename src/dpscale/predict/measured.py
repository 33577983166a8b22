"""The step-time variation cv from the records ``dpscale measure`` and :class:`dpscale.Meter` write.

The straggler term needs how much one rank's step time varies from step to step. A record's
``step_time.cv`` is the variation of each step as the slowest rank took it: on one rank exactly
that; on several, the slowest of them, whose spread is somewhat smaller than one rank's. So the
records of the fewest devices that carry step times are read, and the median of their cv kept.
Read a line at a time within the bounds of :mod:`dpscale._files`; no numpy here.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from dpscale import _files, records
from dpscale.errors import N_, InvalidInput

__all__ = ["MAX_JITTER", "jitter_from"]

MAX_JITTER = 0.5  # as predict's --jitter takes it


def jitter_from(path: str | Path) -> float:
    """cv from the records in ``path`` (see the module's docstring); InvalidInput naming the file and line."""
    name = str(path)
    found: list[tuple[int, float]] = []
    with _files.open_text(
        path,
        field="jitter_from",
        most=_files.MAX_FILE_BYTES,
        missing=N_("a JSON-lines file of dpscale measure or Meter records"),
        unreadable=N_("a readable UTF-8 text file (%(reason)s)"),
    ) as stream:
        for count, (number, line) in enumerate(_files.lines(stream, name), 1):
            _files.check_rows(count, name, number, line)
            place = _files.where(name, number)
            data = _files.decode_json(line, place, _files.excerpt(line), N_("one JSON object per line (%(reason)s)"))
            if not isinstance(data, dict) or not records.is_complete(data):
                continue
            try:
                record = records.Measurement.from_dict(data)
            except InvalidInput as exc:
                raise exc.as_given(place, _files.excerpt(line)) from None
            if record.step_time is not None:
                found.append((record.devices, record.step_time.cv))
    if not found:
        raise InvalidInput(
            "jitter_from", name, N_("records with step times (step_time), as dpscale measure and Meter write them")
        )
    fewest = min(devices for devices, _ in found)
    cv = statistics.median(cv for devices, cv in found if devices == fewest)
    if not (0 <= cv <= MAX_JITTER):
        raise InvalidInput(
            "jitter_from", f"{name}: cv {cv:g}", N_("a step-time variation from 0 to 50 %% in the records")
        )
    return float(cv)
