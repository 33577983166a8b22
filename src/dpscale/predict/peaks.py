"""One device's dense peak FLOP/s, from a figure (989TFLOP/s) or a device's name (peaks.toml, with sources)."""

from __future__ import annotations

import functools
import math
import re
import tomllib
from pathlib import Path
from typing import Any, NamedTuple

from dpscale.errors import N_, InvalidInput

__all__ = ["LOWEST", "HIGHEST", "Peak", "peaks", "read_peak"]

LOWEST, HIGHEST = 1e9, 1e18  # FLOP/s: a device past either bound is a typo (a unit left out, one too many)
_PREFIX = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "p": 1e15, "e": 1e18}
_FIGURE = re.compile(
    r"^\s*(?P<number>\d+(?:[.,]\d+)?(?:e[+-]?\d+)?)\s*(?P<prefix>[kmgtpe]?)\s*(?:flop/?s|flops)?\s*$", re.IGNORECASE
)
ACCEPTED = N_(
    "a peak with its unit, such as 989TFLOP/s or 1.3 PFLOPS, or a device: %(devices)s"
)  # params={"devices": ...}


class Peak(NamedTuple):
    """A device's peak: FLOP/s, and the preset's name and source (None: a figure given)."""

    flops: float
    device: str | None = None
    source: str | None = None


@functools.cache
def peaks() -> dict[str, dict[str, Any]]:
    with (Path(__file__).parent / "peaks.toml").open("rb") as f:
        return tomllib.load(f)


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def read_peak(text: str, field: str = "peak_flops") -> Peak:
    """The peak ``text`` gives: ``989TFLOP/s``, ``989 TFLOPS``, ``9.89e14``, ``1,3 PFLOP/s``, or ``H100 SXM``."""
    params = {"devices": ", ".join(peaks())}
    if not isinstance(text, str) or not text.strip() or len(text) > 100:
        raise InvalidInput(field, text, ACCEPTED, params=params)
    by_key = {_key(name): name for name in peaks()}
    if _key(text) in by_key:
        name = by_key[_key(text)]
        return Peak(float(peaks()[name]["flops"]), name, peaks()[name]["source"])
    match = _FIGURE.match(text)
    if match is None or re.fullmatch(r"\d+,\d{3}", match["number"]):  # 1,979: a thousands comma or a decimal one?
        raise InvalidInput(field, text, ACCEPTED, params=params)
    value = float(match["number"].replace(",", ".")) * _PREFIX[match["prefix"].lower()]
    if not (math.isfinite(value) and LOWEST <= value <= HIGHEST):
        raise InvalidInput(field, text, N_("a peak from 1 GFLOP/s to 1 EFLOP/s, such as 989TFLOP/s"))
    return Peak(value)
