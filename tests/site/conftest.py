"""The site tests' shared fixtures: one build, one server and one browser for the session.

Every test file under tests/site/ uses the same built site (``mkdocs build
--strict`` into a temporary folder, once) and the same headless Chromium,
driven through Debian's chromedriver. Where Chromium is absent on a
developer's machine the browser tests say so and skip; CI installs it and
sets ``MINIFX_REQUIRE_BROWSER=1``, which turns a missing browser into a
failure.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
WINDOW_WIDTH, WINDOW_HEIGHT = 1280, 800  # a laptop's browser window


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stderr}"
    return out


@pytest.fixture(scope="session")
def served_site(built_site: Path):
    handler = functools.partial(
        http.server.SimpleHTTPRequestHandler, directory=str(built_site)
    )
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    if not (CHROMIUM and CHROMEDRIVER):
        message = "Chromium and chromedriver are needed (Debian: chromium chromium-driver)"
        if os.environ.get("MINIFX_REQUIRE_BROWSER") or os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    driver.set_window_size(WINDOW_WIDTH, WINDOW_HEIGHT)
    yield driver
    driver.quit()
