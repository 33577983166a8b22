"""How an input's text is read and written back, and how each edge takes it: one class per kind.

An :class:`~dpscale.inputs.Input` names its kind (``"count"``, ``"bandwidth"``: how its text is
read and what its value is); :func:`kind_of` gives the object that says all the edges do with it:

- reading: :meth:`Kind.read` is the parser of :mod:`dpscale.parse` the kind uses, text typed in a
  language into a value; :meth:`Kind.read_input` holds that value to the input's bounds, said about
  the text as typed; :meth:`Kind.read_cli` takes what the command line was given (a flag, a file).
  A file the command line names (a run's traces, a network profile) is read there too, into what it
  holds (:attr:`Kind.reads_file`): a calculator's build is given values, and reads no file;
- writing back: :meth:`Kind.show` as a language writes the value (the page's language switch),
  :meth:`Kind.plain` as the English command line and the API read it back exactly;
- the page: the element it is drawn with, the keyboard a phone shows (``inputmode``), a unit in %;
- the API: :meth:`Kind.api` (the parameter's Python type and bounds) and :meth:`Kind.schema` (its
  JSON schema);
- the command line: a flag or a text, and its metavar.

A new kind is one class (in :mod:`~dpscale.kinds.quantities`, numbers; :mod:`~dpscale.kinds.texts`,
words and lists; :mod:`~dpscale.kinds.fitted`, a fit's models; :mod:`~dpscale.kinds.runs`, what runs
measured and the files that hold it), listed
in :data:`KINDS`, and its name in ``dpscale.inputs.KindName`` for the definitions to name it.
``dpscale.inputs`` does not import this package: kinds read with packages whose definitions
``inputs`` serves (a fit's measurements, an nccl-tests log, predict's traces, profile and records),
so it would close an import circle. Nothing heavy loads before a method runs (the parsers bring
Babel): ``dpscale scale`` imports this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpscale.kinds.fitted import ModelNames
from dpscale.kinds.kind import ApiParameter, Kind
from dpscale.kinds.quantities import (
    Bandwidth,
    Bytes,
    Count,
    Duration,
    Fraction,
    Number,
    ScaledCount,
    Seconds,
    Variation,
)
from dpscale.kinds.runs import (
    MAX_LOG_CHARACTERS,
    Measurements,
    NcclTests,
    NetworkProfile,
    Reference,
    StepRecords,
    Traces,
)
from dpscale.kinds.texts import Choice, DeviceList, Path, Switch, Text

if TYPE_CHECKING:
    from dpscale.inputs import Input

__all__ = [
    "KINDS",
    "kind_of",
    # the base, and the API's parameter a kind makes
    "ApiParameter",
    "Kind",
    # numbers
    "Bandwidth",
    "Bytes",
    "Count",
    "Duration",
    "Fraction",
    "Number",
    "ScaledCount",
    "Seconds",
    "Variation",
    # words and lists
    "Choice",
    "DeviceList",
    "ModelNames",
    "Path",
    "Switch",
    "Text",
    # what runs measured
    "MAX_LOG_CHARACTERS",
    "Measurements",
    "NcclTests",
    "NetworkProfile",
    "Reference",
    "StepRecords",
    "Traces",
]

KINDS: tuple[Kind, ...] = (
    Count(),
    Number(),
    Fraction(),
    Variation(),
    ScaledCount(),
    Bytes(),
    Bandwidth(),
    Seconds(),
    Duration(),
    DeviceList(),
    Choice(),
    Switch(),
    Text(),
    ModelNames(),
    Path(),
    Reference(),
    Measurements(),
    NcclTests(),
    Traces(),
    NetworkProfile(),
    StepRecords(),
)
_NAMED = {kind.name: kind for kind in KINDS}


def kind_of(item: Input) -> Kind:
    """The kind of ``item``: the object its definition names (or gives, an object being equal to its name)."""
    kind = item.kind
    return kind if isinstance(kind, Kind) else _NAMED[kind]
