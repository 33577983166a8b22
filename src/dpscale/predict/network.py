"""The network a prediction runs on, where a measurement says it: an nccl-tests log or a profile.

A page or a request sends the log's text (never a path on the server); its runs (one, or several:
a file of several, logs pasted one after another) are fitted together by
:func:`dpscale.nccltests.import_logs`, as ``dpscale probe --import`` fits several files, into the
profile ``predict --network`` reads: α and β per tier, and per collective where a run was of a
reduce-scatter or an all-gather, with the runs themselves. What the prediction then states of it
(:attr:`Network.described`) says which runs it came from, the main one (:func:`main_of`) first.

:func:`settle` makes one cluster's links of what was measured and what was typed, the same way
for a log and for a profile:

- each tier comes from one place, and the prediction's assumptions say which (``sources``: a
  preset, a bandwidth typed, a probe, an nccl-tests log, or assumed);
- **the node's links are what the network was fitted with.** A run across hosts alone does not
  say what a node's own links cost, so the fit takes them as costing nothing; ``predict`` then
  takes them so too, and says so. Given the node's links otherwise (a preset typed, another
  measurement), the network tier is fitted again to the same runs with them, so the runs are
  still given back and the node's cost is not counted twice;
- **each run is given back** at its own shape, and its shortfall against the model at each size
  carried to the node counts it did not measure (:mod:`dpscale.predict.pricing`);
- **a tier whose switches reduce** (``in_network``, found by the fit when a run beat the GPU's
  line rate: :mod:`dpscale.nccltests.reduction`) stays so, and the network is fitted again with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

if TYPE_CHECKING:
    from dpscale.collectives.link import Link
    from dpscale.collectives.names import Collective
    from dpscale.nccltests import Log
    from dpscale.predict.job import Cluster
    from dpscale.records import MeasuredRun, ProbedLink

__all__ = ["Network", "Settled", "assumed_free", "from_log", "from_run", "given_back", "main_of", "settle", "shape"]


class _Run(Protocol):
    """What a log and a run share: the collective and the shape it ran at."""

    @property
    def collective(self) -> str: ...
    @property
    def ranks(self) -> int: ...
    @property
    def hosts(self) -> int: ...
    @property
    def devices_per_host(self) -> int: ...


_Shaped = TypeVar("_Shaped", bound=_Run)
ASSUMED = "assumed"  # the node's links, where nothing measured them and nothing was typed: free, as fitted


@dataclass(frozen=True)
class Network:
    """What a log or a profile measured: the tiers (None: not measured), each collective's own, the runs."""

    intra: Link | None
    inter: Link | None
    devices_per_node: int
    collectives: tuple[tuple[Collective, Link | None, Link | None], ...]
    runs: tuple[MeasuredRun, ...] = ()
    source: str = "nccl-tests log"  # or "probe"
    described: dict[str, Any] | None = None  # what the prediction's assumptions say of a log sent as text


def _link(probed: ProbedLink | None) -> Link | None:
    from dpscale.nccltests.profiling import as_link

    return cast("Link | None", as_link(probed))


def _own(fitted: dict[str, Any]) -> tuple[tuple[Collective, Link | None, Link | None], ...]:
    return tuple((cast("Collective", name), _link(intra), _link(inter)) for name, (intra, inter) in fitted.items())


def main_of(runs: Sequence[_Shaped]) -> _Shaped:
    """The run that stands for several (as :func:`dpscale.nccltests.read_text` picks it): the widest all-reduce,
    the first of the widest; else the first run."""
    reduces = [run for run in runs if run.collective == "all_reduce"]
    return max(reduces, key=lambda run: run.ranks) if reduces else runs[0]


def shape(run: _Shaped) -> dict[str, Any]:
    """A run as the prediction's assumptions name it: its collective, ranks and hosts."""
    return {"collective": run.collective, "ranks": run.ranks, "hosts": run.hosts}


def _described(main: _Shaped, runs: Sequence[_Shaped], busbw: float, intra: Any, inter: Any) -> dict[str, Any]:
    return {
        "source": "nccl-tests log",
        "collective": main.collective,
        "ranks": main.ranks,
        "hosts": main.hosts,
        "devices_per_host": main.devices_per_host,
        "busbw": busbw,  # bytes/s, nccl-tests' bus bandwidth at the main run's best size
        "intra": None if intra is None else intra.to_dict(),
        "inter": None if inter is None else inter.to_dict(),
        "runs": [shape(run) for run in runs],  # every run the network is fitted to, in the order given
    }


def from_log(log: Log | Sequence[Log]) -> Network:
    """The network one nccl-tests run measured, or several (the runs of one file, or logs pasted one after
    another), fitted together as ``dpscale probe --import`` fits several files: its tiers, its runs, and a
    description of them, said by the main run (:func:`main_of`)."""
    from dpscale.nccltests import Log, import_logs

    logs = (log,) if isinstance(log, Log) else tuple(log)
    profile = import_logs(logs).profile
    main = main_of(logs)
    busbw = max(row.busbw for row in main.rows)
    described = _described(main, logs, busbw, profile.intra, profile.inter) | {"device_name": main.device_name}
    return Network(
        _link(profile.intra),
        _link(profile.inter),
        profile.devices_per_node,
        _own(dict(profile.collectives)),
        profile.runs,
        "nccl-tests log",
        described,
    )


def from_run(
    run: MeasuredRun | Sequence[MeasuredRun], per_node: int, busbw: float, reduced: tuple[str, ...], text: str
) -> Network:
    """The network a link's ``nccl_fit`` carries (:func:`dpscale.predict.linked.read_network`): its logs' runs,
    fitted as :func:`from_log` fits the logs, said as they are, and as carried by a link (``text``)."""
    from dpscale.nccltests import fit_runs
    from dpscale.nccltests.log import COLLECTIVES
    from dpscale.records import MeasuredRun

    runs = (run,) if isinstance(run, MeasuredRun) else tuple(run)
    fitted = fit_runs(runs, reduced=reduced)
    intra, inter = next(fitted[c] for c in COLLECTIVES if c in fitted)
    described = _described(main_of(runs), runs, busbw, intra, inter) | {
        "device_name": None,
        "fit": text,
        "carried": True,  # read from the link's nccl_fit, not from a log sent with the request
    }
    return Network(_link(intra), _link(inter), per_node, _own(dict(fitted)), runs, "nccl-tests log", described)


def assumed_free() -> Link:
    """The node's links where nothing measured them: costing nothing, as the fit took them."""
    from dpscale.collectives.link import Link
    from dpscale.nccltests.profiling import FREE

    return Link(*FREE)


@dataclass(frozen=True)
class Settled:
    """The links a prediction runs on, where each came from, and the runs it gives back."""

    intra: Link | None
    inter: Link | None
    collectives: tuple[tuple[Collective, Link | None, Link | None], ...]
    sources: tuple[tuple[str, str], ...]
    runs: tuple[MeasuredRun, ...]
    source: str


def settle(
    network: Network,
    intra: Link | None,
    inter: Link | None,
    typed: dict[str, str],
    *,
    measured_wins: bool,
) -> Settled:
    """The links of ``network`` with those typed (``intra``, ``inter``: None where not typed).

    ``typed`` says how each typed tier was given ("preset" or "typed"). Where both say a tier,
    the measurement wins when ``measured_wins`` (a log on the page), else the typed link does, for
    every collective (``--network`` with ``--intra``). A tier the runs measured and that is kept
    is given back; the network tier is fitted again when the node's links differ from those it
    was fitted with (see the module's docstring).
    """
    sources: dict[str, str] = {}
    keep_intra = network.intra is not None and (measured_wins or intra is None)
    keep_inter = network.inter is not None and (measured_wins or inter is None)
    final_intra = network.intra if keep_intra else intra
    final_inter = network.inter if keep_inter else inter
    sources["intra"] = network.source if keep_intra else typed.get("intra", ASSUMED)
    if final_inter is not None:
        sources["inter"] = network.source if keep_inter else typed.get("inter", "typed")
    own = tuple(
        (name, own_intra if keep_intra else None, own_inter if keep_inter else None)
        for name, own_intra, own_inter in network.collectives
    )
    runs = tuple(run for run in network.runs if (keep_intra if run.hosts == 1 else keep_inter))
    if final_intra is None and final_inter is not None and keep_inter:
        final_intra = assumed_free()  # what the network tier was fitted with
    if keep_inter and not keep_intra and final_intra is not None and network.source == "nccl-tests log":
        # the network was fitted with the node's links as free or as measured: fitted again with these
        from dpscale.nccltests import fit_runs

        across = [run for run in network.runs if run.hosts > 1]
        if across and final_intra != assumed_free():
            reduced = ("inter",) if network.inter is not None and network.inter.in_network else ()
            fitted = fit_runs(across, intra=final_intra, reduced=reduced)
            own = tuple((cast("Collective", name), None, _link(tiers[1])) for name, tiers in fitted.items())
            final_inter = next(
                _link(fitted[name][1]) for name in ("all_reduce", "reduce_scatter", "all_gather") if name in fitted
            )
    own = tuple(entry for entry in own if entry[1] is not None or entry[2] is not None)
    return Settled(final_intra, final_inter, own, tuple(sources.items()), runs, network.source)


def given_back(cluster: Cluster, runs: tuple[MeasuredRun, ...], source: str) -> Cluster:
    """``cluster`` with each run's shape priced as measured (:func:`dpscale.predict.pricing.measure`)."""
    from dpscale.predict.pricing import measure

    shapes = []
    for run in runs:
        found = measure(cluster, cast("Collective", run.collective), run.ranks, run.hosts, run.sizes, source)
        if found is not None:
            shapes.append(found)
    return replace(cluster, measured=tuple(shapes)) if shapes else cluster
