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

    n1_car_r16_h2_d8_g8_u3.6303e11_s8.26640.16.26700.32.26800

c the collective (``car`` all_reduce, ``crs`` reduce_scatter, ``cag`` all_gather), r ranks, h
hosts, d devices per host, g devices per node, u nccl-tests' best bus bandwidth (bytes/s), ``xi``
or ``xe`` a tier whose switches reduce (in a node, between nodes), s the run itself: its sizes
in bytes and the time of each in nanoseconds, alternating. The run, not only its fitted α and β:
:func:`read_network` fits it as the log is fitted, so the link gives the log's numbers (its times
given back at its own shape, the network fitted again to the node's links typed).
"""

from __future__ import annotations

import itertools
import math
import re
from typing import TYPE_CHECKING

from dpscale.errors import N_, InvalidInput

if TYPE_CHECKING:
    from dpscale.explain import Calibration, Explanation
    from dpscale.predict.network import Network

__all__ = ["MAX_NETWORK", "MAX_TRACED", "Carried", "network_text", "read_network", "read_traced", "traced_text"]

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


MAX_NETWORK = 1500  # characters: a run of 30 sizes is about 450; a link carries at most MAX_QUERY (2048)
_NETWORK_VERSION = "n1"
_COLLECTIVE_CODES = {"ar": "all_reduce", "rs": "reduce_scatter", "ag": "all_gather"}
_COUNTS = {"r": "ranks", "h": "hosts", "d": "devices_per_host", "g": "devices_per_node"}
_SIZES = re.compile(r"s([0-9]+(?:\.[0-9]+)*)\Z")
NETWORK_ACCEPTED = N_(
    "the text /predict's link gives for an nccl-tests log (n1_car_r16_h2_d8_g8_u3.6e11_s8.26640.16.26700: "
    "the collective, ranks, hosts, devices per host and per node, bus bandwidth, then each size in bytes "
    "and its time in ns; at most %(most)s characters)"
)


def network_text(network: Network) -> str:
    """The ``nccl_fit`` text of ``network``, read from one nccl-tests log: its run and what it found.

    ValueError for a network that is not one log's (a profile, several runs): a link carries one log.
    """
    described = network.described or {}
    if len(network.runs) != 1 or "busbw" not in described:
        raise ValueError("a link carries what one nccl-tests log measured")
    run = network.runs[0]
    code = next(key for key, name in _COLLECTIVE_CODES.items() if name == run.collective)
    counts = (run.ranks, run.hosts, run.devices_per_host, network.devices_per_node)
    parts = [_NETWORK_VERSION, "c" + code, *(f"{k}{v}" for k, v in zip(_COUNTS, counts, strict=True))]
    parts.append("u" + _number(described["busbw"]))
    reduced = [t for t, link in (("i", network.intra), ("e", network.inter)) if link is not None and link.in_network]
    parts += ["x" + tier for tier in reduced]
    parts.append("s" + ".".join(f"{size}.{round(seconds * 1e9)}" for size, seconds in run.sizes))
    return "_".join(parts)


def read_network(text: str, field: str = "nccl_fit") -> Network:
    """The network ``text`` (:func:`network_text`'s) carries, fitted as its log was; InvalidInput naming ``field``."""
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
    counts: dict[str, int] = {}
    collective, busbw, sizes, reduced = None, None, None, set()
    for part in parts:
        letter, rest = part[:1], part[1:]
        if letter == "c" and rest in _COLLECTIVE_CODES and collective is None:
            collective = _COLLECTIVE_CODES[rest]
        elif letter in _COUNTS and rest.isdigit() and letter not in counts and 1 <= int(rest) <= 10**7:
            counts[letter] = int(rest)
        elif letter == "u" and busbw is None and _PART.match(part):
            try:
                busbw = float(rest)
            except ValueError:
                raise refused() from None
            if not (math.isfinite(busbw) and busbw > 0):
                raise refused()
        elif letter == "x" and rest in ("i", "e") and rest not in reduced:
            reduced.add(rest)
        elif (matched := _SIZES.match(part)) and sizes is None:
            numbers = [int(n) for n in matched.group(1).split(".")]
            if len(numbers) % 2 or any(n <= 0 for n in numbers):
                raise refused()
            sizes = tuple(zip(numbers[::2], [ns * 1e-9 for ns in numbers[1::2]], strict=True))
            if any(a[0] >= b[0] for a, b in itertools.pairwise(sizes)):  # sizes increase
                raise refused()
        else:
            raise refused()
    if collective is None or busbw is None or sizes is None or len(counts) < len(_COUNTS):
        raise refused()
    ranks, hosts, per_host, per_node = (counts[k] for k in _COUNTS)
    if hosts > ranks:
        raise refused()
    run = MeasuredRun(field, collective, ranks, hosts, per_host, sizes)
    tiers = tuple(name for tier, name in (("i", "intra"), ("e", "inter")) if tier in reduced)
    try:
        return from_run(run, per_node, busbw, tiers, text)
    except (InvalidInput, ValueError, ArithmeticError):  # a run the fit cannot take
        raise refused() from None
