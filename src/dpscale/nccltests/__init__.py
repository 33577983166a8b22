"""nccl-tests' results read into a network profile: ``dpscale probe --import FILE...``.

- :mod:`dpscale.nccltests.logfiles`: the text or ``-J`` JSON output of ``all_reduce_perf``,
  ``reduce_scatter_perf`` and ``all_gather_perf``, read into :class:`Log` objects (defined in
  :mod:`~dpscale.nccltests.log`), with the parts it reads a printed log with: its lines split
  into runs (:mod:`~dpscale.nccltests.lines`), each run as it is read (:mod:`~dpscale.nccltests.run`),
  and its collective, ranks and hosts where the log does not say them (:mod:`~dpscale.nccltests.ranks`);
- :mod:`dpscale.nccltests.profiling`: α and β per collective and tier, fitted to the model
  ``dpscale predict`` prices with, and the profile ``predict --network`` reads;
- :mod:`dpscale.nccltests.reduction`: in-network reduction as a log shows it (a bus bandwidth
  above the GPU's own line rate).

Neither imports torch: the logs come from a cluster, the import runs anywhere.
"""

from __future__ import annotations

from dpscale.nccltests.logfiles import COLLECTIVES, Log, Row, read_log, read_logs, read_text, read_texts
from dpscale.nccltests.profiling import Check, Imported, fit_runs, import_logs, model_time, runs_of

__all__ = [
    "COLLECTIVES",
    "Check",
    "Imported",
    "Log",
    "Row",
    "fit_runs",
    "import_logs",
    "model_time",
    "read_log",
    "read_logs",
    "read_text",
    "read_texts",
    "runs_of",
]
