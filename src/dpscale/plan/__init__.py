"""The planner: how long a run takes, what it costs, the fewest devices that meet a deadline, and
the fewest that hold the model.

:mod:`~dpscale.plan.budget` holds the formulas (time, device-hours, cost, energy, the deadline's
search); :mod:`~dpscale.plan.planned` what the planner answers. Its inputs are :mod:`dpscale.calculators.plan`'s.
"""

from dpscale.plan.budget import (
    LARGEST_SEARCHED,
    DeadlinePlan,
    EfficiencyCurve,
    Plan,
    constant,
    devices_for_deadline,
    plan,
    total_work,
)
from dpscale.plan.planned import MemoryPlan, PlanResult

__all__ = [
    "LARGEST_SEARCHED",
    "DeadlinePlan",
    "EfficiencyCurve",
    "MemoryPlan",
    "Plan",
    "PlanResult",
    "constant",
    "devices_for_deadline",
    "plan",
    "total_work",
]
