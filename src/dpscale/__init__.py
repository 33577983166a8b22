"""dpscale: how fast will a data-parallel job really run, and why not faster?"""

from typing import TYPE_CHECKING

from dpscale import _display
from dpscale._version import __version__
from dpscale.errors import AmbiguousInput, DpscaleError, InvalidInput, MissingExtra, MissingInput, RunFailed
from dpscale.scaling import Scaling, Solution, devices_for, efficiency_from, per_device_for, scale, solve

if TYPE_CHECKING:
    from dpscale._sweep import Sweep, sweep
    from dpscale.measure.meter import Meter

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
    "MissingInput",
    "RunFailed",
    "__version__",
    # measurement (torch, imported on first use)
    "Meter",
]


def _show_html(result: object) -> str:
    # A result's table in a notebook (see dpscale._display): the presentation loads on the first display.
    from dpscale.notebook import show_html

    return show_html(result)


_display.plug(_show_html)


def __getattr__(name: str) -> object:
    # Loaded on first use: the sweep (numpy) and Meter (torch); `import dpscale` needs neither.
    if name in ("Sweep", "sweep"):
        from dpscale import _sweep

        return getattr(_sweep, name)
    if name == "Meter":
        try:
            from dpscale.measure.meter import Meter
        except ImportError as exc:
            raise MissingExtra("Meter", "measure") from exc
        return Meter
    raise AttributeError(f"module 'dpscale' has no attribute {name!r}")
