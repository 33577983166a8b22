"""Measurement records and network profiles, typed: what dpscale measure, probe and Meter write.

A record (:class:`Measurement`, :mod:`~dpscale.records.measurements`) is one JSON object per line
of a runs file, written by ``dpscale measure --out`` and :class:`dpscale.Meter` and read by
``dpscale fit``; a profile (:class:`NetworkProfile`, :mod:`~dpscale.records.profiles`) is the JSON
file ``dpscale probe --out`` writes and ``dpscale predict --network`` reads. Each type's
``to_dict`` gives the JSON keys dpscale writes, and its ``from_dict`` reads them back equal; how
their values are read by key is :mod:`~dpscale.records._values`'s. Neither torch nor numpy is
imported here.
"""

from dpscale.records._values import JSON_TYPE, finite_or_none, json_number, timestamp, unwritten
from dpscale.records.measurements import Measurement, StepTime, append, is_complete
from dpscale.records.profiles import (
    COLLECTIVE_NAMES,
    AllReduceTiming,
    MeasuredRun,
    NetworkProfile,
    ProbedLink,
    write_profile,
)

__all__ = [
    # a measured size: a line of a runs file
    "Measurement",
    "StepTime",
    "append",
    "is_complete",
    # a network profile
    "AllReduceTiming",
    "COLLECTIVE_NAMES",
    "MeasuredRun",
    "NetworkProfile",
    "ProbedLink",
    "write_profile",
    # values as records write them
    "JSON_TYPE",
    "finite_or_none",
    "json_number",
    "timestamp",
    "unwritten",
]
