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
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from dpscale.errors import N_, InvalidInput

if TYPE_CHECKING:
    from dpscale.explain import Calibration, Explanation

__all__ = ["MAX_TRACED", "Carried", "read_traced", "traced_text"]

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
