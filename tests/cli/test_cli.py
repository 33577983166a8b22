"""The command line, in-process through its real entry point and as installed console script."""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpscale.cli import main

NBSP, NNBSP = "\u00a0", "\u202f"
SCRIPT = shutil.which("dpscale", path=str(Path(sys.executable).parent)) or "dpscale"
RUNS = Path(__file__).parents[2] / "examples" / "runs.csv"  # the README's fit example


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    out, err = capsys.readouterr()
    code = exited.value.code
    return (code if isinstance(code, int) else 1), out, err


def test_seed_example_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "scale", "64", "2000", "0.9")
    assert (code, err) == (0, "")
    assert "128,000 samples/s" in out
    assert "115,200 samples/s" in out
    assert "57.6×" in out
    assert "12,800 samples/s" in out


@pytest.mark.parametrize("unit", ["tok/s [bf16]", "[/x]", ":thumbs_up:", "[bold]img/s"])
def test_unit_prints_as_written(capsys: pytest.CaptureFixture[str], unit: str) -> None:
    # The unit is the user's text: never Rich markup or an emoji code.
    code, out, err = run(capsys, "scale", "64", "2000", "0.9", "--unit", unit)
    assert (code, err) == (0, "")
    assert f"115,200 {unit}" in out


def test_called_from_python_leaves_the_collector_alone(capsys: pytest.CaptureFixture[str]) -> None:
    # The console script runs `scale` without the cyclic collector and freezes at exit; a caller
    # in Python (this test process) keeps its collector as it was.
    frozen = gc.get_freeze_count()
    assert gc.isenabled()
    code, _, _ = run(capsys, "scale", "64", "2000", "0.9")
    assert code == 0
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen


@pytest.mark.parametrize(("command", "collector_on"), [("scale", False), ("batch", True)])
def test_the_process_skips_the_collection_at_exit(command: str, collector_on: bool) -> None:
    # Run as the console script does (main() with no argv): `scale` runs without the cyclic
    # collector, and every command freezes what is left, so the collection at exit skips
    # Babel's locale data (a fifth of `dpscale scale`'s wall time when it did not).
    argv = ["dpscale", command, *(["64", "2000", "0.9"] if command == "scale" else ["32"])]
    probe = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print(gc.isenabled(), gc.get_freeze_count() > 0, file=sys.stderr))\n"
        f"sys.argv = {argv!r}\n"
        "from dpscale.cli import main\n"
        "main()\n"
    )
    done = _subprocess(sys.executable, "-c", probe)
    assert done.returncode == 0, done.stderr
    assert done.stderr.split() == [str(collector_on), "True"]


def test_percent_efficiency(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "scale", "64", "2000", "90%")
    assert code == 0
    assert "115,200" in out


def test_french(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "scale", "64", "2 000", "0,9", "--lang", "fr")
    assert code == 0
    assert "Débit réel (A = I·E)" in out
    assert f"115{NNBSP}200 échantillons/s" in out
    assert f"57,6{NBSP}×" in out


def test_language_from_environment(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANG", "fr_FR.UTF-8")
    code, out, _ = run(capsys, "scale", "64", "2 000", "90 %")
    assert code == 0
    assert "Accélération" in out


def test_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "scale", "64", "2000", "0.9", "--json", "--unit", "images/s")
    assert code == 0
    assert json.loads(out) == {
        "devices": 64,
        "per_device_throughput": 2000.0,
        "efficiency": 0.9,
        "ideal_throughput": 128000.0,
        "actual_throughput": 115200.0,
        "speedup": 57.6,
        "lost_throughput": 12800.0,
        "unit": "images/s",
    }


def test_solve_efficiency(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "scale",
        "--solve",
        "efficiency",
        "--devices",
        "64",
        "--per-device",
        "2000",
        "--actual",
        "115200",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    assert (data["efficiency"], data["solved_for"], data["superlinear"]) == (0.9, "efficiency", False)


def test_solve_devices_shows_the_surplus(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "scale", "-v", "2000", "-e", "90%", "-a", "100000")
    assert code == 0
    assert "56" in out
    assert "800 samples/s more" in out


def test_a_commands_warnings_go_to_standard_error(capsys: pytest.CaptureFixture[str]) -> None:
    """What a pipe or a file keeps is the result: the tables; the warnings (yellow on a terminal) stay in sight."""
    code, out, err = run(capsys, "fit", str(RUNS), "--at", "256")
    assert code == 0
    assert "Predicted by amdahl" in out
    assert "warning" not in out
    assert "warning: predicting at 256 devices, more than 4× the largest measured (16)" in err
    code, out, err = run(capsys, "fit", str(RUNS), "--at", "256", "--lang", "fr")
    assert "attention" not in out
    assert err.startswith("attention : ")


def test_superlinear_warns(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "scale", "-d", "8", "-v", "100", "-a", "1000", "--json")
    assert code == 0
    assert json.loads(out)["efficiency"] == 1.25
    assert err == "warning: efficiency 125% is above 100% (superlinear scaling); check the single-device throughput\n"
    code, _, err = run(capsys, "scale", "-d", "8", "-v", "100", "-a", "1 000", "--lang", "fr")
    assert code == 0
    assert err.startswith(f"attention : un rendement de 125{NBSP}% dépasse 100 % (mise à l'échelle superlinéaire)")


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["scale", "0", "2000", "0.9"], "devices"),
        (["scale", "--", "-3", "2000", "0.9"], "devices"),
        (["scale", "1.5", "2000", "0.9"], "devices"),
        (["scale", "64", "0", "0.9"], "error: per_device: got"),
        (["scale", "64", "abc", "0.9"], "error: per_device: got"),
        (["scale", "64", "2000", "90"], "90%"),
        (["scale", "64", "2000", "150%"], "efficiency"),
        (["scale", "64", "2000", "0,9"], "efficiency"),
        (["scale", "64", "2000", "0.9", "--lang", "de"], "lang"),
        (["scale", "64", "2000"], "efficiency: missing; expected three of devices"),
        (["scale", "64", "2000", "0.9", "-a", "1"], "actual: got '1'; expected no value when"),
        (["scale", "64", "2000", "0.9", "--devices", "32"], "devices"),
        (["scale", "-d", "64", "-v", "2000", "-a", "1", "--solve", "devices"], "solve"),
        (["scale", "64", "2000", "0.9", "--unit", ""], "unit"),
        (["scale", "--bogus"], "No such option"),
        (["nonsense"], "No such command"),
    ],
)
def test_bad_input_one_line_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1, err
    assert needle in err
    assert "Traceback" not in err


def test_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0
    assert out.startswith("dpscale ")
    code, out, _ = run(capsys, "scale", "--help")
    assert code == 0
    assert "--actual" in out
    code, out, _ = run(capsys)
    assert code == 0
    assert "scale" in out
    code, out, err = run(capsys, "scale")  # nothing to compute: its help, not an error
    assert (code, err) == (0, "")
    assert "Give any three of d, v, E and A" in " ".join(out.split())


def test_no_command_is_built_at_import() -> None:
    import importlib

    import typer

    from dpscale.cli.commands import create_app

    modules = ["commands", "scale_command", "serve", "calculators", "cluster", "models"]
    for name in modules:  # a Typer app made at import would sit in one of them
        module = importlib.import_module(f"dpscale.cli.{name}")
        assert not [k for k, v in vars(module).items() if isinstance(v, typer.Typer)], name

    def names(app: typer.Typer) -> list[str]:
        return list(typer.main.get_command(app).commands)  # type: ignore[attr-defined]  # a group's, in order

    everything = ["scale", "serve", "batch", "bubble", "plan", "measure", "probe", "explain", "predict", "fit"]
    assert names(create_app()) == everything
    assert names(create_app(light=True)) == ["scale", "serve"]
    assert create_app() is not create_app()  # built when asked, each time


def _subprocess(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_ALL", "LANGUAGE", "LC_MESSAGES")}
    return subprocess.run(list(args), capture_output=True, text=True, env={**base, **(env or {})}, timeout=60)


def test_console_script() -> None:
    done = _subprocess(SCRIPT, "scale", "64", "2000", "90%")
    assert done.returncode == 0, done.stderr
    assert "115,200 samples/s" in done.stdout


def test_console_script_bad_input() -> None:
    done = _subprocess(SCRIPT, "scale", "64", "2000", "90")
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert "efficiency" in done.stderr


def test_python_dash_m() -> None:
    done = _subprocess(sys.executable, "-m", "dpscale", "scale", "64", "2 000", "0,9", "--lang", "fr", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["speedup"] == 57.6


def test_scale_path_stays_light() -> None:
    probe = (
        "import sys, atexit\n"
        "atexit.register(lambda: print(sorted(m for m in ('numpy', 'scipy', 'torch', 'fastapi', 'pydantic')"
        " if m in sys.modules), file=sys.stderr))\n"
        "from dpscale.cli import main\n"
        "main(['scale', '64', '2000', '0.9'])\n"
    )
    done = _subprocess(sys.executable, "-c", probe)
    assert done.returncode == 0
    assert done.stderr.strip() == "[]"


def test_plot_writes_the_chart(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_file = tmp_path / "chart.svg"
    code, out, err = run(capsys, "scale", "64", "2000", "90%", "--plot", str(out_file))
    assert code == 0
    assert "115,200" in out
    assert "chart written" in err
    assert "64 devices: 115,200 samples/s" in out_file.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["chart.gif", "missing-dir/chart.svg"])
def test_plot_bad_path(capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str) -> None:
    code, _, err = run(capsys, "scale", "64", "2000", "90%", "--plot", str(tmp_path / name))
    assert code == 2
    assert err.startswith("error: plot:")
    assert err.count("\n") == 1


PREDICTED = ["predict", "-d", "8,64", "-v", "938", "-b", "256", "-p", "25.6M"]
PREDICTED += ["--intra", "nvlink3", "--inter", "ib-hdr"]


@pytest.mark.parametrize("suffix", ["svg", "png", "json"])
def test_predict_plot_writes_the_charts(capsys: pytest.CaptureFixture[str], tmp_path: Path, suffix: str) -> None:
    out_file = tmp_path / f"predict.{suffix}"
    code, out, err = run(capsys, *PREDICTED, "--no-levers", "--plot", str(out_file))
    assert code == 0
    assert "Bound by" in out  # the table still printed
    assert "chart written" in err
    data = out_file.read_bytes()
    if suffix == "png":
        assert data.startswith(b"\x89PNG")
    elif suffix == "json":  # the Vega-Lite spec of the page's chart: its rows, one per device count
        spec = json.loads(data)
        rows = spec["vconcat"][0]["layer"][0]["data"]["values"]
        assert [row["devices"] for row in rows] == [8, 64]
    else:
        assert b"<svg" in data


@pytest.mark.parametrize("name", ["chart.gif", "missing-dir/chart.svg"])
def test_predict_plot_bad_path(capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str) -> None:
    code, _, err = run(capsys, *PREDICTED, "--plot", str(tmp_path / name))
    assert code == 2
    assert err.startswith("error: plot:")
    assert err.count("\n") == 1


def test_serve_rejects_a_bad_port(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "serve", "--port", "70000")
    assert code == 2
    assert "port" in err


def test_tiny_and_huge_figures_are_written_short(capsys: pytest.CaptureFixture[str]) -> None:
    from dpscale.calculators.scale import present
    from dpscale.cli.render import print_shown
    from dpscale.scaling import solve

    # the library takes what the command line's bounds (10⁻⁶ at least) refuse
    print_shown(present(solve(devices=64, per_device_throughput=1e-320, efficiency=0.9), "en"), "en")
    assert "5.76E-319 samples/s" in capsys.readouterr().out  # not "0 samples/s" beside a 57.6× speedup
    code, out, err = run(capsys, "scale", "64", "1e-320", "90%")
    assert code == 2
    assert "per_device: got '1e-320'; expected a value from 10⁻⁶ to 10¹²" in err
    code, out, _ = run(
        capsys,
        "predict",
        "--devices",
        "1,8",
        "--per-device",
        "938",
        "--batch",
        "256",
        "--params",
        "1e15",
        "--intra",
        "nvlink3",
    )
    assert code == 0
    assert "3.56E7 ms" in out  # a step time of 10⁷ ms written in a few characters
    assert max(len(line) for line in out.splitlines()) < 200


def test_french_defaults_are_the_french_pages_own(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # The unit and the currency not given: échantillons/s and € in French, as the French page is prefilled.
    code, out, err = run(capsys, "scale", "--lang", "fr", "64", "2000", "0.9", "--plot", str(tmp_path / "s.svg"))
    assert code == 0
    assert "115 200 échantillons/s" in out.replace("\u202f", " ").replace("\u00a0", " ")
    assert err.startswith("graphique écrit dans ")
    code, out, _ = run(
        capsys, "plan", "--lang", "fr", "-d", "8", "-v", "100", "-e", "0.9", "--work", "1e6", "--price", "2"
    )
    assert "€" in out
    code, out, _ = run(capsys, "scale", "--lang", "en", "64", "2000", "0.9")
    assert "samples/s" in out


def _controls(text: str) -> list[str]:
    """The control, format and line-separator characters of ``text`` (its final newline aside)."""
    import unicodedata

    return [c for c in text.removesuffix("\n") if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")]


@pytest.mark.parametrize("lang", ["en", "fr"])
@pytest.mark.parametrize("name", ["bad\x1b[2J.csv", "runs\u202egsv.csv", "two\nlines.csv", "bell\x07.csv"])
def test_a_file_name_is_quoted_never_obeyed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, lang: str
) -> None:
    # dpscale fit $'bad\e[2J.csv': the name in the "FILE, line N" prefix is escaped as the quoted value is,
    # not written raw (an ESC there clears the terminal; U+202E turns the rest of the line round).
    bad = tmp_path / name
    bad.write_text("devices,throughput\n1,100\n2,abc\n", encoding="utf-8")
    for argv in (["fit", str(bad)], ["fit", str(tmp_path / ("missing-" + name))]):
        code, out, err = run(capsys, *argv, "--lang", lang)
        assert (code, out) == (2, "")
        assert err.count("\n") == 1
        assert _controls(err) == [], err
        assert repr(name)[1:-1] in err  # the name recognisable, with the escapes repr writes
