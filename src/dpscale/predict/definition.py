"""The inputs of ``predict``, once: the CLI's options, the page's fields and the API's parameters.

:data:`PREDICT` lists them (each defined in :mod:`dpscale.predict.fields`); :func:`build` turns
their values into the device counts, the :class:`~dpscale.predict.model.Workload` and the
:class:`~dpscale.predict.model.Cluster` the model takes, with every rule across them: a link from
a preset or a bandwidth (not both), a network profile filling the links it measured, the devices
per node of that profile, a bandwidth inside a node being required, an nccl-tests log or what a link carries of one
(``nccl_fit``: the log wins, being what the text was made of), measurements to calibrate on
and a variation known or assumed. No numpy here until :func:`build` runs.

:func:`build` reads no file: the command line's files (``--from-trace``, ``--network``,
``--jitter-from``) are read by their kinds where their text is (:mod:`dpscale.kinds.runs`), so that
it is given the run, the profile and the variation they hold. A library caller may still give a
file's path in their place: it is read by the function the kind reads it with (:func:`_read`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from os import PathLike
from typing import TYPE_CHECKING, Any, TypeVar

from dpscale.errors import N_, InvalidInput, MissingInput
from dpscale.inputs import Definition, Values
from dpscale.predict.defaults import DEFAULT_DEVICES_PER_NODE, DEFAULT_JITTER, DEFAULT_LAYERS
from dpscale.predict.fields import PREDICT_INPUTS

if TYPE_CHECKING:
    from dpscale.predict.flops import Tokens
    from dpscale.predict.levers import Lever
    from dpscale.predict.model import Cluster, Prediction, Reference, Workload
    from dpscale.predict.traced import Traced

_T = TypeVar("_T")

__all__ = ["PREDICT", "PREDICT_INPUTS", "Request", "build"]


@dataclass(frozen=True)
class Request:
    """A prediction asked for: the device counts, what each device runs, the cluster.

    ``measured``: throughputs of the whole cluster the model is calibrated on (``speed_known``:
    the workload's per-device throughput is one device's, measured alone; else the compute speed
    is calibrated too). ``jitter_known``: the cluster's cv was given, not assumed.
    """

    devices: tuple[int, ...]
    workload: Workload
    cluster: Cluster
    reference: Reference | None = None
    traced: Traced | None = None  # what a run's profiler traces set in place of the assumptions
    measured: tuple[Reference, ...] = ()
    speed_known: bool = True
    jitter_known: bool = False
    network: dict[str, Any] | None = None  # the nccl-tests log the links came from, as the assumptions state it
    tokens: Tokens | None = None  # the sequence length, FLOPs per token and peak: tokens/s and MFU

    @property
    def from_mfu(self) -> bool:
        """Whether one device's throughput was derived from an MFU given (``tokens.mfu``), not given itself."""
        return self.tokens is not None and self.tokens.mfu is not None

    def predict(self) -> Prediction:
        from dataclasses import replace

        from dpscale.predict import calibration, model

        if self.measured:
            found = calibration.predict_calibrated(
                list(self.devices),
                self.workload,
                self.cluster,
                self.measured,
                speed_known=self.speed_known,
                jitter_known=self.jitter_known,
            )
        else:
            found = model.predict(
                list(self.devices),
                self.workload,
                self.cluster,
                reference=self.reference,
                jitter_known=self.jitter_known,
            )
        if self.network is not None:
            found = replace(found, assumptions={**found.assumptions, "network_profile": self.network})
        if self.from_mfu:  # one device's throughput derived from an MFU: the compute is assumed, not measured
            from dpscale.predict.sources import speed

            derived = {**dict(found.sources), "compute": speed(known=True, from_mfu=True)}
            found = replace(found, sources=tuple(derived.items()))
        if self.tokens is not None:
            found = replace(
                found, tokens=self.tokens, assumptions={**found.assumptions, "tokens": self.tokens.to_dict()}
            )
            mfu = found.mfu
            if mfu is not None and float(mfu.max()) > 1:  # more FLOPs than the device has: an input is off
                from dpscale.messages import Message

                said = "the MFU is above 100 %%: the throughput, the FLOPs per token and the peak cannot all be right"
                found = replace(found, warnings=(*found.warnings, Message.of(said)))
        if self.traced is None:
            return found
        return replace(
            found,
            assumptions={**found.assumptions, "from_trace": self.traced.to_dict()},
            sources=self._traced_sources(found.sources),
            warnings=self.traced.warnings + found.warnings,
        )

    def _traced_sources(self, said: Any) -> Any:
        """The terms' sources, with what the traces set said as theirs."""
        found = dict(said)
        if self.traced is None:
            return said
        taken = self.traced.taken
        if "speed" in taken:
            found["compute"] = "trace"
        if "jitter" in taken:
            found["straggler_wait"] = "trace"
        crosses = self.cluster.inter is not None and max(self.devices) > self.cluster.devices_per_node
        if self.traced.tier == ("inter" if crosses else "intra") and found.get("exposed_communication") != "fitted":
            found["exposed_communication"] = "trace"  # the link the largest size crosses is the one traced
        return tuple(found.items())

    def levers(self) -> list[Lever]:
        from dpscale.predict import calibration, levers, sources, uncertainty

        if self.measured:
            fit = calibration.calibrate(
                self.measured, self.workload, self.cluster, speed_known=self.speed_known, jitter_known=self.jitter_known
            )
            cluster, reference, estimate = uncertainty.apply(self.cluster, fit.values), fit.reference, False
            names, learned = fit.names, fit.moved
        else:
            cluster, reference, estimate = self.cluster, self.reference, True
            names, learned = tuple(uncertainty.unknowns(self.cluster, jitter_known=self.jitter_known)), ()
        speed = sources.speed(known=self.speed_known, from_mfu=self.from_mfu)
        said = sources.of(max(self.devices), self.workload, self.cluster, speed=speed, unknowns=names, learned=learned)
        return levers.levers(
            list(self.devices),
            self.workload,
            cluster,
            reference=reference,
            sources=dict(self._traced_sources(said)),
            estimate=estimate,
            jitter_known=self.jitter_known,
        )


def build(values: Values) -> Request:
    """The request the values of :data:`PREDICT_INPUTS` describe (a value None: not given)."""
    from dpscale.predict import model, presets

    v = PREDICT.complete(values)
    run = None
    if v["from_trace"] is not None:  # a path read first: a trace that cannot be read is named before what it lacks
        from dpscale.explain import explain

        run = _read(v["from_trace"], lambda paths: explain(paths, field="from_trace"))
    carried = None
    if v["traced"] is not None:  # what a link from /explain carries of a run: read as --from-trace's traces
        from dpscale.predict.linked import read_traced

        carried = read_traced(v["traced"])
    intra = presets.resolve_link("intra", v["intra"], v["intra_bandwidth"], v["intra_latency"], v["intra_efficiency"])
    inter = presets.resolve_link(
        "inter", v["inter"], v["inter_bandwidth"], v["inter_latency"], v["inter_efficiency"], nics=v["nics"]
    )
    typed = {
        tier: "preset" if v[tier] is not None else "typed"
        for tier, link in (("intra", intra), ("inter", inter))
        if link is not None
    }
    per_node = v["devices_per_node"]
    collectives: tuple[Any, ...] = ()
    described = None
    settled = None
    if v["nccl_log"] is not None:  # what the log measured replaces the presets; the tiers it did not measure stay
        from dpscale.predict.linked import from_logs
        from dpscale.predict.network import main_of, settle

        try:  # one run, or several (a file's, logs pasted one after another): those a link can carry
            found = from_logs(v["nccl_log"])
        except InvalidInput as exc:
            logs = v["nccl_log"]  # quoted as the run it is, not by the name it was read under
            log = main_of(logs if isinstance(logs, tuple | list) else (logs,))
            shown = f"{log.collective}, {log.ranks} ranks on {log.hosts} hosts"
            raise exc.as_given("nccl_log", shown) if exc.field == "import" else exc from None
        per_node = per_node or found.devices_per_node
        described = found.described  # with what a link carries of it (fit), and what it could not
        settled = settle(found, intra, inter, typed, measured_wins=True)
    elif v["nccl_fit"] is not None:  # what a link carries of a log: its run, read as the log is (a log given wins)
        from dpscale.predict.linked import read_network
        from dpscale.predict.network import settle

        found = read_network(v["nccl_fit"])
        per_node = per_node or found.devices_per_node
        described = found.described
        settled = settle(found, intra, inter, typed, measured_wins=True)
    if v["network"] is not None:  # a link given as well wins over the profile's, for every collective
        from dpscale.predict.network import Network, settle

        profile = _read(v["network"], presets.read_profile)
        per_node = per_node or profile.devices_per_node
        kept = Network(
            profile.intra, profile.inter, profile.devices_per_node, profile.collectives, profile.runs, profile.source
        )
        settled = settle(kept, intra, inter, typed, measured_wins=False)
    sources: tuple[tuple[str, str], ...] = tuple(typed.items())
    if settled is not None:
        intra, inter, collectives, sources = settled.intra, settled.inter, settled.collectives, settled.sources
    if intra is None:
        raise MissingInput(
            "intra_bandwidth", "a bandwidth inside a node (such as 300GB/s) or a preset (such as nvlink3)"
        )
    measured = tuple(model.Reference(*pair) for pair in v["measured"] or ())
    tokens = _tokens(v)
    speed = v["per_device_throughput"] if tokens is None else v["per_device_throughput"] or _from_mfu(tokens)
    if speed is None:
        if measured:
            first = min(measured, key=lambda m: m.devices)
            speed = first.throughput / first.devices  # calibrated by the model on the measurements
        elif run is not None or carried is not None:
            speed = 1.0  # what the traces measure replaces it below
        else:
            raise MissingInput("per_device_throughput", N_("one device's throughput alone, or a measurement (8:7500)"))
    # A cv other than the default is the user's measurement: kept, not fitted. The default itself is
    # an assumption, and every edge (the API and the page fill it in) gives it alike.
    jitter = v["jitter"]
    jitter_known = jitter != DEFAULT_JITTER
    if v["jitter_from"] is not None:
        if values.get("jitter") is not None and jitter_known:
            raise InvalidInput("jitter_from", v["jitter_from"], N_("either a step-time variation or records, not both"))
        from dpscale.predict.measured import jitter_from

        jitter, jitter_known = float(_read(v["jitter_from"], jitter_from)), True
    workload = model.Workload(
        speed,
        v["batch"],
        v["params"],
        v["grad_bytes"],
        v["accumulation"],
        v["input_throughput"],
        param_bytes=v["param_bytes"],
        optimizer=v["optimizer"],
        layers=v["layers"] or DEFAULT_LAYERS,
        activation_memory=v["activation_memory"],
    )
    cluster = model.Cluster(
        intra,
        per_node or DEFAULT_DEVICES_PER_NODE,
        inter,
        v["algorithm"],
        v["overlap"],
        v["bucket_bytes"],
        jitter,
        sharding=v["sharding"],
        shard_group=v["shard_group"],
        device_memory=v["device_memory"],
        collectives=collectives,
        sources=sources,
    )
    if settled is not None and settled.runs:
        from dpscale.predict.network import given_back

        cluster = given_back(cluster, settled.runs, settled.source)
    traced = None
    speed_known = v["per_device_throughput"] is not None or v["mfu"] is not None
    # the run's traces (--from-trace), or what a link from /explain carries of them (traced)
    from_run = (run.calibration, run.ranks, None) if run is not None else None
    taken = from_run or (None if carried is None else (carried.calibration, (), carried.split))
    if taken is not None:
        from dpscale.predict.traced import calibrated

        given = {"speed_given": speed_known or bool(measured), "jitter_given": jitter_known}
        calibration, ranks, variation = taken
        workload, cluster, traced = calibrated(
            calibration, workload, cluster, ranks=ranks, variation=variation, **given
        )
        speed_known = speed_known or traced.per_device_throughput is not None
        jitter_known = True  # measured by the traces, or given
    return Request(
        tuple(v["devices"]),
        workload,
        cluster,
        traced=traced,
        measured=measured,
        speed_known=speed_known,
        jitter_known=jitter_known,
        network=described,
        tokens=tokens,
    )


def _read(value: Any, reader: Callable[[Any], _T]) -> _T:
    """The value a file's input holds: as the edges give it, read by its kind; or a library caller's path
    (a text, a path, traces' list of them), read here by ``reader``, the function its kind reads it with."""
    return reader(value) if isinstance(value, str | PathLike | list | tuple) else value


def _tokens(v: Values) -> Tokens | None:
    """The sequence length, the FLOPs per token and the peak, when given (F: 6N, + the attention's term)."""
    from dpscale.predict.flops import FORMULA, FORMULA_PARAMETERS_ONLY, Tokens, flops_per_token
    from dpscale.predict.peaks import read_peak

    if v["mfu"] is not None and v["per_device_throughput"] is not None:
        raise InvalidInput("mfu", v["mfu"], N_("either the per-device throughput or an MFU, not both"))
    peak = None if v["peak_flops"] is None else read_peak(v["peak_flops"])
    sequence = v["tokens_per_sample"]
    if sequence is None:
        names = ("mfu", "peak_flops", "flops_per_token", "hidden")
        given = next((name for name in names if v[name] is not None), None)
        if given is not None:
            raise MissingInput(
                "tokens_per_sample",
                N_("the tokens per sample (the sequence length), which %(given)s needs"),
                params={"given": given},
            )
        return None
    if v["flops_per_token"] is not None and v["hidden"] is not None:
        raise InvalidInput("hidden", v["hidden"], N_("either the FLOPs per token or the attention width, not both"))
    if v["hidden"] is not None and v["layers"] is None:
        raise MissingInput("layers", N_("the number of layers, which the attention term 12·L·H·S needs"))
    if v["flops_per_token"] is not None:
        flops, formula = float(v["flops_per_token"]), "given"
    else:
        flops = flops_per_token(v["params"], layers=v["layers"], width=v["hidden"], sequence=sequence)
        formula = FORMULA if v["hidden"] is not None else FORMULA_PARAMETERS_ONLY
    if peak is None:
        if v["mfu"] is not None:
            raise MissingInput(
                "peak_flops", N_("one device's peak (989TFLOP/s, or a device: h100-sxm), which the MFU needs")
            )
        return Tokens(float(sequence))
    return Tokens(float(sequence), flops, peak.flops, formula, peak.device, peak.source, v["mfu"])


def _from_mfu(tokens: Tokens) -> float | None:
    """One device's throughput alone from its MFU, v = MFU·P / (F·S), held to a throughput's bounds (None: no MFU)."""
    from dpscale.predict.flops import throughput_from_mfu

    if tokens.mfu is None or tokens.peak is None or tokens.flops is None:
        return None
    speed = throughput_from_mfu(tokens.mfu, tokens.peak, tokens.flops, tokens.per_sample)
    given = PREDICT.get("per_device_throughput")
    try:
        return speed if given is None else float(given.check(speed))
    except InvalidInput as exc:
        raise InvalidInput(
            "mfu",
            tokens.mfu,
            N_(
                "an MFU whose throughput, MFU × peak ÷ (FLOPs per token × tokens per sample), is %(bounds)s "
                "samples/s; this one gives %(v)s"
            ),
            params={"bounds": exc.expected, "v": f"{speed:.3g}"},
        ) from None


PREDICT = Definition(
    "predict",
    PREDICT_INPUTS,
    build,
    groups=(
        ("workload", N_("Job")),
        ("tokens", N_("Tokens and MFU (optional)")),
        ("cluster", N_("Interconnect")),
        ("sharding", N_("Sharding and memory")),
        ("advanced", N_("More settings")),
    ),
)
