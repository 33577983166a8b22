from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from dpscale import InvalidInput
from dpscale._validate import language as validate_lang
from dpscale.i18n import LOCALE_DIR, language_from_env, translation


def _read(reader: Any, name: str) -> Any:
    with (LOCALE_DIR / "fr" / "LC_MESSAGES" / name).open("rb") as f:
        return reader(f)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "en"),
        ({"LANG": "fr_FR.UTF-8"}, "fr"),
        ({"LANG": "de_DE.UTF-8"}, "en"),
        ({"LC_ALL": "C"}, "en"),
        ({"LANGUAGE": "fr:en", "LANG": "en_US.UTF-8"}, "fr"),
        ({"LC_ALL": "en_GB.UTF-8", "LANG": "fr_FR"}, "en"),
    ],
)
def test_language_from_env(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: str) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert language_from_env() == expected


@pytest.mark.parametrize(("value", "expected"), [("fr", "fr"), ("en", "en"), ("fr_FR", "fr"), ("EN-gb", "en")])
def test_validate_lang(value: str, expected: str) -> None:
    assert validate_lang(value) == expected


def test_validate_lang_rejects() -> None:
    with pytest.raises(InvalidInput) as caught:
        validate_lang("de")
    assert caught.value.field == "lang"


def test_french_catalog_translates_everything() -> None:
    catalog = _read(read_po, "dpscale.po")
    untranslated = [m.id for m in catalog if m.id and not m.string]
    assert untranslated == []
    assert translation("fr").gettext("Devices (d)") == "Appareils (d)"


def test_compiled_catalog_matches_the_po_file() -> None:
    po = _read(read_po, "dpscale.po")
    mo = _read(read_mo, "dpscale.mo")

    def entries(catalog: Any) -> dict[Any, Any]:  # a plural's id and strings are sequences
        def key(x: Any) -> Any:
            return tuple(x) if isinstance(x, list | tuple) else x

        return {key(m.id): key(m.string) for m in catalog if m.id}

    assert entries(po) == entries(mo), "run `make locales`"


def test_template_is_up_to_date(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "dpscale.pot"
    # The keywords that mark messages besides _(): those of `make locales`, read from the Makefile.
    keywords = re.findall(r"-k (\S+)", (root / "Makefile").read_text(encoding="utf-8"))
    assert "InvalidInput:3" in keywords
    subprocess.run(
        [
            sys.executable,
            "-m",
            "babel.messages.frontend",
            "extract",
            "-F",
            str(root / "babel.cfg"),
            "--no-location",
            "--sort-output",
            *(arg for keyword in keywords for arg in ("-k", keyword)),
            "-o",
            str(out),
            str(root / "src"),
        ],
        check=True,
        capture_output=True,
    )
    with out.open("rb") as f:
        fresh = {m.id for m in read_po(f) if m.id}
    po = {m.id for m in _read(read_po, "dpscale.po") if m.id}
    assert fresh == po, "strings changed: run `make locales` and translate the new ones"


def test_translations_keep_their_placeholders() -> None:
    # A French message missing %(name)s loses a value; an extra one, or a lone %, breaks the
    # %-formatting of every error that uses it (InvalidInput.localized fills translated templates).
    placeholder = re.compile(r"%\((\w+)\)s|%(%)")
    checked = 0
    for message in _read(read_po, "dpscale.po"):
        if not message.id or not isinstance(message.id, str):
            continue
        wanted = sorted(placeholder.findall(message.id))
        assert wanted == sorted(placeholder.findall(message.string)), message.id
        checked += bool(wanted)
    assert checked >= 40  # the error templates and the pages' sentences with numbers
