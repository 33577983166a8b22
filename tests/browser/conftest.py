"""A real server on loopback and a real headless Chromium (Debian's), driven by Playwright."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator

import pytest

CHROMIUM = os.environ.get("DPSCALE_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    missing = []
    try:
        import playwright  # noqa: F401
    except ImportError:
        missing.append("the playwright package")
    if not shutil.which(CHROMIUM):
        missing.append(f"Chromium at {CHROMIUM} (make test installs it when run as root; or apt-get install chromium)")
    if not missing:
        return
    if os.environ.get("CI"):
        raise pytest.UsageError(f"browser tests need {' and '.join(missing)}; .ci/run installs them")
    skip = pytest.mark.skip(reason=f"outside CI without {' and '.join(missing)}")
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def server() -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpscale", "serve", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(base + "/openapi.json", timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise RuntimeError("the server did not start") from None
            time.sleep(0.1)
    yield base
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as profile, sync_playwright() as p:
        context_browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=[*ARGS])
        del profile
        yield context_browser
        context_browser.close()
