"""What dpscale reads of one nccl-tests run: its collective, ranks and hosts (:class:`Log`) and rows (:class:`Row`)."""

from __future__ import annotations

from dataclasses import dataclass

from dpscale.messages import Message

__all__ = ["COLLECTIVES", "Log", "Row"]

COLLECTIVES = ("all_reduce", "reduce_scatter", "all_gather")


@dataclass(frozen=True, slots=True)
class Row:
    """One size of the table, one of its two halves: bytes, seconds, nccl-tests' algbw and busbw in bytes/s."""

    bytes: int
    seconds: float
    algbw: float
    busbw: float
    in_place: bool


@dataclass(frozen=True)
class Log:
    """One nccl-tests run: which collective, over how many ranks on how many hosts, and its rows.

    ``notes`` says what the reader inferred or left out (a run of another collective in the same
    file, a rank count read elsewhere than the ``# Using devices`` list), for a user to be told.
    """

    name: str
    collective: str
    ranks: int
    hosts: int
    devices_per_host: int
    device_name: str | None
    rows: tuple[Row, ...]
    notes: tuple[Message, ...] = ()

    @property
    def nodes(self) -> int:
        return self.hosts
