from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpscale import InvalidInput
from dpscale.collectives.link import Link
from dpscale.predict import presets, uncertainty
from dpscale.predict.levers import levers
from dpscale.predict.model import Cluster, Imbalanced, Reference, Workload, predict
from dpscale.predict.wording import lever_line

RESNET50_A100 = Workload(938, 256, 25.6e6)  # DeepLearningExamples' TF32 single-GPU figure
BERT_LARGE = Workload(500, 32, 330e6)  # communication-heavy: the network's share matters
DGX_A100 = Cluster(presets.link("intra", "nvlink3"), 8, presets.link("inter", "ib-hdr", nics=8))
COUNTS = [1, 2, 4, 8, 16, 64, 256, 1024]

workloads = st.builds(
    Workload,
    per_device_throughput=st.floats(1, 1e5),
    batch=st.floats(1, 4096),
    params=st.floats(1e5, 1e11),
    grad_bytes=st.sampled_from([2.0, 4.0]),
    accumulation=st.integers(1, 16),
)
clusters = st.builds(
    Cluster,
    intra=st.builds(Link, st.floats(1e9, 1e12), st.floats(0, 1e-4), st.floats(0.1, 1)),
    devices_per_node=st.sampled_from([1, 2, 4, 8, 16]),
    inter=st.none() | st.builds(Link, st.floats(1e8, 1e11), st.floats(0, 1e-4), st.floats(0.1, 1)),
    algorithm=st.sampled_from(["auto", "ring", "tree", "hierarchical"]),
    overlap=st.booleans(),
    jitter=st.floats(0, 0.2),
)


@given(w=workloads, c=clusters)
def test_efficiency_is_in_0_1_and_1_on_one_device(w: Workload, c: Cluster) -> None:
    p = predict(COUNTS, w, c)
    assert np.all(p.efficiency > 0)
    assert np.all(p.efficiency <= 1)
    assert p.efficiency[0] == 1.0
    assert np.allclose(p.actual_throughput, np.array(COUNTS) * w.per_device_throughput * p.efficiency)


@given(w=workloads, c=clusters)
def test_less_bandwidth_or_bigger_gradients_never_raise_efficiency(w: Workload, c: Cluster) -> None:
    e = predict(COUNTS, w, c).efficiency
    slower = replace(c, intra=replace(c.intra, bandwidth=c.intra.bandwidth / 2))
    assert np.all(predict(COUNTS, w, slower).efficiency <= e + 1e-12)
    if c.inter is not None:
        slower_net = replace(c, inter=replace(c.inter, bandwidth=c.inter.bandwidth / 2))
        assert np.all(predict(COUNTS, w, slower_net).efficiency <= e + 1e-12)
    bigger = replace(w, params=w.params * 2)
    assert np.all(predict(COUNTS, bigger, c).efficiency <= e + 1e-12)


@given(w=workloads, c=clusters, extra=st.integers(1, 8))
def test_more_accumulation_never_lowers_efficiency(w: Workload, c: Cluster, extra: int) -> None:
    more = replace(w, accumulation=w.accumulation + extra)
    assert np.all(predict(COUNTS, more, c).efficiency >= predict(COUNTS, w, c).efficiency - 1e-12)


@given(w=workloads, c=clusters)
def test_overlap_never_hurts(w: Workload, c: Cluster) -> None:
    on = predict(COUNTS, w, replace(c, overlap=True)).efficiency
    off = predict(COUNTS, w, replace(c, overlap=False)).efficiency
    assert np.all(on >= off - 1e-12)


def test_efficiency_falls_with_cluster_size() -> None:
    e = predict(COUNTS, RESNET50_A100, DGX_A100).efficiency
    assert np.all(np.diff(e) <= 0)
    assert e[-1] < 0.97


def test_terms_add_up_and_name_the_bottleneck() -> None:
    p = predict([1, 8, 64], replace(RESNET50_A100, batch=8), replace(DGX_A100, jitter=0.0))
    assert np.allclose(p.step_time, p.compute_time + p.exposed_communication + p.straggler_wait + p.input_wait)
    assert not p.input_wait.any()  # no input pipeline given: not modelled
    assert p.bottleneck == ["compute", "communication", "communication"]
    rows = p.to_dict()["predictions"]
    assert rows[1]["step_time"]["exposed_communication"] > 0
    assert set(rows[0]["step_time"]) == {
        "total",
        "compute",
        "communication",
        "exposed_communication",
        "straggler_wait",
        "input_wait",
    }
    assert "input pipeline" in p.assumptions["not_modelled"]


def test_to_dict_computes_each_column_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Linear in the number of device counts: 4 000 rows must not recompute every column for every row.
    from dpscale.predict.model import Prediction

    p = predict(list(range(1, 4001)), RESNET50_A100, DGX_A100)
    calls = {"bottleneck": 0, "efficiency": 0}
    for name in calls:
        original = getattr(Prediction, name)

        def counted(self: Prediction, _name: str = name, _original: property = original) -> object:
            calls[_name] += 1
            return _original.fget(self)  # type: ignore[misc]

        monkeypatch.setattr(Prediction, name, property(counted))
    rows = p.to_dict()["predictions"]
    assert len(rows) == 4000
    assert calls["bottleneck"] == 1
    assert calls["efficiency"] <= 3  # itself, and inside A and S
    assert rows[-1]["efficiency"] == float(p.efficiency[-1])
    assert rows[-1]["bottleneck"] == p.bottleneck[-1]


def test_a_shared_input_pipeline_slows_a_full_node() -> None:
    # ResNet-50 at 938 images/s per GPU; the node's loader decodes 6 000 images/s for its 8 GPUs.
    w = replace(RESNET50_A100, input_throughput=6000)
    p = predict([1, 4, 8, 64], w, replace(DGX_A100, jitter=0.0))
    b, v = w.batch, w.per_device_throughput
    # 1 and 4 GPUs need at most 3 752 images/s: the loader keeps up.
    assert p.input_wait[0] == 0
    assert p.input_wait[1] == 0
    # 8 GPUs need 7 504/s: a micro-step takes 8·b/L instead of b/v, on every node alike.
    assert p.input_wait[2] == pytest.approx(8 * b / 6000 - b / v)
    assert p.input_wait[3] == pytest.approx(p.input_wait[2])
    assert p.bottleneck[2:] == ["input", "input"]
    assert p.efficiency[2] == pytest.approx(p.compute_time[2] / p.step_time[2])
    assert float(p.efficiency[2]) < 6000 / (8 * v) + 0.01  # no better than the loader allows
    assert p.assumptions["input_throughput"] == 6000
    assert "input pipeline" not in p.assumptions["not_modelled"]
    found = {lever.name: lever for lever in levers([64], w, replace(DGX_A100, jitter=0.0))}
    assert found["input"].gain > 0.1
    assert found["input"] == max(found.values(), key=lambda lever: lever.efficiency)


def test_accumulation_waits_for_input_on_every_micro_step() -> None:
    w = replace(RESNET50_A100, input_throughput=6000, accumulation=4)
    p = predict([8], w, DGX_A100)
    assert p.input_wait[0] == pytest.approx(4 * (8 * w.batch / 6000 - w.batch / w.per_device_throughput))


@pytest.mark.parametrize("rate", [0.0, -1.0, 900.0, float("nan")])
def test_input_pipeline_slower_than_one_device_is_refused(rate: float) -> None:
    with pytest.raises(InvalidInput) as caught:
        replace(RESNET50_A100, input_throughput=rate)
    assert caught.value.field == "input_throughput"


def test_without_overlap_all_communication_is_exposed() -> None:
    p = predict([8], RESNET50_A100, replace(DGX_A100, overlap=False))
    assert p.exposed_communication[0] == pytest.approx(p.communication_time[0])


def test_last_bucket_is_exposed_even_with_overlap() -> None:
    # 25.6M fp32 gradients in 25 MiB buckets: 4 buckets; compute dwarfs communication, so only the last
    # shows, and the three hidden ones cost the compute the interference ρ's median of their time.
    p = predict([8], RESNET50_A100, replace(DGX_A100, jitter=0.0))
    rho = uncertainty.PRIORS["interference"].median
    assert p.cluster.interference == pytest.approx(rho, rel=1e-12)
    last = p.communication_time[0] / 4
    assert p.exposed_communication[0] == pytest.approx(last + rho * 3 * last)
    told = predict([8], RESNET50_A100, replace(DGX_A100, jitter=0.0, interference=0.01))  # ρ given: kept
    assert told.exposed_communication[0] == pytest.approx(last + 0.01 * 3 * last)


def test_levers_are_ranked_and_batch_helps_when_communication_binds() -> None:
    w = Workload(938, 8, 25.6e6)  # a tiny batch: communication dominates
    c = Cluster(Link(300e9, 3e-6, 0.8), 8, Link(1.25e9, 30e-6, 0.8))
    found = levers([64], w, c)
    efficiencies = [lever.efficiency for lever in found]
    assert efficiencies == sorted(efficiencies, reverse=True)
    by_name = {lever.name: lever for lever in found}
    assert by_name["batch"].gain > 0
    assert by_name["inter_bandwidth"].gain > 0
    assert by_name["fp16_gradients"].gain > 0
    assert "overlap" not in by_name  # already on
    in_16_bits = {lever.name for lever in levers([64], replace(w, grad_bytes=2.0), c)}
    assert "fp16_gradients" not in in_16_bits  # already in 16 bits: not offered again


def test_presets() -> None:
    assert presets.link("intra", "nvlink3").bandwidth == 300e9
    assert presets.link("inter", "IB-HDR", nics=4).bandwidth == 100e9
    with pytest.raises(InvalidInput, match="nvlink3"):
        presets.link("intra", "nvlink9")
    with pytest.raises(InvalidInput) as caught:
        presets.resolve_link("intra", "nvlink3", 300e9)
    assert caught.value.field == "intra_bandwidth"
    assert presets.resolve_link("inter") is None
    assert presets.resolve_link("intra", "nvlink3", nics=4) == presets.link("intra", "nvlink3")  # cards: network only
    custom = presets.resolve_link("inter", None, 12.5e9, 5e-6, 0.5, nics=2)
    assert custom == Link(25e9, 5e-6, 0.5)


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: predict([0, 8], RESNET50_A100, DGX_A100), "devices"),
        (lambda: predict([], RESNET50_A100, DGX_A100), "devices"),
        (lambda: predict([1.5], RESNET50_A100, DGX_A100), "devices"),
        (lambda: Workload(0, 256, 1e6), "per_device_throughput"),
        (lambda: Workload(938, 256, -1), "params"),
        (lambda: Cluster(Link(1e9), algorithm="butterfly"), "algorithm"),  # type: ignore[arg-type]
        (lambda: Cluster(Link(1e9), jitter=1.5), "jitter"),
        (lambda: Cluster(Link(1e9), bucket_bytes=0), "bucket"),
    ],
)
def test_bad_input_names_the_field(call: object, field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        call()  # type: ignore[operator]
    assert caught.value.field == field


def test_extreme_inputs_give_a_named_error_or_finite_results() -> None:
    with pytest.raises(InvalidInput) as caught:
        predict([8, 2**63], RESNET50_A100, DGX_A100)
    assert caught.value.field == "devices"
    w = Workload(2**63, 256, 25.6e6)  # a Python int past numpy's integers is stored as a float
    assert isinstance(w.per_device_throughput, float)
    with pytest.raises(InvalidInput, match="per_device_throughput"):
        predict([10**9], Workload(1e300, 256, 25.6e6), DGX_A100)  # A = n·v·E would be infinite
    huge = Workload(0.5, 1e307, 1e300, 4.0, 1, 0.5)  # twice 1e307 samples to load overflows: left out
    found = {lever.name: lever for lever in levers([8, 64], huge, Cluster(Link(1, 1e-6, 0.8)))}
    assert "batch" not in found
    assert "accumulation" not in found
    assert "fp16_gradients" in found
    assert all(math.isfinite(lever.efficiency) for lever in found.values())


# -- one estimate, one range (dpscale.predict.uncertainty) ---------------------------------------------

ISSUE_JOB = Workload(1000, 32, 1e9)  # the issue's example: 1B parameters at 1000 samples/s, batch 32
NDR = Cluster(presets.link("intra", "nvlink4"), 8, presets.link("inter", "ib-ndr", nics=8))


def test_the_estimate_is_the_model_at_the_priors_medians_and_inside_its_range() -> None:
    # Before, the point took 2 % and no interference while the range centred on 5 % and 30 %: E(8) was
    # 0.8628 in [0.5917, 0.8628], the top of its own range.
    p = predict([8, 64, 512], ISSUE_JOB, NDR)
    medians = {name: prior.median for name, prior in uncertainty.priors(NDR).items()}
    at_medians = predict([8, 64, 512], ISSUE_JOB, uncertainty.apply(NDR, medians), jitter_known=True)
    assert np.allclose(p.efficiency, at_medians.efficiency, rtol=1e-12)  # the values the range is drawn about
    low, high = p.efficiency_interval
    assert np.all(low < p.efficiency)
    assert np.all(p.efficiency < high)
    assert p.cluster.interference == pytest.approx(medians["interference"], rel=1e-12)
    assert p.cluster.network_share == pytest.approx(medians["network_share"], rel=1e-12)
    assert p.assumptions["jitter"] == pytest.approx(medians["jitter"], rel=1e-12)


def test_along_each_unknown_the_estimate_is_the_median() -> None:
    # E falls as cv rises: E at cv's 5th and 95th percentiles brackets E at its median, the estimate.
    prior = uncertainty.PRIORS["jitter"]
    p = predict([64], RESNET50_A100, DGX_A100)
    below = predict([64], RESNET50_A100, replace(DGX_A100, jitter=prior.high))
    at = [
        float(predict([64], RESNET50_A100, replace(p.cluster, jitter=cv), jitter_known=True).efficiency[0])
        for cv in (prior.low, prior.median, prior.high)
    ]
    assert at[0] > float(p.efficiency[0]) > at[2]
    assert at[1] == pytest.approx(float(p.efficiency[0]), rel=1e-12)
    assert below.cluster.jitter == prior.high  # a variation other than the assumed one is the user's: kept


@given(w=workloads, c=clusters)
def test_the_estimate_lies_strictly_inside_its_range_past_one_device(w: Workload, c: Cluster) -> None:
    p = predict(COUNTS, w, c)
    low, high = p.efficiency_interval
    assert (low[0], high[0]) == (1.0, 1.0)  # one device: E is 1 by definition, and so is its range
    assert np.all(low[1:] < p.efficiency[1:])
    assert np.all(p.efficiency[1:] < high[1:])


def test_below_a_measured_size_the_range_reaches_up_too() -> None:
    reference = Reference(64, float(predict([64], RESNET50_A100, DGX_A100).actual_throughput[0]))
    p = predict([1, 8, 64, 512], RESNET50_A100, DGX_A100, reference=reference)
    low, high = p.efficiency_interval
    assert np.all(p.efficiency[:2] > 1)  # smaller than the measured size: more per device
    assert np.all(high[:2] > p.efficiency[:2] * 1.01)
    assert np.all(low[:2] < p.efficiency[:2])
    assert (float(low[2]), float(high[2])) == pytest.approx((1.0, 1.0))
    assert float(low[3]) < float(p.efficiency[3]) < float(high[3]) <= 1.0


def test_a_random_variation_waits_for_the_slowest_rank_of_a_node_and_the_slowest_node() -> None:
    # T_wait = T_c·cv·(√(2 ln g) + √(2 ln m)): g ranks of a node, m nodes.
    c = replace(DGX_A100, jitter=0.05, overlap=False)
    p = predict([1, 4, 8, 64, 512], RESNET50_A100, c)
    t_c = RESNET50_A100.batch / RESNET50_A100.per_device_throughput
    for n, wait in zip([1, 4, 8, 64, 512], p.straggler_wait, strict=True):
        g, m = min(n, 8), max(1.0, n / 8)
        assert wait == pytest.approx(t_c * 0.05 * (math.sqrt(2 * math.log(g)) + math.sqrt(2 * math.log(m))))


def test_a_fixed_imbalance_does_not_grow_with_the_device_count() -> None:
    fields = {name: getattr(DGX_A100, name) for name in DGX_A100.__slots__}  # type: ignore[attr-defined]
    slow = Imbalanced(**{**fields, "jitter": 0.0}, imbalance=0.1)  # one rank 10 % slower at every step
    p = predict([1, 2, 16, 512], RESNET50_A100, slow, jitter_known=True)
    t_c = RESNET50_A100.batch / RESNET50_A100.per_device_throughput
    assert p.straggler_wait.tolist() == pytest.approx([0.0, 0.1 * t_c, 0.1 * t_c, 0.1 * t_c])
    assert p.assumptions["imbalance"] == 0.1
    balanced = {lever.name: lever for lever in levers([512], RESNET50_A100, slow, jitter_known=True)}["balance"]
    assert balanced.gain > 0.05  # balancing removes the fixed wait too
    with pytest.raises(InvalidInput, match="imbalance"):
        Imbalanced(**fields, imbalance=-0.1)


def test_a_lever_resting_on_an_assumed_variation_says_so_and_ranks_after_measured_ones() -> None:
    assumed = {lever.name: lever for lever in levers([64], RESNET50_A100, DGX_A100)}
    balance = assumed["balance"]
    assert balance.assumed
    assert balance.condition is not None
    assert str(balance.condition) == "if the step-time variation is 2 %"
    assert lever_line(balance, "en") == "if the step-time variation is 2 %: balance the load: no step-time variation"
    told = {lever.name: lever for lever in levers([64], RESNET50_A100, replace(DGX_A100, jitter=0.05))}
    assert told["balance"].condition is None
    assert not told["balance"].assumed
    assert lever_line(told["balance"], "en") == "balance the load: no step-time variation"
    # measured terms first: with the communication read from a log, the balance lever (assumed) comes after
    ranked = levers([64], RESNET50_A100, DGX_A100, sources={"exposed_communication": "log"})
    fitting = [lever for lever in ranked if lever.fits is not False]
    assert [lever.assumed for lever in fitting] == sorted(lever.assumed for lever in fitting)
    assert [lever.name for lever in fitting if lever.assumed] == ["balance"]
    assert ranked[0].to_dict()["assumed"] is False


def test_the_measured_network_can_be_widened_away_from_the_node_counts_measured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A network measured at 2 nodes: how far other node counts stray from it may grow with the distance
    # (uncertainty.NETWORK_WIDENING, 0 until the network's extrapolation error is known).
    from dpscale.predict.job import Measured

    measured = Measured("all_reduce", 16, 2, (math.log(1e6), math.log(1e9)), (0.0, 0.0))
    logged = replace(DGX_A100, measured=(measured,), sources=(("inter", "nccl-tests log"),))
    counts = [16, 64, 512]
    assert uncertainty.widening(logged, np.asarray(counts)).tolist() == [0.0, 0.0, 0.0]
    narrow = predict(counts, BERT_LARGE, logged)
    monkeypatch.setattr(uncertainty, "NETWORK_WIDENING", 0.5)
    assert uncertainty.widening(logged, np.asarray(counts)).tolist() == pytest.approx([0.0, 1.0, 2.5])
    wide = predict(counts, BERT_LARGE, logged)
    assert np.allclose(wide.efficiency, narrow.efficiency)  # the estimate stays: only its range widens
    widths = [np.subtract(*p.efficiency_interval[::-1]) for p in (narrow, wide)]
    assert widths[1][0] == pytest.approx(widths[0][0])  # at the node count measured: as it was
    assert np.all(widths[1][1:] > widths[0][1:])
