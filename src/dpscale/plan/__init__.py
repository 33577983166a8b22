"""Time and cost of a training run, and the cluster size that meets a deadline.

A run processes W units of work (samples or tokens: a dataset of N samples for e epochs is
W = N·e) at the actual throughput A = d·v·E(d) of :mod:`dpscale.scaling`:

    T = W / A                      wall-clock time
    device-hours = d·T / 3600
    cost = device-hours × price    (price per device-hour)
    energy = device-hours × watts / 1000   kWh drawn by the devices alone (no host, no cooling)

E can be a constant (the seed's) or a curve E(d), such as a prediction or a fit: any callable
from a device count to an efficiency. Since d·E(d) may stop growing, the deadline solver
searches the counts rather than inverting a formula.
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
from dpscale.plan.inputs import PLAN, MemoryPlan, PlanResult

__all__ = [
    "LARGEST_SEARCHED",
    "PLAN",
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
