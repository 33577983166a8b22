"""What a link carries to ``/predict``: a run's calibration from ``/explain``, as a short text.

``/explain`` hands its figures to ``/predict`` in one click, as ``dpscale predict --from-trace``
does on the command line: the link's ``traced`` parameter holds the run's
:class:`~dpscale.explain.Calibration` and the split of its variation (:func:`traced_text`), which
``predict`` reads back (:func:`read_traced`) and passes through the same
:func:`dpscale.predict.traced.calibrated` as the traces themselves.

The text is the version ``t1`` then ``_``-separated fields, each a letter and a number (no
character a URL must escape); a field left out is None::

    t1_n8_c0.0413_o0.00405_s0.04535_m0.0123_x0.0052_v0.62_y1.2e9_b9.8e10_w0.003_j0.05_r0.04_f0.1_k3

n devices, c compute, o other, s single-device step (seconds), m communication in flight, x exposed
communication (seconds), v overlap, y collective bytes, b bandwidth (bytes/s), w straggler wait
(seconds), j step-time variation; r, f, k the random variation, the fixed imbalance and the rank
slow at every step (:func:`dpscale.predict.traced.split`). Anything else is refused, naming the
input, the text (cut short) and what is accepted. No numpy here.

An nccl-tests log pasted into ``/predict`` is data, too long for a link: the page's link carries
what it measured instead, as ``nccl_fit`` (:func:`network_text`, read back by
:func:`read_network`), the version ``n1`` then ``_``-separated fields::

    n1_car_r16_h2_d8_g8_u3.6303e11_q8x2.26640.26700.26800_car_r8_h1_d8_s8.13295.16.13560

Each run: c its collective (``car`` all_reduce, ``crs`` reduce_scatter, ``cag`` all_gather), which
begins it, r ranks, h hosts, d devices per host, then its sizes and the time of each in
nanoseconds: ``s`` sizes in bytes and times alternating, or ``q`` for sizes that grow by a factor
(``q8x2``: 8, 16, 32, … bytes), then the times. Once, after the first run's shape: g devices per
node, u the main run's best bus bandwidth as nccl-tests prints it (bytes/s), ``xi`` or ``xe`` a
tier whose switches reduce (in a node, between nodes). A text of one run with its sizes written
out (``n1_car_r16_h2_d8_g8_u…_s8.26640.16.26700``) is read as it was first written.

The runs, not only their fitted α and β: :func:`read_network` fits them as the logs are fitted, so
the link gives the logs' numbers (their times given back at their own shapes, the network fitted
again to the node's links typed). Several runs travel together (logs pasted one after another, a
file of several, ``-J`` lines): :func:`carriable` keeps those a link holds within
:data:`MAX_NETWORK` characters (each thinned to :data:`MAX_SIZES` sizes, the main run first) and
the prediction from the logs rests on those same runs, saying which were left out.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dpscale.errors import N_, InvalidInput

if TYPE_CHECKING:
    from dpscale.explain import Calibration, Explanation
    from dpscale.nccltests import Log
    from dpscale.predict.network import Network
    from dpscale.records import MeasuredRun

__all__ = [
    "MAX_NETWORK",
    "MAX_SIZES",
    "MAX_TRACED",
    "Carried",
    "carriable",
    "from_logs",
    "network_text",
    "read_network",
    "read_traced",
    "traced_text",
]

MAX_TRACED = 600  # characters: a traced text is about 200; a request's own bound on what it may cost
_VERSION = "t1"
_PART = re.compile(r"([a-z])([-+0-9.eE]+)\Z")
# letter: (Calibration's field, kind); kinds: "int" a count, "s" a time or amount (≥ 0), "share" from 0 to 1
_FIELDS = {
    "n": ("devices", "int"),
    "c": ("compute_time", "s"),
    "o": ("other_time", "s"),
    "s": ("single_device_step", "s"),
    "m": ("communication_time", "s"),
    "x": ("exposed_communication", "s"),
    "v": ("overlap", "share"),
    "y": ("collective_bytes", "s"),
    "b": ("bandwidth", "s"),
    "w": ("straggler_wait", "s"),
    "j": ("step_time_cv", "s"),
}
_SPLIT = {"r": "s", "f": "s", "k": "int"}
_REQUIRED = ("n", "c", "o", "s", "m", "x", "w", "j", "r")
_OPTIONAL = ("v", "y", "b", "f", "k")
ACCEPTED = N_(
    "the text /explain's link gives (t1_n8_c0.04_o0.004_s0.044_m0.01_x0.005_w0.003_j0.05_r0.05 and optional "
    "v, y, b, f, k fields: letters and numbers, at most %(most)s characters)"
)


def _number(x: float) -> str:
    """``x`` exactly, as short as Python writes it (2 for 2.0, 1.5e-05), with nothing a URL escapes."""
    text = repr(float(x))
    return (text[:-2] if text.endswith(".0") else text).replace("e+", "e")


class Carried:
    """A run's calibration read from a link, with the split of its variation (see :func:`read_traced`)."""

    __slots__ = ("calibration", "imbalance", "random", "slowest_rank")

    def __init__(self, calibration: Calibration, random: float, imbalance: float | None, slowest_rank: int | None):
        self.calibration = calibration
        self.random = random
        self.imbalance = imbalance
        self.slowest_rank = slowest_rank

    @property
    def split(self) -> tuple[float, float | None, int | None]:
        return self.random, self.imbalance, self.slowest_rank


def traced_text(found: Explanation) -> str:
    """The ``traced`` text of ``found``: its calibration and the split of its variation, for a link."""
    from dpscale.predict.traced import split

    c = found.calibration
    random, imbalance, slowest = split(c, found.ranks)
    values: dict[str, float | int | None] = {letter: getattr(c, name) for letter, (name, _) in _FIELDS.items()} | {
        "r": random,
        "f": imbalance,
        "k": slowest,
    }
    return "_".join([_VERSION, *(f"{k}{_number(v)}" for k, v in values.items() if v is not None)])


def read_traced(text: str, field: str = "traced") -> Carried:
    """The calibration ``text`` (:func:`traced_text`'s) holds; InvalidInput naming ``field`` if it holds none."""
    from dpscale._files import excerpt
    from dpscale.explain import Calibration

    def refused() -> InvalidInput:
        return InvalidInput(field, excerpt(text), ACCEPTED, params={"most": MAX_TRACED})

    if not isinstance(text, str) or len(text) > MAX_TRACED:
        raise refused()
    head, *parts = text.strip().split("_")
    if head != _VERSION:
        raise refused()
    kinds = {letter: kind for letter, (_, kind) in _FIELDS.items()} | _SPLIT
    found: dict[str, float] = {}
    for part in parts:
        matched = _PART.match(part)
        if not matched or matched.group(1) not in kinds or matched.group(1) in found:
            raise refused()
        letter, number = matched.groups()
        try:
            value = float(number)
        except ValueError:
            raise refused() from None
        kind = kinds[letter]
        if not math.isfinite(value) or value < 0 or (kind == "int" and not value.is_integer()):
            raise refused()
        if (kind == "share" and value > 1) or (letter == "n" and not 1 <= value <= 1e7):
            raise refused()
        found[letter] = value
    if any(letter not in found for letter in _REQUIRED) or found["s"] <= 0:
        raise refused()
    values = {name: found.get(letter) for letter, (name, _) in _FIELDS.items()}
    values["devices"] = int(found["n"])
    calibration = Calibration(**values)  # type: ignore[arg-type]
    slowest = found.get("k")
    return Carried(calibration, found["r"], found.get("f"), None if slowest is None else int(slowest))


MAX_NETWORK = 1500  # characters: a run of 31 sizes is about 260; a link carries at most MAX_QUERY (2048)
MAX_SIZES = 40  # sizes a link carries of one run: -b 8 -e 8G -f 2 prints 31; a run of more is thinned
_NETWORK_VERSION = "n1"
_COLLECTIVE_CODES = {"ar": "all_reduce", "rs": "reduce_scatter", "ag": "all_gather"}
_COUNTS = {"r": "ranks", "h": "hosts", "d": "devices_per_host"}  # each run's
_LARGEST = 10**15  # bytes of a size, nanoseconds of a time: past either, not a run nccl-tests printed
_SIZES = re.compile(r"s([0-9]+(?:\.[0-9]+)*)\Z")
_SERIES = re.compile(r"q([0-9]+)x([0-9]+)((?:\.[0-9]+)+)\Z")
# What the text's run-independent fields may take: g devices per node, u a bus bandwidth as _number writes
# it, x both tiers: a run's text and this, at most, make a link's.
_HEAD = len("n1_g10000000_u_xi_xe") + len(repr(-1.2345678901234567e-300))
NETWORK_ACCEPTED = N_(
    "the text /predict's link gives for an nccl-tests log (n1_car_r16_h2_d8_g8_u3.6e11_s8.26640.16.26700: "
    "the collective, ranks, hosts, devices per host and per node, bus bandwidth, then each size in bytes "
    "and its time in ns; at most %(most)s characters)"
)


def _run_text(run: MeasuredRun) -> list[str]:
    """One run's fields: its collective and shape, then its sizes and times (``q``: sizes first × factor^k)."""
    code = next(key for key, name in _COLLECTIVE_CODES.items() if name == run.collective)
    counts = (run.ranks, run.hosts, run.devices_per_host)
    head = ["c" + code, *(f"{k}{v}" for k, v in zip(_COUNTS, counts, strict=True))]
    sizes = [size for size, _ in run.sizes]
    times = ".".join(str(round(seconds * 1e9)) for _, seconds in run.sizes)
    first, factor = sizes[0], sizes[1] // sizes[0] if len(sizes) > 1 else 0
    if len(sizes) > 2 and factor > 1 and all(size == first * factor**k for k, size in enumerate(sizes)):
        return [*head, f"q{first}x{factor}.{times}"]
    return [*head, "s" + ".".join(f"{size}.{round(seconds * 1e9)}" for size, seconds in run.sizes)]


def network_text(network: Network) -> str:
    """The ``nccl_fit`` text of ``network``, read from nccl-tests logs: every run it was fitted to, and what
    it found. The first run's fields as one run's text was first written (``n1_car_r16_h2_d8_g8_u…_s…``),
    then each other run's, from its ``c``.

    ValueError for a network that is not logs' (a profile): a link carries what logs measured.
    """
    described = network.described or {}
    if not network.runs or "busbw" not in described:
        raise ValueError("a link carries what nccl-tests logs measured")
    reduced = {
        tier
        for _, *links in network.collectives
        for tier, link in zip(("i", "e"), links, strict=True)
        if link is not None and link.in_network
    }
    first, *others = (_run_text(run) for run in network.runs)
    parts = [_NETWORK_VERSION, *first[:-1], f"g{network.devices_per_node}", "u" + _number(described["busbw"])]
    parts += ["x" + tier for tier in ("i", "e") if tier in reduced]
    parts += [first[-1], *(part for run in others for part in run)]
    return "_".join(parts)


def carriable(logs: Sequence[Log]) -> tuple[tuple[Log, ...], tuple[Log, ...]]:
    """What of ``logs`` a link's ``nccl_fit`` can carry: (the logs kept, in their order; those left out).

    Each kept log holds at most :data:`MAX_SIZES` sizes (every k-th from the largest: a geometric
    series stays one), each within what the text holds (a size to 10^15 bytes, a time from 1 ns to
    10^15); the main run (:func:`dpscale.predict.network.main_of`) is kept, then each other in its
    order while the text stays within :data:`MAX_NETWORK`. A prediction from the logs rests on
    those kept, so that its link gives the same numbers.
    """
    from dataclasses import replace

    from dpscale.nccltests import runs_of
    from dpscale.predict.network import main_of

    thinned: dict[int, Log] = {}
    for i, log in enumerate(logs):
        rows = [row for row in log.rows if row.bytes <= _LARGEST and 1 <= row.seconds * 1e9 < _LARGEST]
        sizes = sorted({row.bytes for row in rows})
        step = -(-len(sizes) // MAX_SIZES)  # ceil: at most MAX_SIZES kept
        kept = set(sizes[::-1][::step] if sizes else ())
        if kept:
            same = len(rows) == len(log.rows) and step == 1
            thinned[i] = log if same else replace(log, rows=tuple(row for row in rows if row.bytes in kept))
    if not thinned:
        return (), tuple(logs)
    main = next(i for i, log in thinned.items() if log is main_of(list(thinned.values())))
    room = MAX_NETWORK - _HEAD
    chosen = set()
    for i in [main, *(i for i in thinned if i != main)]:
        length = len("_".join(_run_text(runs_of([thinned[i]])[0]))) + 1
        if length <= room:
            chosen.add(i)
            room -= length
    kept_logs = tuple(thinned[i] for i in sorted(chosen))
    return kept_logs, tuple(log for i, log in enumerate(logs) if i not in chosen)


def from_logs(logs: Log | Sequence[Log]) -> Network:
    """The network a prediction from nccl-tests logs rests on: the runs a link can carry (:func:`carriable`),
    fitted (:func:`dpscale.predict.network.from_log`), said with its link's text (``fit``), the runs left
    out (``left_out``) and those whose sizes were thinned (``thinned``: how many kept, of how many)."""
    from dataclasses import replace

    from dpscale.nccltests import Log
    from dpscale.predict import network

    given = (logs,) if isinstance(logs, Log) else tuple(logs)
    kept, left = carriable(given)
    found = network.from_log(kept[0] if len(kept) == 1 else kept)
    said = {**(found.described or {}), "fit": network_text(found)}
    if left:
        said["left_out"] = [network.shape(log) for log in left]
    whole = [log for log in given if all(log is not other for other in left)]
    thinned = [
        network.shape(log) | {"sizes": len({row.bytes for row in log.rows}), "of": len({row.bytes for row in was.rows})}
        for log, was in zip(kept, whole, strict=True)
        if log is not was
    ]
    if thinned:
        said["thinned"] = thinned
    return replace(found, described=said)


def _series(part: str) -> tuple[tuple[int, float], ...] | None:
    """The sizes and times of a run's ``s`` or ``q`` field (None: neither), each size and time within bounds."""
    if matched := _SIZES.match(part):
        numbers = [int(n) for n in matched.group(1).split(".")]
        if len(numbers) % 2:
            return None
        sizes, times = numbers[::2], numbers[1::2]
    elif matched := _SERIES.match(part):
        first, factor = int(matched.group(1)), int(matched.group(2))
        times = [int(n) for n in matched.group(3)[1:].split(".")]
        if factor < 2 or first <= 0 or first * factor ** (len(times) - 1) > _LARGEST:
            return None
        sizes = [first * factor**k for k in range(len(times))]
    else:
        return None
    if any(not 0 < n <= _LARGEST for n in (*sizes, *times)):
        return None
    if any(a >= b for a, b in itertools.pairwise(sizes)):  # sizes increase
        return None
    return tuple(zip(sizes, [ns * 1e-9 for ns in times], strict=True))


def read_network(text: str, field: str = "nccl_fit") -> Network:
    """The network ``text`` (:func:`network_text`'s) carries, fitted as its logs were; InvalidInput naming ``field``."""
    from dpscale._files import excerpt
    from dpscale.predict.network import from_run
    from dpscale.records import MeasuredRun

    def refused() -> InvalidInput:
        return InvalidInput(field, excerpt(text), NETWORK_ACCEPTED, params={"most": MAX_NETWORK})

    if not isinstance(text, str) or len(text) > MAX_NETWORK:
        raise refused()
    head, *parts = text.strip().split("_")
    if head != _NETWORK_VERSION:
        raise refused()
    runs: list[dict[str, Any]] = []
    per_node, busbw, reduced = None, None, set()
    for part in parts:
        letter, rest = part[:1], part[1:]
        run = runs[-1] if runs else {}
        if letter == "c" and rest in _COLLECTIVE_CODES:  # a run begins
            runs.append({"c": _COLLECTIVE_CODES[rest]})
        elif letter in _COUNTS and runs and rest.isdigit() and letter not in run and 1 <= int(rest) <= 10**7:
            run[letter] = int(rest)
        elif letter == "g" and per_node is None and rest.isdigit() and 1 <= int(rest) <= 10**7:
            per_node = int(rest)
        elif letter == "u" and busbw is None and _PART.match(part):
            try:
                busbw = float(rest)
            except ValueError:
                raise refused() from None
            if not (math.isfinite(busbw) and busbw > 0):
                raise refused()
        elif letter == "x" and rest in ("i", "e") and rest not in reduced:
            reduced.add(rest)
        elif letter in "sq" and runs and "s" not in run and (sizes := _series(part)) is not None:
            run["s"] = sizes
        else:
            raise refused()
    if not runs or per_node is None or busbw is None:
        raise refused()
    if any(len(run) < 2 + len(_COUNTS) or run["h"] > run["r"] for run in runs):  # c, r, h, d and s each
        raise refused()
    measured = tuple(MeasuredRun(field, run["c"], run["r"], run["h"], run["d"], run["s"]) for run in runs)
    tiers = tuple(name for tier, name in (("i", "intra"), ("e", "inter")) if tier in reduced)
    try:
        return from_run(measured, per_node, busbw, tiers, text)
    except (InvalidInput, ValueError, ArithmeticError):  # runs the fit cannot take
        raise refused() from None
