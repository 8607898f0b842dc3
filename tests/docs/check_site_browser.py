"""The built site renders in a real browser: headless Chromium through chromedriver.

The browser is driven through the W3C WebDriver protocol that Debian's
``chromium-driver`` serves on a loopback port, with the standard library's HTTP
client, and its console log is read through chromedriver's log endpoint. For the
home page, a guide page and an API page it checks the title, the navigation, a code
block and that the console has no error, and saves a screenshot to
``$CQLCODEC_DOCS_SITE/../site-screenshots/``. Skips with a message where chromium or
chromedriver is missing (``apt-get install chromium chromium-driver``). Only ``nox -s
docs`` runs it, naming this module (``check_*`` modules are not collected otherwise).
"""

from __future__ import annotations

import base64
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SITE = os.environ.get("CQLCODEC_DOCS_SITE", "")
pytestmark = pytest.mark.skipif(
    not SITE, reason="checks the built site: run `python3 -m nox -s docs` (CQLCODEC_DOCS_SITE unset)")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
CHROMEDRIVER = shutil.which("chromedriver")
PAGES = {  # page -> how its title starts
    "index.html": "cqlcodec",
    "guide/tour.html": "A tour",
    "reference/driver.html": "cqlcodec.driver",
}


class WebDriver:
    """The few WebDriver commands the check needs, over HTTP on 127.0.0.1."""

    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.session = ""

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.base}{path}", data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())["value"]

    def start(self, binary: str, profile: str) -> None:
        options = {"binary": binary, "args": [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--window-size=1280,900", f"--user-data-dir={profile}", "--no-first-run"]}
        value = self.call("POST", "/session", {"capabilities": {"alwaysMatch": {
            "goog:chromeOptions": options, "goog:loggingPrefs": {"browser": "ALL"}}}})
        self.session = value["sessionId"]

    def command(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        return self.call(method, f"/session/{self.session}{path}", body)

    def script(self, source: str) -> Any:
        return self.command("POST", "/execute/sync", {"script": source, "args": []})


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    if not CHROMIUM or not CHROMEDRIVER:
        pytest.skip("headless Chromium is not installed here (Debian: apt-get install chromium "
                    "chromium-driver); the browser check did not run")
    profile = tempfile.mkdtemp(prefix="cqlcodec-docs-chromium-")
    log = Path(profile) / "chromedriver.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([CHROMEDRIVER, "--port=0"], stdout=out, stderr=subprocess.STDOUT)
    try:
        port = 0
        deadline = time.monotonic() + 30
        while not port and time.monotonic() < deadline:
            found = re.search(r"started successfully on port (\d+)", log.read_text())
            port = int(found.group(1)) if found else 0
            time.sleep(0.1)
        assert port, f"chromedriver did not start: {log.read_text()}"
        driver = WebDriver(port)
        driver.start(CHROMIUM, profile)
        try:
            yield driver
        finally:
            driver.call("DELETE", f"/session/{driver.session}")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(profile, ignore_errors=True)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files without logging every request to stderr."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The site over HTTP on 127.0.0.1 (as it is served: the search worker needs an origin)."""
    handler = functools.partial(QuietHandler, directory=SITE)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("page", list(PAGES))
def test_page_renders_without_console_errors(browser: WebDriver, server: str, page: str) -> None:
    assert Path(SITE, page).exists(), f"{page} was not built"
    browser.command("POST", "/url", {"url": f"{server}/{page}"})
    deadline = time.monotonic() + 20
    while browser.script("return document.readyState") != "complete" and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)  # the theme's scripts run after load
    state = browser.script("""return {
        title: document.title,
        nav: document.querySelectorAll('nav.md-nav--primary a.md-nav__link').length,
        code: document.querySelectorAll('pre code, .highlight pre, .doc-signature').length,
        h1: (document.querySelector('article h1') || {}).textContent || '',
        width: document.querySelector('.md-main') ? document.querySelector('.md-main').clientWidth : 0,
    }""")
    shots = Path(SITE).resolve().parent / "site-screenshots"
    shots.mkdir(exist_ok=True)
    png = base64.b64decode(browser.command("GET", "/screenshot"))
    (shots / (page.replace("/", "_").replace(".html", ".png"))).write_bytes(png)
    logs = browser.command("POST", "/se/log", {"type": "browser"})
    errors = [entry["message"] for entry in logs if entry.get("level") == "SEVERE"]
    assert state["title"].startswith(PAGES[page]), state
    assert "cqlcodec" in state["title"], state
    assert state["nav"] >= 10, f"navigation missing: {state}"
    assert state["code"] >= 1, f"no code block: {state}"
    assert state["h1"].strip(), f"no heading: {state}"
    assert state["width"] > 600, f"the theme's layout did not apply: {state}"
    assert not errors, f"console errors on {page}: {errors}"
    assert len(png) > 10_000


def test_the_check_sees_console_errors(browser: WebDriver) -> None:
    """The log endpoint reports an error and an uncaught exception as SEVERE, a log as less."""
    page = ("<html><head><title>t</title></head><body><script>console.log('just-a-log-line');"
            "console.error('broken on purpose'); undefined_function();</script></body></html>")
    browser.command("POST", "/se/log", {"type": "browser"})  # drop what earlier pages logged
    browser.command("POST", "/url", {"url": "data:text/html," + urllib.parse.quote(page)})
    logs = browser.command("POST", "/se/log", {"type": "browser"})
    severe = " ".join(entry["message"] for entry in logs if entry.get("level") == "SEVERE")
    assert "broken on purpose" in severe and "undefined_function" in severe, logs
    assert "just-a-log-line" not in severe
