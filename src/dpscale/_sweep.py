"""The seed's model over arrays, for grids of many configurations (needs numpy).

Inputs broadcast against each other like numpy operands. The formulas are those of
:mod:`dpscale.scaling` (I = d·v, A = I·E, S = d·E), in float64 rather than decimal: a sweep is
for millions of points, where the last digit does not matter and speed does.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpscale._validate import FRACTION, POSITIVE, WHOLE_NUMBER
from dpscale.errors import N_, InvalidInput, MissingExtra

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Array = npt.NDArray[np.float64]

__all__ = ["Sweep", "sweep"]


@dataclass(frozen=True)
class Sweep:
    """Arrays of results, one element per configuration (broadcast shape of the inputs)."""

    devices: Array
    per_device_throughput: Array
    efficiency: Array
    actual_throughput: Array

    @functools.cached_property
    def ideal_throughput(self) -> Array:
        """I = d·v."""
        return _full(self.devices * self.per_device_throughput, self.shape)

    @functools.cached_property
    def speedup(self) -> Array:
        """S = d·E."""
        return _full(self.devices * self.efficiency, self.shape)

    @functools.cached_property
    def lost_throughput(self) -> Array:
        """I − A."""
        return self.ideal_throughput - self.actual_throughput

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.actual_throughput.shape)


def sweep(devices: Any, per_device_throughput: Any, efficiency: Any) -> Sweep:
    """Evaluate A = d·v·E for every combination of the (broadcast) input arrays.

    Raises InvalidInput naming the first offending element when any input is out of range.
    """
    try:
        import numpy as np
    except ImportError as exc:  # pragma: no cover - numpy is in the default install
        raise MissingExtra("sweep", package="numpy") from exc

    d = _as_array("devices", devices, np)
    v = _as_array("per_device_throughput", per_device_throughput, np)
    e = _as_array("efficiency", efficiency, np)
    actual = _blocked_product(d, v, e, np) if _can_block(d, v, e) else None
    if actual is None:
        _check_ranges(d, v, e, np)
        try:
            with np.errstate(over="ignore"):  # overflow is checked just below, and named
                actual = d * v * e
        except ValueError as exc:
            raise InvalidInput("shape", f"{d.shape}, {v.shape}, {e.shape}", "arrays that broadcast together") from exc
        if actual.size and not actual.max() < np.inf:
            _first_bad(
                "per_device_throughput", actual, ~np.isfinite(actual), N_("values whose product stays finite"), np
            )
    return Sweep(d, v, e, actual)


_BLOCK = 1 << 14  # elements per block: its three inputs and its output (512 KiB) stay in a core's L2 cache


def _can_block(d: Any, v: Any, e: Any) -> bool:
    return bool(
        d.shape == v.shape == e.shape
        and d.size >= 4 * _BLOCK
        and d.dtype.kind in "iu"
        and all(a.flags.c_contiguous for a in (d, v, e))
    )


def _blocked_product(d: Any, v: Any, e: Any, np: Any) -> Any:
    """A = d·v·E block by block, each block checked while it is in cache.

    Checking ranges with whole-array reductions reads every input once more from memory, which
    costs as much again as the product; here the checks read what the product just loaded.
    Returns None as soon as a block is out of range, so that the caller names the element.
    """
    out = np.empty(d.shape, dtype=np.result_type(d, v, e, np.float64))
    dr, vr, er, flat = d.reshape(-1), v.reshape(-1), e.reshape(-1), out.reshape(-1)
    with np.errstate(over="ignore"):
        for start in range(0, flat.size, _BLOCK):
            block = slice(start, start + _BLOCK)
            db, vb, eb, ob = dr[block], vr[block], er[block], flat[block]
            if not (db.min() >= 1 and vb.min() > 0 and eb.min() > 0 and eb.max() <= 1):
                return None
            np.multiply(db, vb, out=ob)
            np.multiply(ob, eb, out=ob)
            if not ob.max() < np.inf:
                return None
    return out


def _check_ranges(d: Any, v: Any, e: Any, np: Any) -> None:
    # min/max reductions: NaN propagates through them and fails every comparison.
    if d.size and not (d.min() >= 1 and (d.dtype.kind != "f" or d.max() < np.inf)):
        _first_bad("devices", d, ~((d >= 1) & np.isfinite(d)), WHOLE_NUMBER, np, minimum=1)
    if d.size and d.dtype.kind == "f" and not np.array_equal(d, np.floor(d)):
        _first_bad("devices", d, d != np.floor(d), WHOLE_NUMBER, np, minimum=1)
    if v.size and not (v.min() > 0 and v.max() < np.inf):
        _first_bad("per_device_throughput", v, ~((v > 0) & np.isfinite(v)), POSITIVE, np)
    if e.size and not (e.min() > 0 and e.max() <= 1):
        _first_bad("efficiency", e, ~((e > 0) & (e <= 1)), FRACTION, np)


def _full(array: Array, shape: tuple[int, ...]) -> Array:
    import numpy as np

    return array if array.shape == shape else np.broadcast_to(array, shape)


def _as_array(field: str, value: Any, np: Any) -> Any:
    array = np.asarray(value)
    if array.dtype.kind == "b" or array.dtype.kind not in "iuf":
        raise InvalidInput(field, f"an array of {array.dtype}", "numbers (an int or float array)")
    return array


def _first_bad(field: str, array: Any, bad: Any, accepted: str, np: Any, **params: Any) -> None:
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    where = index[0] if len(index) == 1 else index
    raise InvalidInput(f"{field}[{where}]", array[index].item(), accepted, params=params)
