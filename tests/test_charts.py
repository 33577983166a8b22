from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dpscale import InvalidInput, scale
from dpscale.charts import save_chart, scaling_chart, scaling_chart_points, to_svg


def test_points_run_from_one_to_twice_d_and_include_the_users_point() -> None:
    rows = scaling_chart_points(scale(64, 2000, 0.9))
    counts = sorted({r["devices"] for r in rows})
    assert counts[0] == 1
    assert counts[-1] == 128
    actual = {r["devices"]: r["throughput"] for r in rows if r["series"] == "actual"}
    ideal = {r["devices"]: r["throughput"] for r in rows if r["series"] == "ideal"}
    assert actual[64] == 115_200
    assert ideal[64] == 128_000
    assert all(actual[n] <= ideal[n] for n in counts)


def test_points_are_bounded_for_huge_clusters() -> None:
    rows = scaling_chart_points(scale(100_000, 10, 0.5))
    assert len(rows) <= 2 * 260
    assert any(r["devices"] == 100_000 for r in rows)


def test_chart_is_localised() -> None:
    spec = json.dumps(scaling_chart(scale(64, 2000, 0.9), "fr").to_dict(), ensure_ascii=False)
    assert "Débit réel" in spec
    assert "Appareils" in spec
    assert "64 appareils : 115\u202f200 samples/s" in spec


def test_svg_has_the_marked_point() -> None:
    svg = to_svg(scaling_chart(scale(64, 2000, 0.9), "en"), lang="en")
    assert svg.lstrip().startswith("<svg")
    assert "64 devices: 115,200 samples/s" in svg


@pytest.mark.parametrize("suffix", [".svg", ".png", ".json"])
def test_save_chart(tmp_path: Path, suffix: str) -> None:
    path = save_chart(scaling_chart(scale(8, 100, 0.8)), tmp_path / f"c{suffix}")
    data = path.read_bytes()
    assert len(data) > 500
    if suffix == ".png":
        assert data.startswith(b"\x89PNG")


def test_save_chart_rejects_unknown_formats(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as caught:
        save_chart(scaling_chart(scale(8, 100, 0.8)), tmp_path / "c.gif")
    assert caught.value.field == "plot"


def test_the_prediction_chart_shows_the_interval_as_a_band() -> None:
    from dpscale.charts import prediction_chart
    from dpscale.predict import presets
    from dpscale.predict.model import Cluster, Workload, predict

    cluster = Cluster(presets.link("intra", "nvlink3"), 8, presets.link("inter", "ib-hdr", nics=8))
    p = predict([8, 64, 512], Workload(938, 256, 25.6e6), cluster)
    spec = prediction_chart(p, "en").to_dict()
    text = json.dumps(spec)
    assert '"area"' in text
    low, high = p.efficiency_interval
    band = spec["vconcat"][0]["layer"][0]
    assert band["mark"]["type"] == "area"
    shown = [(row["e_low"], row["e_high"]) for row in band["data"]["values"]]
    assert shown == list(zip(low.tolist(), high.tolist(), strict=True))
    assert to_svg(prediction_chart(p, "en"), lang="en").lstrip().startswith("<svg")


def test_the_prediction_chart_labels_each_size_and_every_legend_whole() -> None:
    # 64 to 512 devices: ticks at 64, 128, 256 and 512 (not 100, 150, …), legends never cut short.
    from dpscale.charts import prediction_chart
    from dpscale.predict import presets
    from dpscale.predict.model import Cluster, Workload, predict

    cluster = Cluster(presets.link("intra", "nvlink3"), 8, presets.link("inter", "ib-hdr", nics=8))
    p = predict([64, 128, 256, 512], Workload(938, 256, 25.6e6), cluster)
    svg = to_svg(prediction_chart(p, "fr"), lang="fr", width=290)
    assert "E constante (sa valeur à 64 maintenue)" in svg
    assert "…" not in svg
    texts = re.findall(r">([^<]+)</text>", svg)
    first_axis = texts[: texts.index("Appareils")]  # the efficiency chart's x axis, then its title
    assert first_axis == ["64", "128", "256", "512"]


@pytest.mark.parametrize(("lang", "interval", "memory"), [("en", "90% interval", "device memory"), ("fr", None, None)])
def test_the_prediction_chart_names_its_band_and_the_device_memory_line(
    lang: str, interval: str | None, memory: str | None
) -> None:
    from dpscale.charts import prediction_chart
    from dpscale.predict import presets
    from dpscale.predict.model import Cluster, Workload, predict

    cluster = Cluster(presets.link("intra", "nvlink3"), 8, device_memory=80 * 2**30)
    p = predict([8, 64], Workload(938, 256, 25.6e9), cluster)
    spec = prediction_chart(p, lang).to_dict()  # type: ignore[arg-type]
    band = spec["vconcat"][0]["layer"][0]
    assert band["encoding"]["fill"]["legend"] is not None  # the band in a legend of its own
    named = {row["what"] for row in band["data"]["values"]}
    rule = spec["vconcat"][3]["layer"][-1]
    assert rule["mark"]["type"] == "rule"
    assert "legend" in rule["encoding"]["stroke"]
    said = rule["data"]["values"][0]["label"]
    if interval is not None:
        assert named == {interval}
        assert said == memory
    svg = to_svg(prediction_chart(p, lang), lang=lang)  # type: ignore[arg-type]
    assert next(iter(named)) in svg
    assert said in svg
