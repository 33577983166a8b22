"""Errors name the field, the value and what is accepted, in English and, localized, in French."""

from __future__ import annotations

import ast
import pickle
import re
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpscale import AmbiguousInput, InvalidInput, MissingInput, scale, solve
from dpscale.device_lists import parse_device_list
from dpscale.errors import N_, MissingExtra, one_line, shortened
from dpscale.fit import fit, read_points
from dpscale.parse import (
    parse_bandwidth,
    parse_count,
    parse_duration,
    parse_efficiency,
    parse_number,
)
from dpscale.pipeline import bubble
from tests.cli.test_cli import run


def caught(call: object, *args: object, **kwargs: object) -> InvalidInput:
    with pytest.raises(InvalidInput) as info:
        call(*args, **kwargs)  # type: ignore[operator]
    return info.value


def test_english_message_and_french_localization() -> None:
    err = caught(scale, 0, 2000, 0.9)
    assert err.message == "devices: got 0; expected a whole number of at least 1"
    assert err.localized("en") == err.message
    assert err.localized("fr") == "devices : reçu 0 ; attendu un nombre entier d'au moins 1"


def test_templates_are_filled_in_both_languages() -> None:
    err = caught(parse_efficiency, "90", "fr")
    assert isinstance(err, AmbiguousInput)
    assert err.hint == "write 90\u00a0% for a percentage, or 0,9 as a fraction"  # numbers written the French way
    assert err.localized("fr").endswith("(écrivez 90\u00a0% pour un pourcentage, ou 0,9 pour une fraction)")
    assert "100 %," in err.localized("fr")  # a %% in the template is one % once filled
    english = caught(parse_efficiency, "90", "en")
    assert english.message.endswith("(write 90% for a percentage, or 0.9 as a fraction)")
    assert "%%" not in english.message


def test_a_choice_list_is_a_parameter() -> None:
    err = caught(bubble, 4, 8, schedule="zigzag")
    assert err.accepted.startswith("one of ")
    assert err.localized("fr").startswith("schedule : reçu 'zigzag' ; attendu l'un de ")
    assert err.accepted.removeprefix("one of ") in err.localized("fr")


def test_missing_input_is_said_missing() -> None:
    err = caught(solve, devices=64)
    assert isinstance(err, MissingInput)
    assert err.localized("fr").startswith("per_device_throughput : manquant ; attendu trois de devices")
    assert "3 non données" in err.localized("fr")


def test_text_outside_the_catalog_stays_english() -> None:
    err = InvalidInput("x", 1, "something only English knows")
    assert err.localized("fr") == "x : reçu 1 ; attendu something only English knows"


def test_re_raised_with_the_text_as_typed() -> None:
    err = caught(parse_count, "0", "fr", field="devices")
    assert err.value == "0"
    assert err.localized("fr") == "devices : reçu '0' ; attendu un nombre entier d'au moins 1"
    err = caught(parse_number, "-2", "en", field="per_device_throughput")
    assert err.message == "per_device_throughput: got '-2'; expected a finite number greater than 0"


@pytest.mark.parametrize(
    "err",
    [
        InvalidInput("devices", 0, "a whole number", hint="x"),
        InvalidInput("d", 3, N_("a whole number of at least %(minimum)s"), params={"minimum": 4}),
        MissingInput("v", N_("three of %(what)s"), params={"what": "d, v, E, A"}),
        AmbiguousInput("efficiency", "90", "a %% or a fraction", hint="write %(p)s", params={"p": "90%"}),
    ],
)
def test_survives_pickling(err: InvalidInput) -> None:
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err)
    assert (back.field, back.value, back.accepted, back.hint) == (err.field, err.value, err.accepted, err.hint)
    assert back.localized("fr") == err.localized("fr")


def test_cli_speaks_the_language_of_lang(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "scale", "64", "2 000", "90", "--lang", "fr")
    assert (code, out) == (2, "")
    assert err.startswith("error: efficiency : reçu '90' ; attendu un pourcentage")
    code, _, err = run(capsys, "scale", "64", "2000", "90", "--lang=en")
    assert err.startswith("error: efficiency: got '90'; expected a percentage")
    code, _, err = run(capsys, "scale", "0", "2000", "0,9", "--lang", "fr_FR")  # as --lang reads it
    assert err == "error: devices : reçu '0' ; attendu un nombre entier d'au moins 1\n"


def test_cli_takes_the_language_of_the_locale(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANG", "fr_FR.UTF-8")
    code, _, err = run(capsys, "scale", "0", "2 000", "0,9")
    assert code == 2
    assert err == "error: devices : reçu '0' ; attendu un nombre entier d'au moins 1\n"


@given(text=st.text(max_size=30), lang=st.sampled_from(["fr", "en"]))
def test_any_text_gives_a_value_or_an_error_in_both_languages(text: str, lang: str) -> None:
    readers = (parse_count, parse_number, parse_efficiency, parse_duration, parse_bandwidth, parse_device_list)
    for read in readers:
        try:
            read(text, lang, field="x")
        except InvalidInput as exc:
            for shown in (exc.localized("fr"), exc.localized("en"), exc.message):
                assert shown.startswith("x")
                assert "%(" not in shown.replace(repr(text), "")  # no template left unfilled


def test_a_place_in_a_file_is_named_in_either_language() -> None:
    err = caught(read_points, "runs.csv", text="devices,throughput\n1,100\n2,abc\n")
    assert err.field == "runs.csv, line 3, column throughput"
    assert (
        err.localized("fr")
        == "runs.csv, ligne 3, colonne throughput : reçu 'abc' ; attendu un nombre fini supérieur à 0"
    )
    back = pickle.loads(pickle.dumps(err))
    assert back.localized("fr") == err.localized("fr")


def test_beside_its_field_the_name_is_left_out() -> None:
    err = caught(scale, 0, 2000, 0.9)
    assert err.localized("en", named=False) == "got 0; expected a whole number of at least 1"
    assert err.localized("fr", named=False) == "reçu 0 ; attendu un nombre entier d'au moins 1"
    missing = caught(solve, devices=64)
    assert missing.localized("fr", named=False).startswith("manquant ; attendu trois de devices")


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: parse_device_list("1..1e10", "en"), "devices"),
        (lambda: fit([(1, 1.0), (2, 2.0)], at=[10**12]), "at"),
        (lambda: fit([(1, 1.0), (10**12, 2.0)]), "points[1].devices"),
    ],
)
def test_device_counts_stop_at_a_billion(call: object, field: str) -> None:
    # Past any cluster, and past what a chart's integers hold (at=1e300 once crashed the fit chart).
    err = caught(call)
    assert err.field == field
    assert err.accepted == "a device count from 1 to a billion (10⁹)"


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("x" * 4_000_000, "'" + "x" * 20 + "…" + "x" * 40 + "'"),
        (10**5000, "a 5001-digit integer"),
        (-(10**5000), "-a 5001-digit integer"),
        (list(range(10**5)), "list of 100000 items"),
        ([1, 2], "[1, 2]"),
        (1.5, "1.5"),
    ],
    ids=["4 MB of text", "5000 digits", "negative", "long list", "short list", "number"],
)
def test_an_error_echoes_its_value_cut_short(value: object, shown: str) -> None:
    err = InvalidInput("field", value, "something else")
    assert err.message == f"field: got {shown}; expected something else"
    assert len(err.localized("fr")) < 120


def test_text_is_shortened_to_its_start_and_put_on_one_line() -> None:
    assert shortened("x" * 40, 40) == "x" * 40
    assert shortened("x" * 41, 40) == "x" * 39 + "…"  # the mark counts among the characters shown
    assert one_line("  #  Rank  0 \n\t Group 0\r\n") == "# Rank 0 Group 0"
    cut = "['" + "x" * 57 + "…"  # a short list of long text: its start, as an error quotes it
    assert InvalidInput("field", ["x" * 100], "less").message == f"field: got {cut}; expected less"


ROOT = Path(__file__).resolve().parents[1]


def _missing_extra_calls() -> list[tuple[str, str | None, str | None]]:
    """(where, extra, package) of every ``MissingExtra(...)`` in src; each must be written as a literal."""
    found = []
    for path in sorted((ROOT / "src" / "dpscale").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if (func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)) != "MissingExtra":
                continue
            where = f"{path.relative_to(ROOT).as_posix()}:{node.lineno}"
            given = dict(zip(("feature", "extra"), node.args, strict=False))
            given.update({k.arg: k.value for k in node.keywords if k.arg})
            values = {}
            for name in ("extra", "package"):
                arg = given.get(name)
                assert arg is None or isinstance(arg, ast.Constant), f"{where}: {name} is not written as a literal"
                values[name] = None if arg is None else arg.value
            found.append((where, values["extra"], values["package"]))
    return found


def test_missing_extra_names_only_extras_that_exist() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = set(project["optional-dependencies"])
    core = {re.split(r"[\s<>=!~\[;]", spec, maxsplit=1)[0].lower() for spec in project["dependencies"]}
    calls = _missing_extra_calls()
    assert {extra for _, extra, _ in calls} >= {"plot", "fit", "measure", "web"}
    for where, extra, package in calls:
        if extra is not None:
            assert extra in extras, f"{where}: no extra named {extra!r} in pyproject.toml (there are {sorted(extras)})"
        else:  # no extra: a core dependency, which a reinstall brings back
            assert package in core, f"{where}: {package!r} is no core dependency, so name the extra that provides it"


def test_missing_extra_says_what_to_install() -> None:
    assert str(MissingExtra("charts", "plot")) == "charts needs the 'plot' extra: pip install 'dpscale[plot]'"
    core = MissingExtra("reading units", package="pint")
    assert core.extra is None
    assert "pint" in str(core)
    assert "reinstall dpscale" in str(core)
    assert "dpscale[" not in str(core)
