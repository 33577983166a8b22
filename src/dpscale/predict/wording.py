"""The levers' what-ifs in words, in the user's language (shared by the CLI and the page)."""

from __future__ import annotations

from dpscale.i18n import Lang, translation

__all__ = ["lever_text"]


def lever_text(name: str, lang: Lang) -> str:
    """The what-if of :func:`dpscale.predict.model.levers`, in the user's language."""
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
