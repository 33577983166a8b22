"""What a result shows (each calculator's present): the same text in the terminal, a notebook and the pages."""

from __future__ import annotations

import re
from dataclasses import replace
from html.parser import HTMLParser

import pytest

from dpscale import scale
from dpscale.batch import effective_batch
from dpscale.calculators import scale as scale_calculator
from dpscale.calculators.predict import present as present_prediction
from dpscale.calculators.shown import Grid, Row, Rows, Shown
from dpscale.fit import fit
from dpscale.i18n import Lang
from dpscale.notebook import html_shown
from dpscale.pipeline import bubble
from dpscale.plan import devices_for_deadline, plan
from dpscale.predict import presets
from dpscale.predict.definition import PREDICT
from dpscale.predict.model import Cluster, Workload, predict
from dpscale.predict.wording import calibration_line, prediction_notes


def prediction_grid(p: object, lang: Lang) -> Grid:
    return present_prediction(p, lang).grids[0]  # type: ignore[arg-type]


def scaling_rows(s: object, lang: Lang) -> tuple[Row, ...]:
    return scale_calculator.present(s, lang).rows  # type: ignore[arg-type]


class _Cells(HTMLParser):
    """The text of every cell, row by row."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.rows[-1].append("")
            self._in = tag

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in is not None:
            self.rows[-1][-1] += data


def cells(page: str) -> _Cells:
    parser = _Cells()
    parser.feed(page)
    return parser


def test_scaling_rows_hold_the_seed_example_in_both_languages() -> None:
    en = {r.label: r.value for r in scaling_rows(scale(64, 2000, 0.9), "en")}
    fr = {r.label: r.value for r in scaling_rows(scale(64, 2000, 0.9), "fr")}
    assert en["Actual throughput (A = I·E)"] == "115,200 samples/s"
    assert en["Speedup (S = d·E)"] == "57.6×"
    assert fr["Débit réel (A = I·E)"] == "115\u202f200 samples/s"
    assert fr["Accélération (S = d·E)"] == "57,6\u00a0×"


def test_notebook_tables_of_each_result() -> None:
    shown = {
        "scaling": scale(64, 2000, 0.9)._repr_html_(),
        "batch": effective_batch(32, 4, 64, sequence_length=2048)._repr_html_(),
        "bubble": bubble(4, 8)._repr_html_(),
        "plan": plan(1.28e9, 64, 2000, 0.9, price_per_device_hour=2.5)._repr_html_(),
    }
    expected = {
        "scaling": ("Actual throughput (A = I·E)", "115,200 samples/s"),
        "batch": ("Global batch (B = b·k·d)", "8,192"),
        "bubble": ("Bubble, share of the step", "27.27%"),
        "plan": ("Cost", "$493.83"),  # 1.28e9 / 115,200 per s = 3.086 h x 64 devices x 2.5
    }
    for name, page in shown.items():
        assert page.startswith(f'<table class="dpscale-{name}">')
        rows = cells(page).rows
        assert list(expected[name]) in rows, (name, rows)


def test_notebook_grid_of_a_prediction_and_a_fit() -> None:
    cluster = Cluster(presets.link("intra", "nvlink3"), 8, presets.link("inter", "ib-hdr", nics=8))
    page = predict([8, 64], Workload(938, 256, 25.6e6), cluster)._repr_html_()
    rows = cells(page).rows
    # above each term, where its figure came from: one device's throughput given, the rest assumed
    assert rows[0] == [
        "Devices",
        "E",
        "A",
        "S",
        "Step",
        "measuredCompute",
        "assumedComm.",
        "assumedWait",
        "Memory",
        "Bound by",
    ]
    assert "<th>measured<br>Compute</th>" in page
    assert rows[1][8] == "390.6\u00a0MiB"  # 25.6 M parameters at 16 bytes each (DDP, Adam), on every device
    assert [r[0] for r in rows[1:]] == ["8", "64"]
    assert all(re.fullmatch(r"\d+(\.\d)?% \(\d+–\d+\)", r[1]) for r in rows[1:])  # E and its interval

    found = fit([(1, 370), (2, 735), (4, 1460), (8, 2890), (16, 5700)])
    page = found._repr_html_()
    assert "<caption>Models fitted to 5 measurements</caption>" in page
    assert f'<p class="dpscale-fit-note">Chosen model: {found.chosen} (' in page
    assert f"<td><strong>{found.chosen}</strong></td>" in page  # its row, emphasised


def test_deadline_grid_emphasises_the_size_chosen() -> None:
    found = devices_for_deadline(1.28e9, 36 * 3600, 2000, 0.9, price_per_device_hour=2.5)
    page = found._repr_html_()
    assert "<caption>Cluster sizes compared</caption>" in page
    d = found.plan.scaling.devices
    assert f"<td><strong>{d}</strong></td>" in page
    options = page[page.index("<caption>Cluster sizes compared</caption>") :]
    assert options.count("<strong>") == 5  # the one row, all five columns


def test_html_escapes_every_text() -> None:
    rows = html_shown(Shown((Rows((Row("<b>label</b>", "1 & 2"),)),)), "x")
    assert "<b>" not in rows
    assert "&lt;b&gt;label&lt;/b&gt;" in rows
    assert "1 &amp; 2" in rows
    grid = html_shown(Shown((Grid(("<i>h</i>",), (("<script>",),), title="<t>", emphasis=0),)), "y")
    assert not any(tag in grid for tag in ("<script>", "<i>", "<t>"))
    assert "<td><strong>&lt;script&gt;</strong></td>" in grid
    assert scale(64, 2000, 0.9, unit="<b>img/s</b>")._repr_html_().count("&lt;b&gt;img/s&lt;/b&gt;") == 4


@pytest.mark.parametrize(
    ("e", "low", "high", "lang", "shown"),
    [
        (0.975, 0.2648, 0.975, "en", "97.5% (26–98)"),  # rounded outwards: the interval still holds E
        (0.941, 0.47, 0.941, "fr", "94,1\u00a0% (47–95)"),
        (0.29, 0.29, 0.29, "en", "29% (29–29)"),  # 0.29·100 is 28.999…: not floored to 28
    ],
)
def test_an_interval_in_whole_percent_holds_its_estimate(
    e: float, low: float, high: float, lang: Lang, shown: str
) -> None:
    from dpscale.predict.table import efficiency_with_interval

    assert efficiency_with_interval(e, low, high, lang) == shown


@pytest.mark.parametrize(
    ("count", "lang", "head"),
    [
        (1, "en", "Calibrated on 1 measurement: "),
        (2, "en", "Calibrated on 2 measurements: "),
        (1, "fr", "Calibré sur 1 mesure : "),
        (3, "fr", "Calibré sur 3 mesures : "),
    ],
)
def test_the_calibration_line_counts_its_measurements(count: int, lang: Lang, head: str) -> None:

    values = {"devices": [8, 64], "per_device_throughput": 2500.0, "batch": 256.0, "params": 25.6e6, "intra": "nvlink3"}
    measured = [(8, 19000.0), (16, 37000.0), (32, 72000.0)][:count]
    request = PREDICT.build({**values, "inter": "ib-hdr", "measured": measured})
    line = calibration_line(request.predict(), lang)
    assert line is not None
    assert line.startswith(head), line


def test_an_assumed_variation_behind_the_straggler_wait_is_said() -> None:
    values = {"devices": [8, 64], "per_device_throughput": 938.0, "batch": 256.0, "params": 25.6e6, "intra": "nvlink3"}
    p = PREDICT.build({**values, "inter": "ib-hdr"}).predict()
    assumed = prediction_notes(p, "en")
    assert any("assumed step-time variation of 2%" in note for note in assumed)
    assert p.bottleneck == ["stragglers", "stragglers"]
    assert [r[-1] for r in prediction_grid(p, "en").rows] == ["stragglers (assumed)"] * 2
    told = PREDICT.build({**values, "inter": "ib-hdr", "jitter": 0.05}).predict()
    assert not any("assumed step-time variation" in note for note in prediction_notes(told, "en"))
    assert [r[-1] for r in prediction_grid(told, "en").rows] == ["stragglers"] * 2
    assert told.source("straggler_wait") == "measured"


def test_what_was_measured_binds_before_what_was_assumed() -> None:
    # The same prediction, its communication said as read from a log: a term measured and costing
    # something is named before a larger one assumed.
    values = {"devices": [8, 64], "per_device_throughput": 938.0, "batch": 256.0, "params": 25.6e6, "intra": "nvlink3"}
    p = PREDICT.build({**values, "inter": "ib-hdr"}).predict()
    assert p.straggler_wait[1] > p.exposed_communication[1] > 0
    logged = replace(p, sources=(*p.sources[:1], ("exposed_communication", "log"), *p.sources[2:]))
    assert logged.bottleneck == ["communication", "communication"]
    assert logged.bottleneck_assumed() == [False, False]
    assert prediction_grid(logged, "en").header[6] == "log\nComm."


def test_every_term_says_its_source_in_both_languages() -> None:
    values = {"devices": [8, 64], "per_device_throughput": 938.0, "batch": 256.0, "params": 25.6e6, "intra": "nvlink3"}
    p = PREDICT.build({**values, "inter": "ib-hdr", "input_throughput": 9000.0}).predict()
    assert dict(p.sources) == {
        "compute": "measured",
        "exposed_communication": "assumed",
        "straggler_wait": "assumed",
        "input_wait": "measured",
    }
    assert p.to_dict()["assumptions"]["step_sources"] == dict(p.sources)
    english = prediction_grid(p, "en").header
    assert english[5:9] == ("measured\nCompute", "assumed\nComm.", "assumed\nWait", "measured\nInput")
    assert all(len(h.split("\n")) == 2 for h in prediction_grid(p, "fr").header[5:9])  # the source above, in French


def test_scaling_labels_translated_once_are_each_languages_own() -> None:
    """scale.present translates its labels once per language (_labels): each language still gets its own, as
    gettext says them, whichever language asked first; the solved quantity is marked in the same language."""
    from dpscale.i18n import translation
    from dpscale.scaling import solve

    solution = solve(devices=None, per_device_throughput=2000, efficiency=0.9, actual_throughput=115200)
    for lang in ("en", "fr", "en", "fr"):
        _ = translation(lang).gettext
        rows = scale_calculator.present(solution, lang).rows  # type: ignore[arg-type]
        assert rows[0].label == _("Devices (d)")
        assert rows[0].mark == _("solved")
        assert rows[-1].label == _("Lost throughput (I − A)")
    assert (
        scale_calculator.present(solution, "fr").rows[0].label != scale_calculator.present(solution, "en").rows[0].label
    )


@pytest.mark.parametrize("given", [True, False])
@pytest.mark.parametrize("main", [True, False])
@pytest.mark.parametrize("mark", [None, "solved"])
def test_row_of_makes_the_row_that_row_makes(given: bool, main: bool, mark: str | None) -> None:
    """row_of sets Row's slots itself: the same row, as frozen, with each field where Row puts it."""
    import dataclasses
    import inspect

    from dpscale.calculators.shown import row_of

    assert [f.name for f in dataclasses.fields(Row)] == list(inspect.signature(row_of).parameters)
    made = row_of("Devices", "64", "devices", given, main, mark)
    assert made == Row("Devices", "64", "devices", given=given, main=main, mark=mark)
    assert (made.label, made.value, made.key, made.given, made.main, made.mark) == (
        "Devices",
        "64",
        "devices",
        given,
        main,
        mark,
    )
    assert hash(made) == hash(Row("Devices", "64", "devices", given=given, main=main, mark=mark))
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.label = "other"  # type: ignore[misc]
