"""Scaling laws fitted to measured throughputs, with their uncertainty and a verdict on each.

Every model gives the cluster throughput A(n) of n devices; E(n) = A(n) / (n·A(1)).

    constant    A = λ·n·E for n > 1, A(1) = λ               the seed's: one efficiency for every size
    amdahl      A = λ·n / (1 + σ·(n−1))                      Amdahl 1967: a serial share σ of each step
    gustafson   A = λ·(n − σ·(n−1))                          Gustafson 1988: scaled (weak) speedup
    usl         A = λ·n / (1 + σ·(n−1) + κ·n·(n−1))          Gunther's Universal Scalability Law:
                                                             contention σ, coherency κ; peaks at
                                                             n* = √((1−σ)/κ)
    comm        A = λ·n / (1 + a·(n−1) + b·(n−1)/n)          the ring all-reduce of dpscale.predict
                                                             without overlap: a = 2α/T, b = 2Gβ/T,
                                                             latency and bandwidth per step time T

λ is the throughput of one device as the model sees it. Parameters are fitted by bounded least
squares (scipy.optimize.curve_fit, trust-region reflective) on every measurement, repeats
included; their standard errors come from the covariance; models are ranked by AICc (Hurvich &
Tsai 1989), which penalises parameters; predictions carry a 95 % prediction interval from the
delta method and the residual variance, with Student's t.
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
import math
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from dpscale import _files, _validate
from dpscale._display import ShowsAsTable
from dpscale.errors import N_, InvalidInput, MissingExtra
from dpscale.i18n import Message

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["MODELS", "Fit", "ModelFit", "Point", "Prediction", "fit", "read_points"]

EXTRAPOLATION_FACTOR = 4  # predicting past 4× the largest measured size earns a warning
MAX_FITTED_THROUGHPUT = 1e150  # squared residuals of larger throughputs leave floating point
PEAK_REACH = 16  # a USL peak further than 16× the largest measured size is not reported


@dataclass(frozen=True, slots=True)
class Point:
    """One measurement: ``devices`` devices delivered ``throughput`` together."""

    devices: int
    throughput: float


@dataclass(frozen=True)
class _Law:
    name: str
    params: tuple[str, ...]
    formula: str
    source: str
    fn: Callable[..., Any]
    bounds: tuple[tuple[float, ...], tuple[float, ...]]


def _constant(n: Any, lam: float, e: float) -> Any:
    import numpy as np

    return lam * n * np.where(np.asarray(n) > 1, e, 1.0)


def _amdahl(n: Any, lam: float, sigma: float) -> Any:
    return lam * n / (1 + sigma * (n - 1))


def _gustafson(n: Any, lam: float, sigma: float) -> Any:
    return lam * (n - sigma * (n - 1))


def _usl(n: Any, lam: float, sigma: float, kappa: float) -> Any:
    return lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def _comm(n: Any, lam: float, a: float, b: float) -> Any:
    return lam * n / (1 + a * (n - 1) + b * (n - 1) / n)


INF = math.inf
MODELS: dict[str, _Law] = {
    law.name: law
    for law in (
        _Law(
            "constant",
            ("lambda", "E"),
            "A = λ·n·E (n > 1), A(1) = λ",
            "the seed's constant efficiency",
            _constant,
            ((0, 0), (INF, 1.5)),
        ),
        _Law("amdahl", ("lambda", "sigma"), "A = λ·n / (1 + σ(n−1))", "Amdahl 1967", _amdahl, ((0, 0), (INF, 1))),
        _Law("gustafson", ("lambda", "sigma"), "A = λ·(n − σ(n−1))", "Gustafson 1988", _gustafson, ((0, 0), (INF, 1))),
        _Law(
            "usl",
            ("lambda", "sigma", "kappa"),
            "A = λ·n / (1 + σ(n−1) + κ·n(n−1))",
            "Gunther 1993, Universal Scalability Law",
            _usl,
            ((0, 0, 0), (INF, 1, 1)),
        ),
        _Law(
            "comm",
            ("lambda", "a", "b"),
            "A = λ·n / (1 + a(n−1) + b(n−1)/n)",
            "dpscale.predict's ring all-reduce, no overlap",
            _comm,
            ((0, 0, 0), (INF, INF, INF)),
        ),
    )
}


@dataclass(frozen=True, slots=True)
class Prediction:
    """A(n) and E(n) at one size, with a 95 % prediction interval on A."""

    devices: int
    throughput: float
    low: float
    high: float
    efficiency: float
    extrapolated: bool

    @property
    def has_interval(self) -> bool:
        """False when too few measurements leave no residual variance to build an interval from."""
        return math.isfinite(self.low) and math.isfinite(self.high)

    def to_dict(self) -> dict[str, Any]:
        return {
            "devices": self.devices,
            "throughput": self.throughput,
            "interval": [_finite(self.low), _finite(self.high)],
            "efficiency": _finite(self.efficiency),
            "extrapolated": self.extrapolated,
        }


@dataclass(frozen=True)
class ModelFit:
    """One model fitted to the points, or the reason it could not be."""

    name: str
    formula: str
    source: str
    params: dict[str, float]
    errors: dict[str, float]
    rss: float
    r2: float
    aicc: float | None
    predictions: tuple[Prediction, ...]
    peak_devices: float | None = None  # USL: the size past which throughput falls
    skipped: Message | None = None  # why it was not fitted
    covariance: tuple[tuple[float, ...], ...] = ()
    residual_variance: float = math.nan
    dof: int = 0
    largest_measured: int = 0

    def estimates(self) -> list[tuple[str, float, float | None]]:
        """(name, value, standard error); the error is None where too few points leave it undefined."""
        return [(k, v, _finite(self.errors.get(k, math.nan))) for k, v in self.params.items()]

    def throughput(self, devices: float) -> float:
        """A(n) of the fitted model."""
        law = MODELS[self.name]
        return float(law.fn(float(devices), *(self.params[p] for p in law.params)))

    def predict(self, sizes: Sequence[int]) -> tuple[Prediction, ...]:
        """A(n) with a 95 % prediction interval, and E(n), at each size."""
        np, _, stats = _scipy()
        law = MODELS[self.name]
        params = np.array([self.params[p] for p in law.params])
        cov = np.array(self.covariance) if self.covariance else np.full((len(params), len(params)), np.nan)
        usable = bool(np.all(np.isfinite(cov))) and self.dof > 0
        t = float(stats.t.ppf(0.975, self.dof)) if self.dof > 0 else math.nan
        one = self.throughput(1)
        out = []
        for size in sizes:
            a = self.throughput(size)
            half = math.nan
            if usable:
                grad = _gradient(law.fn, float(size), params, np)
                var = float(grad @ cov @ grad) + self.residual_variance
                half = t * math.sqrt(var) if var >= 0 else math.nan
            e = a / (size * one) if one > 0 else math.nan
            out.append(Prediction(size, a, a - half, a + half, e, size > self.largest_measured))
        return tuple(out)

    def efficiency(self, devices: int) -> float:
        """E(n) = A(n) / (n·A(1)): a curve the planner can take."""
        law = MODELS[self.name]
        values = [self.params[p] for p in law.params]
        n = _validate.whole("devices", devices)
        return float(law.fn(n, *values) / (n * law.fn(1, *values)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.name,
            "formula": self.formula,
            "source": self.source,
            "params": self.params,
            "standard_errors": {k: _finite(v) for k, v in self.errors.items()},
            "rss": _finite(self.rss),
            "r2": _finite(self.r2),
            "aicc": self.aicc,
            "peak_devices": self.peak_devices,
            "skipped": None if self.skipped is None else str(self.skipped),
            "predictions": [p.to_dict() for p in self.predictions],
        }


@dataclass(frozen=True)
class Fit(ShowsAsTable):
    """Every model tried, the one chosen, and the warnings a careful reader needs."""

    points: tuple[Point, ...]
    models: tuple[ModelFit, ...]
    chosen: str
    notes: tuple[Message, ...]  # the warnings, each a message in either language

    @property
    def warnings(self) -> tuple[str, ...]:
        """The notes in English (the JSON's ``warnings``)."""
        return tuple(str(note) for note in self.notes)

    @property
    def best(self) -> ModelFit:
        return next(m for m in self.models if m.name == self.chosen)

    @property
    def peak_devices(self) -> float | None:
        """Where the USL says throughput stops growing, when the data can say so.

        Only from a USL fit with enough points to be ranked, and only within PEAK_REACH times the
        largest measured size: a peak far beyond the data is the fit's guess, not a finding.
        """
        usl = next((m for m in self.models if m.name == "usl"), None)
        if usl is None or usl.aicc is None or usl.peak_devices is None:
            return None
        largest = max(p.devices for p in self.points)
        return usl.peak_devices if usl.peak_devices <= PEAK_REACH * largest else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "points": [{"devices": p.devices, "throughput": p.throughput} for p in self.points],
            "chosen": self.chosen,
            "peak_devices": self.peak_devices,
            "warnings": list(self.warnings),
            "models": [m.to_dict() for m in self.models],
        }


def _finite(x: float) -> float | None:
    """JSON has no NaN: an undefined number (no interval with too few points) is null."""
    return x if math.isfinite(x) else None


def _points(points: Iterable[Point | tuple[Any, Any] | dict[str, Any]]) -> tuple[Point, ...]:
    out = []
    d: Any
    a: Any
    for i, item in enumerate(points):
        if isinstance(item, Point):
            d, a = item.devices, item.throughput
        elif isinstance(item, dict):
            d, a = item.get("devices"), item.get("throughput")
        else:
            try:
                d, a = item
            except (TypeError, ValueError):
                raise InvalidInput(f"points[{i}]", item, "a (devices, throughput) pair") from None
        try:
            out.append(Point(_validate.device_count("devices", d), _throughput("throughput", a)))
        except InvalidInput as exc:
            raise exc.as_given(f"points[{i}].{exc.field}", exc.value) from None
    return tuple(out)


def _throughput(field: str, value: Any) -> float:
    a = _validate.positive(field, value)
    if a >= MAX_FITTED_THROUGHPUT:
        raise InvalidInput(field, value, N_("a finite number greater than 0 and below 1e150"))
    return a


def _scipy() -> tuple[Any, Any, Any]:
    try:
        import numpy
        from scipy import optimize, stats
    except ImportError as exc:
        raise MissingExtra("fitting", "fit") from exc
    return numpy, optimize, stats


def fit(
    points: Iterable[Point | tuple[Any, Any] | dict[str, Any]],
    *,
    models: Sequence[str] | None = None,
    at: Sequence[int] = (),
) -> Fit:
    """Fit each model to ``points`` and predict A and E at the sizes ``at``.

    >>> f = fit([(1, 367.29), (4, 1449.48), (8, 2887.65), (16, 5716.79)], at=[32])
    >>> f.chosen, round(f.best.predictions[0].efficiency, 2)
    ('amdahl', 0.96)
    """
    np, optimize, stats = _scipy()
    data = _points(points)
    names = list(models) if models else list(MODELS)
    for name in names:
        if name not in MODELS:
            raise InvalidInput("model", name, N_("auto or one of %(choices)s"), params={"choices": ", ".join(MODELS)})
    sizes = [_validate.device_count("at", n) for n in at]
    if len(data) < 2:
        raise InvalidInput("points", len(data), "at least two measurements, at two or more cluster sizes")
    distinct = sorted({p.devices for p in data})
    if len(distinct) < 2:
        raise InvalidInput("points", f"only {distinct[0]} devices", "measurements at two or more cluster sizes")
    n = np.array([p.devices for p in data], dtype=np.float64)
    y = np.array([p.throughput for p in data], dtype=np.float64)
    largest = max(distinct)
    notes: list[Message] = []
    if 1 not in distinct:
        notes.append(Message.of("no single-device measurement: efficiencies are relative to the model's own A(1)"))
    far = [s for s in sizes if s > EXTRAPOLATION_FACTOR * largest]
    if far:
        notes.append(
            Message.of(
                "predicting at %(far)s devices, more than %(factor)s× the largest measured (%(largest)s): "
                "treat those numbers as a guess, not a forecast",
                far=", ".join(map(str, far)),
                factor=EXTRAPOLATION_FACTOR,
                largest=largest,
            )
        )
    fits = [_fit_one(MODELS[name], n, y, distinct, sizes, largest, np, optimize, stats) for name in names]
    fitted = [m for m in fits if m.skipped is None]
    if not fitted:
        raise InvalidInput("points", len(data), "enough measurements for at least one model (add sizes or repeats)")
    ranked = [m for m in fitted if m.aicc is not None]
    if ranked:
        chosen = min(ranked, key=lambda m: m.aicc if m.aicc is not None else math.inf)
    else:  # too few points to rank any: the simplest model that fits
        chosen = min(fitted, key=lambda m: (len(m.params), m.rss))
        notes.append(
            Message.of("too few measurements (%(n)s) to rank the models by AICc: showing the simplest", n=len(data))
        )
    for m in fits:
        if m.skipped is not None:
            notes.append(Message.of("%(model)s: %(reason)s", model=m.name, reason=m.skipped))
        elif m.aicc is None and ranked:
            notes.append(
                Message.of(
                    "%(model)s: too few measurements (%(n)s) to rank %(k)s parameters by AICc",
                    model=m.name,
                    n=len(data),
                    k=len(m.params),
                )
            )
    if chosen.peak_devices is not None and any(s > chosen.peak_devices for s in sizes):
        notes.append(
            Message.of(
                "past about %(peak)s devices the fitted throughput falls as devices are added",
                peak=f"{chosen.peak_devices:.0f}",
            )
        )
    return Fit(data, tuple(fits), chosen.name, tuple(notes))


def _fit_one(
    law: _Law,
    n: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    distinct: list[int],
    sizes: list[int],
    largest: int,
    np: Any,
    optimize: Any,
    stats: Any,
) -> ModelFit:
    k = len(law.params)
    m = len(y)
    empty = ModelFit(law.name, law.formula, law.source, {}, {}, math.nan, math.nan, None, ())
    if len(distinct) < k:
        return _skip(empty, Message.of("needs measurements at %(k)s or more sizes, has %(n)s", k=k, n=len(distinct)))
    lam0 = float(np.median(y / n))
    p0 = [lam0] + ([0.9] if law.name == "constant" else [1e-3] * (k - 1))
    try:
        # A covariance that cannot be estimated (too few points) is reported as unknown errors.
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", optimize.OptimizeWarning)
            params, cov = optimize.curve_fit(
                law.fn, n, y, p0=p0, bounds=law.bounds, method="trf", maxfev=20_000, x_scale="jac"
            )
    except (RuntimeError, ValueError) as exc:
        return _skip(empty, Message.of("did not converge (%(reason)s)", reason=str(exc)))
    residuals = y - law.fn(n, *params)
    rss = float(residuals @ residuals)
    tss = float(((y - y.mean()) ** 2).sum())
    r2 = 1 - rss / tss if tss > 0 else 1.0
    dof = m - k
    aicc = None
    if m - k - 1 > 0:
        aicc = m * math.log(max(rss, 1e-300) / m) + 2 * k + 2 * k * (k + 1) / (m - k - 1)
    with np.errstate(all="ignore"):
        errors = np.sqrt(np.clip(np.diag(cov), 0, None)) if np.all(np.isfinite(cov)) else np.full(k, math.nan)
    peak = None
    if law.name == "usl" and params[2] > 0:
        peak = math.sqrt(max(1 - params[1], 0) / params[2])
    result = ModelFit(
        law.name,
        law.formula,
        law.source,
        dict(zip(law.params, map(float, params), strict=True)),
        dict(zip(law.params, map(float, errors), strict=True)),
        rss,
        r2,
        aicc,
        (),
        peak,
        None,
        tuple(tuple(float(x) for x in row) for row in cov),
        rss / dof if dof > 0 else math.nan,
        dof,
        largest,
    )
    return dataclasses.replace(result, predictions=result.predict(sizes))


def _skip(empty: ModelFit, reason: Message) -> ModelFit:
    return ModelFit(empty.name, empty.formula, empty.source, {}, {}, math.nan, math.nan, None, (), None, reason)


def _gradient(fn: Callable[..., Any], x: float, params: Any, np: Any) -> Any:
    """∂A/∂θ at x by central differences (the models are smooth in their parameters)."""
    grad = np.empty(len(params))
    for i, p in enumerate(params):
        h = 1e-6 * max(abs(p), 1e-6)
        up, down = params.copy(), params.copy()
        up[i] += h
        down[i] = max(p - h, 0.0)
        grad[i] = (fn(x, *up) - fn(x, *down)) / (up[i] - down[i])
    return grad


# --- reading measurements -------------------------------------------------------------------


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
        return _validate.device_count(column, value) if whole else _throughput(column, value)
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
        if record.get("complete") is False:
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
