"""A prediction in words, in the user's language (shared by the CLI, the page and a notebook).

The levers' what-ifs (and what each rests on), where each term of the step came from, what a
calibration learned, what the traces set, the warnings, and the notes under the table. No numpy:
the values arrive computed by the core.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from dpscale.format import format_milliseconds, format_number, format_percent
from dpscale.i18n import Lang, translation

if TYPE_CHECKING:
    from dpscale.predict.levers import Lever
    from dpscale.predict.prediction import Prediction

__all__ = [
    "bound_by",
    "calibration_line",
    "lever_line",
    "lever_text",
    "levers_note",
    "mfu_line",
    "network_lines",
    "prediction_notes",
    "scaled",
    "source_name",
    "trace_line",
    "warning_lines",
]


def lever_text(name: str, lang: Lang) -> str:
    """The what-if of :func:`dpscale.predict.levers.levers`, in the user's language."""
    _ = translation(lang).gettext
    texts = {
        "batch": _("double the per-device batch"),
        "accumulation": _("accumulate twice as many micro-steps"),
        "intra_bandwidth": _("double the bandwidth inside a node"),
        "inter_bandwidth": _("double the network bandwidth between nodes"),
        "overlap": _("overlap communication with the backward pass"),
        "balance": _("balance the load: no step-time variation"),
        "fp16_gradients": _("all-reduce gradients in 16 bits"),
        "input": _("double the input pipeline's throughput"),
        "algorithm_ring": _("use the ring all-reduce"),
        "algorithm_tree": _("use the tree all-reduce"),
        "algorithm_hierarchical": _("use the hierarchical all-reduce"),
    }
    if name.startswith("sharding_"):  # sharding_zero3: the strategy instead of the one given
        return _("shard with %(strategy)s instead") % {"strategy": name.removeprefix("sharding_")}
    return texts[name]


def lever_line(lever: Lever, lang: Lang) -> str:
    """The what-if, after what it rests on where that was only assumed: ``if the step-time variation is 2 %: …``."""
    text = lever_text(lever.name, lang)
    if lever.condition is None:
        return text
    return translation(lang).gettext("%(condition)s: %(lever)s") % {
        "condition": lever.condition.localized(lang),
        "lever": text,
    }


def levers_note(p: Prediction, lang: Lang) -> str | None:
    """Under the levers, what those on the links rest on where the links were assumed (None: they were not)."""
    if p.source("exposed_communication") != "assumed":
        return None
    return translation(lang).gettext(
        "Levers on measured terms come first. Those on the links are as good as the links' assumed figures "
        "(a preset's or those typed, at the share of them assumed reached)."
    )


def source_name(source: str, lang: Lang) -> str:
    """A term's source (:mod:`dpscale.predict.sources`) in a word."""
    _ = translation(lang).gettext
    names = {
        "assumed": _("assumed"),
        "measured": _("measured"),
        "fitted": _("fitted"),
        "log": _("log"),
        "trace": _("trace"),
    }
    return names.get(source, source)


def bound_by(p: Prediction, i: int, lang: Lang) -> str:
    """What row ``i`` is bound by, said as assumed where its term was only assumed."""
    _ = translation(lang).gettext
    names = {
        "compute": _("compute"),
        "communication": _("communication"),
        "stragglers": _("stragglers"),
        "input": _("input"),
    }
    name = names[p.bottleneck[i]]
    return _("%(cause)s (assumed)") % {"cause": name} if p.bottleneck_assumed()[i] else name


def _unknown_name(name: str, lang: Lang) -> str:
    _ = translation(lang).gettext
    return {
        "jitter": _("step-time variation"),
        "network_share": _("network share"),
        "interference": _("interference"),
    }[name]


def _range(low: float, high: float, lang: Lang) -> str:
    return f"{format_percent(low, lang)}–{format_percent(high, lang)}"


def calibration_line(p: Prediction, lang: Lang) -> str | None:
    """What a calibration learned, in a sentence: each unknown's posterior beside its prior (None: none was made)."""
    found = p.assumptions.get("calibration")
    if not found:
        return None
    catalog = translation(lang)
    _ = catalog.gettext
    count = len(found["measured"])
    head = catalog.ngettext("Calibrated on %(n)s measurement", "Calibrated on %(n)s measurements", count) % {
        "n": format_number(count, lang)
    }
    parts = []
    kept = []
    for name, v in found["fitted"].items():
        prior = v["prior"]
        values = {
            "name": _unknown_name(name, lang),
            "median": format_percent(v["value"], lang),
            "range": _range(v["low"], v["high"], lang),
            "prior": format_percent(prior["median"], lang),
            "prior_range": _range(prior["low"], prior["high"], lang),
        }
        if v["learned"] == "prior":
            kept.append(_("%(name)s %(prior)s (%(prior_range)s)") % values)
        elif v["learned"] == "joint":
            values["with"] = ", ".join(_unknown_name(other, lang) for other in v["joint_with"])
            parts.append(
                _("%(name)s %(median)s, not told apart from %(with)s: their joint effect fitted (prior %(prior)s)")
                % values
            )
        else:
            parts.append(_("%(name)s %(median)s (%(range)s; prior %(prior)s, %(prior_range)s)") % values)
    if kept:
        parts.append(
            _("kept at their priors, of which the measurements say nothing: %(kept)s") % {"kept": ", ".join(kept)}
        )
    return _("%(head)s: %(found)s.") % {"head": head, "found": "; ".join(parts)} if parts else f"{head}."


def trace_line(p: Prediction, lang: Lang) -> str | None:
    """What ``--from-trace`` took from the traces, in a sentence (None: no traces)."""
    t: dict[str, Any] | None = p.assumptions.get("from_trace")
    if not t:
        return None
    _ = translation(lang).gettext
    parts = []
    if t.get("per_device_throughput") is not None:
        parts.append(
            _("one device alone %(v)s samples/s") % {"v": format_number(t["per_device_throughput"], lang, decimals=1)}
        )
    if t.get("measured_jitter") is not None:
        parts.append(
            _("a random step-time variation of %(cv)s (all of it over ranks and steps: %(all)s)")
            % {"cv": format_percent(t["jitter"], lang), "all": format_percent(t["measured_jitter"], lang)}
        )
    if t.get("imbalance"):
        parts.append(
            _("rank %(rank)s slower by %(f)s at every step: a fixed imbalance, the same at every size")
            % {"rank": format_number(t["slowest_rank"], lang), "f": format_percent(t["imbalance"], lang)}
        )
    if t.get("link_efficiency") is not None:
        tier = _("the link inside a node") if t["tier"] == "intra" else _("the network")
        parts.append(
            _("%(link)s at %(share)s of its bandwidth (collectives in flight %(ms)s)")
            % {
                "link": tier,
                "share": format_percent(t["link_efficiency"], lang),
                "ms": format_milliseconds(t["measured_communication"], lang),
            }
        )
    head = _("From the traces of %(n)s ranks") % {"n": format_number(t["devices"], lang)}
    return _("%(head)s: %(found)s.") % {"head": head, "found": ", ".join(parts)} if parts else f"{head}."


def scaled(x: float, lang: Lang) -> str:
    """``60.9 G``, ``989 T``: a count of FLOPs with its SI prefix, three significant digits."""
    for prefix, size in (("E", 1e18), ("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6)):
        if x >= size:
            return f"{format_number(x / size, lang, decimals=max(0, 2 - int(math.log10(x / size))))}\u00a0{prefix}"
    return f"{format_number(x, lang, decimals=0)}\u00a0"


def mfu_line(p: Prediction, lang: Lang) -> str | None:
    """Where one device's throughput came from when an MFU was given in its place (None: it was not)."""
    t = p.tokens
    if t is None or t.mfu is None or t.flops is None or t.peak is None:
        return None
    return translation(lang).gettext(
        "One device's throughput alone, %(v)s samples/s, is derived from an MFU of %(mfu)s: %(mfu)s × "
        "%(peak)sFLOP/s ÷ (%(flops)sFLOP per token × %(tokens)s tokens per sample). The compute is therefore "
        "assumed, not measured."
    ) % {
        "v": format_number(p.workload.per_device_throughput, lang, decimals=3),
        "mfu": format_percent(t.mfu, lang),
        "peak": scaled(t.peak, lang),
        "flops": scaled(t.flops, lang),
        "tokens": format_number(t.per_sample, lang),
    }


def _run(run: dict[str, Any], lang: Lang) -> str:
    return translation(lang).ngettext(
        "%(collective)s, %(ranks)s ranks on %(hosts)s host",
        "%(collective)s, %(ranks)s ranks on %(hosts)s hosts",
        run["hosts"],
    ) % {
        "collective": run["collective"],
        "ranks": format_number(run["ranks"], lang),
        "hosts": format_number(run["hosts"], lang),
    }


def network_lines(p: Prediction, lang: Lang) -> list[str]:
    """What nccl-tests logs of several runs gave: the runs the network is fitted to, and what of them a link
    could not carry, so the prediction does not rest on it (:func:`dpscale.predict.linked.carriable`)."""
    said: dict[str, Any] = p.assumptions.get("network_profile") or {}
    _ = translation(lang).gettext
    lines = []
    runs = said.get("runs") or []
    if len(runs) > 1:
        lines.append(
            _("The network is fitted to %(n)s nccl-tests runs together: %(runs)s.")
            % {"n": format_number(len(runs), lang), "runs": "; ".join(_run(run, lang) for run in runs)}
        )
    if said.get("left_out"):
        lines.append(
            _(
                "Left out, so that the page's link can carry all that the result rests on: %(runs)s. "
                "Give fewer runs to use them."
            )
            % {"runs": "; ".join(_run(run, lang) for run in said["left_out"])}
        )
    for run in said.get("thinned") or ():
        lines.append(
            _(
                "%(run)s: %(kept)s of its %(all)s sizes used, the largest among them, so that the page's link "
                "can carry the run."
            )
            % {"run": _run(run, lang), "kept": format_number(run["sizes"], lang), "all": format_number(run["of"], lang)}
        )
    return lines


def warning_lines(p: Prediction, lang: Lang) -> list[str]:
    """The prediction's warnings, in the user's language."""
    return [warning.localized(lang) for warning in p.warnings]


def prediction_notes(p: Prediction, lang: Lang) -> list[str]:
    """What a prediction's table leaves unsaid, a sentence each: where its interval comes from, where each term
    came from, the measurement E is relative to, and what a calibration or the traces found."""
    _ = translation(lang).gettext
    notes = [
        _("E (low–high): its %(level)s interval, from what the model cannot know; E is its median.")
        % {"level": format_percent(p.level, lang)}
    ]
    if p.sources:
        notes.append(
            _(
                "Above each term, where its figure came from: assumed (a default or a prior's median), measured "
                "(given as measured), fitted (calibrated on measurements), log (an nccl-tests log), trace (profiler "
                "traces)."
            )
        )
    if p.reference_devices is not None:
        notes.append(
            _("E relative to the measurement on %(n)s devices.") % {"n": format_number(p.reference_devices, lang)}
        )
    for line in (mfu_line(p, lang), calibration_line(p, lang), trace_line(p, lang)):
        if line:
            notes.append(line)
    from dpscale.predict.job import measured_notes  # numpy: only once a prediction exists

    notes.extend(network_lines(p, lang))
    notes.extend(said.localized(lang) for said in measured_notes(p.cluster))
    if p.source("straggler_wait") == "assumed" and "stragglers" in p.bottleneck:
        notes.append(
            _(
                "The straggler wait comes from an assumed step-time variation of %(cv)s across devices: "
                "give the one measured on your cluster."
            )
            % {"cv": format_percent(p.cluster.jitter, lang)}
        )
    return notes
