"""What the planner answers: the run, the deadline's search, and whether the model fits (:class:`PlanResult`).

Its inputs and their rules are the planner's calculator (:mod:`dpscale.calculators.plan`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpscale.plan.budget import DeadlinePlan, Plan

__all__ = ["MemoryPlan", "PlanResult"]


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    """Whether the model fits: the fewest devices whose memory holds it under ``sharding`` (None:
    no count does), and what each device holds on the plan's devices."""

    sharding: str
    params: float
    device_memory: float
    fewest_devices: int | None
    per_device: float  # bytes each device holds on the plan's devices

    @property
    def fits(self) -> bool:
        return self.per_device <= self.device_memory

    def to_dict(self) -> dict[str, Any]:
        return {
            "sharding": self.sharding,
            "params": self.params,
            "device_memory": self.device_memory,
            "fewest_devices": self.fewest_devices,
            "per_device": self.per_device,
            "fits": self.fits,
        }


@dataclass(frozen=True)
class PlanResult:
    """What the planner answers: the run on the devices given, the fewest that meet a deadline, and
    (given the model's size and a device's memory) the fewest that hold the model."""

    plan: Plan  # on the devices given, else on the fewest that meet the deadline
    deadline: DeadlinePlan | None
    devices_given: bool
    memory: MemoryPlan | None = None

    def to_dict(self) -> dict[str, Any]:
        held = {} if self.memory is None else {"memory": self.memory.to_dict()}
        if self.deadline is None:
            return {**self.plan.to_dict(), **held}
        requested = {"requested": self.plan.to_dict()} if self.devices_given else {}
        return {**self.deadline.to_dict(), **requested, **held}
