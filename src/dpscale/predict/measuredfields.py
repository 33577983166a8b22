"""The inputs of ``predict`` that bring what was measured: a profile, an nccl-tests log, a run's traces.

Part of :data:`dpscale.predict.fields.PREDICT_INPUTS`, in its order. ``traced`` is what a link from
``/explain`` carries of a run's traces (:mod:`dpscale.predict.linked`), read as ``--from-trace``'s
traces are; ``nccl_fit`` what a link from ``/predict`` carries of an nccl-tests log, read as the log.
The command line's files (``network``, ``from_trace``) are read by their kinds (:mod:`dpscale.kinds.runs`)
where their text is: the values are the profile and the run they hold.
"""

from __future__ import annotations

from dpscale.errors import N_
from dpscale.inputs import Input, Page
from dpscale.predict.linked import MAX_NETWORK, MAX_TRACED

__all__ = ["MEASURED_INPUTS"]

MEASURED_INPUTS = (
    Input(
        "network",
        "network_profile",
        "A profile from dpscale probe: its measured links replace the presets.",
        edges=("cli",),
    ),
    Input(
        "nccl_log",
        "nccltests",
        "The text of an nccl-tests run (all_reduce_perf, reduce_scatter_perf or all_gather_perf, printed or -J): "
        "the links it measured replace the presets (on the command line, dpscale probe imports such a log as a "
        "network profile).",
        edges=("page", "api"),
        page=Page(
            group="cluster",
            label=N_("Or an nccl-tests log of your cluster"),
            hint=N_(
                "Paste the output of all_reduce_perf, reduce_scatter_perf or all_gather_perf, or choose the file: "
                "it is read in your browser and sent with the form. The links it measured replace the presets above."
            ),
        ),
    ),
    Input(
        "nccl_fit",
        "text",
        "What nccl-tests logs measured, as /predict's link carries it (n1_car_r16_…): their runs, fitted as the "
        "logs are; a log given too is read instead.",
        edges=("page", "api"),
        most=MAX_NETWORK,
        page=Page(
            group="cluster",
            label=N_("Measured by an nccl-tests log (from a link)"),
            hint=N_(
                "Filled in when a log is read: what it measured, short enough for the page's link, which carries "
                "it in place of the log. Empty it to go back to the presets."
            ),
        ),
    ),
    Input(
        "from_trace",
        "traces",
        "The run's profiler traces (files or a folder, as dpscale explain reads them): one device's throughput, "
        "the step-time variation and the bandwidth share reached come from them.",
        edges=("cli",),
    ),
    Input(
        "traced",
        "text",
        "What /explain measured of a run, as its link to /predict carries it (t1_n8_c…): one device's throughput, "
        "the step-time variation and the bandwidth share reached come from it.",
        edges=("page", "api"),
        most=MAX_TRACED,
        page=Page(
            group="advanced",
            label=N_("Measured by /explain (from its link)"),
            hint=N_(
                "Filled in by the link on /explain's results: the run's figures, as dpscale predict --from-trace "
                "reads them."
            ),
        ),
    ),
)
