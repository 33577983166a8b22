"""What a calibration learned of each unknown, and what in the measurements contradicts the rest.

:func:`learned` says, for each unknown, its prior and its posterior (median, 90 % range), and how
far the measurements told it apart: in prior standard deviations, the eigenvectors of the
measurements' information matrix (of eigenvalues above 0) are the directions they tell; an unknown
with little weight on them keeps its prior (``prior``: its median too); one that is most of such a
direction is ``fitted``; one that shares them with another is fitted ``joint`` ly with it (their
joint effect told, not each; each keeps its prior's range about its median).

:func:`checked` refuses a measurement far above what d·v allows with one device's throughput v
given, and warns of one a little above; :func:`contradictions` warns of a fit that lands at a
bound of a prior and of a measured size not given back within its spread.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from dpscale.errors import N_, InvalidInput
from dpscale.messages import Message
from dpscale.predict import uncertainty
from dpscale.predict.uncertainty import LEVEL, MEASUREMENT_SPREAD, Prior, Unknown

if TYPE_CHECKING:
    from dpscale.predict.job import Reference, Workload

__all__ = ["ABOVE_IDEAL", "Learned", "checked", "contradictions", "learned", "shown"]

Array = npt.NDArray[Any]
NARROWED = 0.8  # an unknown that is this much of a direction the measurements told (its squared weight): fitted
MOVED = 0.25  # one with less weight than this on all of them kept its prior
JOINT = 0.4  # two unknowns each weighing this much in one direction: their joint effect told, not each
ABOVE_IDEAL = 3 * MEASUREMENT_SPREAD  # a measurement this far above d·v is no noise: refused


@dataclass(frozen=True, slots=True)
class Learned:
    """What the measurements said of one unknown: its prior, its posterior, and how far they told it apart.

    ``status``: ``fitted`` (narrowed or moved by the measurements), ``prior`` (they said nothing of
    it: its prior kept) or ``joint`` (they fixed its joint effect with ``joint_with``, not its own;
    its range stays its prior's).
    """

    name: Unknown
    prior: Prior
    median: float
    low: float
    high: float
    status: Literal["fitted", "prior", "joint"]
    joint_with: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.median,
            "low": self.low,
            "high": self.high,
            "prior": self.prior.to_dict(),
            "posterior": {"median": self.median, "low": self.low, "high": self.high},
            "learned": self.status,
            "joint_with": list(self.joint_with),
        }


def shown(measured: Sequence[Reference]) -> str:
    return ", ".join(f"{m.devices}:{m.throughput:g}" for m in measured)


def checked(measured: Sequence[Reference], workload: Workload) -> list[Message]:
    """With one device's throughput v given, no measurement may pass d·v by more than its spread."""
    v = workload.per_device_throughput
    warnings = []
    for m in measured:
        ideal = m.devices * v
        if m.throughput > ideal * (1 + ABOVE_IDEAL):
            raise InvalidInput(
                "measured",
                f"{m.devices}:{m.throughput:g}",
                N_(
                    "at most what %(n)s devices at the per-device throughput %(v)s give together, d·v = %(ideal)s "
                    "(this is %(times)s times that): check both, or leave the per-device throughput out to "
                    "calibrate it on the measurement"
                ),
                params={"n": m.devices, "v": f"{v:g}", "ideal": f"{ideal:g}", "times": f"{m.throughput / ideal:.2g}"},
            )
        if m.throughput > ideal:
            warnings.append(
                Message.of(
                    "The measurement %(measured)s is above what %(n)s devices at the per-device throughput %(v)s "
                    "give together (d·v = %(ideal)s): within a measurement's spread, taken as noise; check both.",
                    measured=f"{m.devices}:{m.throughput:g}",
                    n=m.devices,
                    v=f"{v:g}",
                    ideal=f"{ideal:g}",
                )
            )
    return warnings


def learned(
    names: Sequence[Unknown],
    centre: Array,
    covariance: Array,
    prior: Mapping[Unknown, Prior],
    data: Array | None,
    *,
    kept: Sequence[int] = (),
) -> tuple[Learned, ...]:
    """Each unknown's prior and posterior, and whether the measurements told it apart.

    ``data``: the measurements' Jacobian on the unknowns' normal scales, in spreads (None: only the
    reference was measured). In prior standard deviations, its information matrix's eigenvectors
    (of eigenvalues above 0) are the directions the measurements tell; an unknown with little
    weight on them keeps its prior; one that is most of such a direction is fitted; one that
    shares them with another is fitted jointly with it.
    """
    z = uncertainty.quantile(LEVEL)
    scale = np.array([prior[name].sd for name in names])
    learned_directions = np.zeros((len(names), 0))
    if data is not None and len(names) and data.size:
        standard = data * scale  # per prior standard deviation
        values, vectors = np.linalg.eigh(standard.T @ standard)
        learned_directions = vectors[:, values > 1e-9 * max(float(values.max()), 1e-300)]
    sd = np.sqrt(np.maximum(np.diag(covariance), 0.0)) if names else np.zeros(0)
    out = []
    for i, name in enumerate(names):
        p = prior[name]
        median = p.from_x(float(centre[i]))
        weights = np.square(learned_directions[i]) if learned_directions.size else np.zeros(0)
        if i in kept or float(weights.sum()) < MOVED:
            out.append(Learned(name, p, median, p.low, p.high, "prior"))
            continue
        alone = bool(np.any(weights >= NARROWED))
        shared = tuple(
            names[j]
            for j in range(len(names))
            if j != i and np.any((weights >= JOINT**2) & (np.square(learned_directions[j]) >= JOINT**2))
        )
        if alone or not shared:
            low, high = p.from_x(float(centre[i] - z * sd[i])), p.from_x(float(centre[i] + z * sd[i]))
            out.append(Learned(name, p, median, low, high, "fitted"))
        else:  # their joint effect is fixed, not each: each keeps its prior's range about its median
            low, high = p.from_x(float(centre[i]) - z * p.sd), p.from_x(float(centre[i]) + z * p.sd)
            out.append(Learned(name, p, median, low, high, "joint", shared))
    return tuple(out)


_NAMES = {
    "jitter": N_("step-time variation"),
    "network_share": N_("network share"),
    "interference": N_("interference"),
}


def contradictions(
    points: Sequence[Reference],
    given_back: Sequence[float],
    learned: Sequence[Learned],
    centre: Array,
    prior: Mapping[Unknown, Prior],
) -> list[Message]:
    """What makes the measurements unlikely: a fit at a bound of a prior, a size not given back within its spread."""
    out = []
    bounded = []
    for i, found in enumerate(learned):
        low, high = prior[found.name].x_bounds
        if found.status != "prior" and min(float(centre[i]) - low, high - float(centre[i])) < 1e-3 * (high - low):
            bounded.append((found.name, found.median))
    if bounded:  # a list of names, each in the user's language: a template of its own places
        names = Message(
            ", ".join(f"%({i})s" for i in range(len(bounded))),
            tuple((str(i), Message(_NAMES[name])) for i, (name, _) in enumerate(bounded)),
        )
        out.append(
            Message.of(
                "The measurements %(measured)s put the %(unknowns)s at the bounds of what they may be: they "
                "disagree with the other inputs (the per-device throughput, the links, the model's size); check them.",
                measured=shown(points),
                unknowns=names,
            )
        )
    for m, back in zip(points, given_back, strict=True):
        ratio = back / m.throughput
        off = math.log(ratio) if ratio > 0 and math.isfinite(ratio) else math.inf
        if abs(off) > MEASUREMENT_SPREAD * 1.0001:
            out.append(
                Message.of(
                    "The model gives back the measurement %(measured)s as %(given)s (%(off)s %%), beyond a "
                    "measurement's spread of %(spread)s %%: the measurements disagree with each other or with the "
                    "other inputs.",
                    measured=f"{m.devices}:{m.throughput:g}",
                    given=float(round(back)) if math.isfinite(back) else back,
                    off=f"{100 * (ratio - 1):+.1f}",
                    spread=f"{100 * MEASUREMENT_SPREAD:g}",
                )
            )
    return out
