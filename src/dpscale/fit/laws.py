"""The scaling laws dpscale fits: each gives the cluster throughput A(n) of n devices.

E(n) = A(n) / (n·A(1)) follows from any of them.

    constant    A = λ·n·E for n > 1, A(1) = λ               the seed's: one efficiency for every size
    amdahl      A = λ·n / (1 + σ·(n−1))                      Amdahl 1967: a serial share σ of each step
    gustafson   A = λ·(n − σ·(n−1))                          Gustafson 1988: scaled (weak) speedup
    usl         A = λ·n / (1 + σ·(n−1) + κ·n·(n−1))          Gunther's Universal Scalability Law:
                                                             contention σ, coherency κ; peaks at
                                                             n* = √((1−σ)/κ)
    comm        A = λ·n / (1 + a·(n−1) + b·(n−1)/n)          the ring all-reduce of dpscale.predict
                                                             without overlap: a = 2α/T, b = 2Gβ/T,
                                                             latency and bandwidth per step time T

λ is the throughput of one device as the model sees it. The bounds are those of the fit: every
parameter at least 0, shares (σ, κ) at most 1, E at most 1.5.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dpscale.errors import N_, MissingExtra

__all__ = ["MODELS", "Law", "numerics"]


@dataclass(frozen=True)
class Law:
    """One scaling law: its parameters (λ first), formula, source, A(n, *params) and the fit's bounds."""

    name: str
    params: tuple[str, ...]
    formula: str
    source: str
    fn: Callable[..., Any]
    bounds: tuple[tuple[float, ...], tuple[float, ...]]
    title: str = ""  # how a reader calls it (a catalog message), where its name will not do

    def at(self, devices: Any, params: dict[str, float]) -> Any:
        """A(n) with the parameters named as in :attr:`params`."""
        return self.fn(devices, *(params[p] for p in self.params))


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


_INF = math.inf
MODELS: dict[str, Law] = {
    law.name: law
    for law in (
        Law(
            "constant",
            ("lambda", "E"),
            "A = λ·n·E (n > 1), A(1) = λ",
            "the seed's constant efficiency",
            _constant,
            ((0, 0), (_INF, 1.5)),
            N_("constant efficiency"),
        ),
        Law(
            "amdahl",
            ("lambda", "sigma"),
            "A = λ·n / (1 + σ(n−1))",
            "Amdahl 1967",
            _amdahl,
            ((0, 0), (_INF, 1)),
            "Amdahl",
        ),
        Law(
            "gustafson",
            ("lambda", "sigma"),
            "A = λ·(n − σ(n−1))",
            "Gustafson 1988",
            _gustafson,
            ((0, 0), (_INF, 1)),
            "Gustafson",
        ),
        Law(
            "usl",
            ("lambda", "sigma", "kappa"),
            "A = λ·n / (1 + σ(n−1) + κ·n(n−1))",
            "Gunther 1993, Universal Scalability Law",
            _usl,
            ((0, 0, 0), (_INF, 1, 1)),
            N_("Universal Scalability Law"),
        ),
        Law(
            "comm",
            ("lambda", "a", "b"),
            "A = λ·n / (1 + a(n−1) + b(n−1)/n)",
            "dpscale.predict's ring all-reduce, no overlap",
            _comm,
            ((0, 0, 0), (_INF, _INF, _INF)),
            N_("communication (ring all-reduce)"),
        ),
    )
}


def numerics() -> tuple[Any, Any, Any]:
    """numpy, scipy.optimize and scipy.stats, which fitting needs (the ``fit`` extra)."""
    try:
        import numpy
        from scipy import optimize, stats
    except ImportError as exc:
        raise MissingExtra("fitting", "fit") from exc
    return numpy, optimize, stats
