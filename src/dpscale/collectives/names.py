"""The collectives the model prices and the all-reduce algorithms it knows, by name.

A leaf without numpy: the inputs' definitions read these, and :mod:`dpscale.collectives.costs`
prices them.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["ALGORITHMS", "Algorithm", "Collective"]

Algorithm = Literal["auto", "ring", "tree", "hierarchical"]
ALGORITHMS: tuple[str, ...] = get_args(Algorithm)
Collective = Literal["all_reduce", "reduce_scatter", "all_gather"]
