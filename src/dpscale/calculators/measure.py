"""Measure and probe: a synthetic job's throughput and efficiency at each size, and the all-reduce's
times over message sizes with the α and β they imply (or those nccl-tests' outputs imply).

What they take (:data:`MEASURE` and :data:`PROBE`, defined beside the launcher in
:mod:`dpscale.measure.clusterfields`, whose builds give the plans it runs), compute
(:mod:`dpscale.measure`, :mod:`dpscale.nccltests`) and show (:func:`present_measurements`,
:func:`present_probe`, :func:`present_import`). No torch here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from dpscale.calculators.shown import Grid, Note, Shown
from dpscale.format import format_gigabytes_per_second, format_milliseconds, format_number, format_percent
from dpscale.i18n import Lang, translation
from dpscale.measure.clusterfields import MEASURE, PROBE

if TYPE_CHECKING:
    from dpscale.nccltests import Imported
    from dpscale.records import Measurement, NetworkProfile

__all__ = ["MEASURE", "PROBE", "present_import", "present_measurements", "present_probe"]


def present_measurements(found: Iterable[Measurement], out: str, lang: Lang) -> Shown:
    """Each size measured: throughput and efficiency with their intervals, and the step time's variation."""
    _ = translation(lang).gettext

    def number(x: float | None, decimals: int = 0) -> str:
        return "—" if x is None else format_number(float(x), lang, decimals=decimals)

    def percent(x: float | None) -> str:
        return "—" if x is None else format_percent(float(x), lang)

    rows = []
    for record in found:
        low, high = record.throughput_ci or (None, None)
        rows.append(
            (
                number(record.devices),
                number(record.throughput, 1),
                f"{number(low, 1)} – {number(high, 1)}",
                percent(record.efficiency),
                "—" if record.efficiency_ci is None else " – ".join(map(percent, record.efficiency_ci)),
                percent(None if record.step_time is None else record.step_time.cv),
            )
        )
    header = (
        _("Devices"),
        _("Throughput"),
        _("95%% interval").replace("%%", "%"),
        _("Efficiency"),
        _("E interval"),
        _("Step time CV"),
    )
    title = _("Measured (records added to %(out)s)") % {"out": out}
    return Shown((Grid(header, tuple(rows), title, key="measured"),))


def present_probe(probed: NetworkProfile, out: str, lang: Lang) -> Shown:
    """The all-reduce's time and bandwidths at each size, and the latency and bandwidth fitted to them."""
    _ = translation(lang).gettext
    rows = tuple(
        (
            format_number(row.bytes, lang),
            format_milliseconds(row.seconds, lang),
            format_gigabytes_per_second(row.algbw, lang, decimals=3),
            format_gigabytes_per_second(row.busbw, lang, decimals=3),
        )
        for row in probed.sizes
    )
    header = (_("Size (bytes)"), _("Time"), "algbw (GB/s)", "busbw (GB/s)")
    title = _("All-reduce over %(n)s ranks") % {"n": probed.world_size}
    parts: list[Grid | Note] = [Grid(header, rows, title, key="sizes")]
    tier = probed.intra or probed.inter
    if tier is not None:
        fitted = _("Fitted: latency α = %(a)s, bandwidth 1/β = %(b)s GB/s; profile written to %(out)s") % {
            "a": format_milliseconds(tier.latency, lang),
            "b": format_gigabytes_per_second(tier.bandwidth, lang, decimals=3),
            "out": out,
        }
        parts.append(Note(fitted, key="fitted"))
    return Shown(tuple(parts))


def present_import(imported: Imported, out: str, lang: Lang) -> Shown:
    """The α and β fitted to nccl-tests' outputs per collective and tier, what 1/β means, and how closely the
    model gives each run back at its smallest and largest size."""
    _ = translation(lang).gettext
    profile = imported.profile
    tiers = {"intra": _("in a node"), "inter": _("between nodes")}
    fitted = tuple(
        (
            collective,
            tiers[tier],
            format_milliseconds(link.latency, lang),
            format_gigabytes_per_second(link.bandwidth, lang, decimals=1),
        )
        for collective, links in profile.collectives.items()
        for tier, link in zip(("intra", "inter"), links, strict=True)
        if link is not None
    )
    title = _("Fitted from nccl-tests") + (f" ({profile.device_name})" if profile.device_name else "")
    header = (_("Collective"), _("Tier"), _("Latency α"), _("Bandwidth 1/β (GB/s)"))
    meaning = _(
        "1/β is a bus bandwidth: the busbw a ring reaches when bytes dominate, in nccl-tests' terms "
        "(busbw = algbw·2(n−1)/n for an all-reduce of n ranks, algbw·(n−1)/n for a reduce-scatter or an "
        "all-gather, where algbw = bytes ÷ time), so an all-reduce of n ranks moves its bytes at an "
        "algorithm bandwidth of 1/β·n/(2(n−1))."
    )
    checks = tuple(
        (
            check.file,
            f"{format_number(check.ranks, lang)} / {format_number(check.hosts, lang)}",
            format_number(size, lang),
            format_milliseconds(measured, lang),
            format_milliseconds(model, lang),
        )
        for check in imported.checks
        for size, measured, model in (check.smallest, check.largest)
    )
    checked = (_("File"), _("Ranks / nodes"), _("Size (bytes)"), _("Measured"), _("Model"))
    return Shown(
        (
            Grid(header, fitted, title, key="fitted"),
            Note(meaning, key="meaning"),
            Grid(checked, checks, _("Each run given back by the model"), key="checks"),
            Note(_("Profile written to %(out)s") % {"out": out}, key="written", whole=True),
        )
    )
