"""dpscale: how fast will a data-parallel job really run, and why not faster?"""

from dpscale._sweep import Sweep, sweep
from dpscale._version import __version__
from dpscale.errors import AmbiguousInput, DpscaleError, InvalidInput, MissingExtra
from dpscale.scaling import Scaling, Solution, devices_for, efficiency_from, per_device_for, scale, solve

__all__ = [
    # the seed's calculator
    "Scaling",
    "Solution",
    "devices_for",
    "efficiency_from",
    "per_device_for",
    "scale",
    "solve",
    # over arrays
    "Sweep",
    "sweep",
    # errors
    "AmbiguousInput",
    "DpscaleError",
    "InvalidInput",
    "MissingExtra",
    "__version__",
]
