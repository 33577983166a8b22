"""Scaling laws fitted to measured throughputs, with their uncertainty and a verdict on each.

The catalogue of laws (:mod:`~dpscale.fit.laws`), the fitting (:mod:`~dpscale.fit.fitting`:
least squares, AICc), what a fit gives (:mod:`~dpscale.fit.results`: :class:`Fit`, forecasts with
their intervals) and the reading of measurement files (:mod:`~dpscale.fit.points`).
"""

from dpscale.fit.fitting import EXTRAPOLATION_FACTOR, fit
from dpscale.fit.laws import MODELS, Law
from dpscale.fit.points import read_points
from dpscale.fit.results import MAX_FITTED_THROUGHPUT, PEAK_REACH, Fit, Forecast, ModelFit, Point

__all__ = [
    "EXTRAPOLATION_FACTOR",
    "MAX_FITTED_THROUGHPUT",
    "MODELS",
    "PEAK_REACH",
    "Fit",
    "Forecast",
    "Law",
    "ModelFit",
    "Point",
    "fit",
    "read_points",
]
