"""The collectives the model prices and the all-reduce algorithms it knows, by name.

A leaf without numpy: the inputs' definitions read these, and :mod:`dpscale.collectives.costs`
prices them.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

__all__ = ["ALGORITHMS", "Algorithm", "Collective", "bus_factor"]

Algorithm = Literal["auto", "ring", "tree", "hierarchical"]
ALGORITHMS: tuple[str, ...] = get_args(Algorithm)
Collective = Literal["all_reduce", "reduce_scatter", "all_gather"]


def bus_factor(ranks: Any, collective: str) -> Any:
    """nccl-tests' busbw ÷ algbw for ``ranks`` ranks: 2(n−1)/n for an all-reduce, (n−1)/n for a reduce-scatter or
    an all-gather (a number, or an array of them)."""
    return (2 if collective == "all_reduce" else 1) * (ranks - 1) / ranks
