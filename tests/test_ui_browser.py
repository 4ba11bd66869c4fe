"""The local page in a real browser (issue 38): headless Chromium from the OS packages driven by
Selenium with the OS's chromedriver (never a downloaded one), against a real resident service
started by ``markdown-memory ui``.

One walk through, as a person would: refused without the link; the one-time link signs in; a
search lists the right section of tests/fixtures/guide first; it opens in the reader; a
backlink leads to the linking note; the hook log shows a prompt after a real ``markdown-memory
hook`` call; a form on a foreign origin is refused. Skipped, saying why, where Chromium,
chromedriver or Selenium is missing (CI installs them: .ci/run).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from test_service import runtime  # noqa: F401 - the fixture: the service on, a private runtime folder

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "fixtures"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
QUESTION = "How long does the client wait for a server before it gives up on the connection?"
LINKING_NOTE = "# Checklist\n\nBefore a release, read [the wait limits](../configuration.md#network-timeouts).\n"
WAIT = 30


def _browser() -> Any:
    """Headless Chromium through the OS's chromedriver, or a skip saying what is missing."""
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip("needs the OS packages chromium and chromium-driver (apt-get install chromium chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("needs selenium (the test extra: pip install -e '.[test]')")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1280,900", "--no-first-run", "--disable-extensions"):
        options.add_argument(flag)
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager never downloads a driver
    return webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "markdown_memory", *args], input=stdin, capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.fixture
def served(runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, minilm) -> Iterator[dict[str, Any]]:  # noqa: F811
    """An indexed copy of the guide (plus a linking note) at the default index place, and the
    page's one-time link from ``markdown-memory ui --no-browser`` (which starts the service)."""
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine
    from markdown_memory.mcp import http_access

    monkeypatch.setenv("MARKDOWN_MEMORY_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("MARKDOWN_MEMORY_EMBEDDER", "minilm")
    root = tmp_path / "guide"
    shutil.copytree(FIXTURES / "guide", root)
    (root / "ops" / "checklist.md").write_text(LINKING_NOTE, encoding="utf-8")
    engine = Engine(Settings.load(root, None, "minilm"), embedder=minilm)
    assert not engine.index().failed
    engine.close()
    port = _free_port()
    done = _cli("ui", "--docs-dir", str(root), "--no-browser", "--http-port", str(port))
    assert done.returncode == 0, done.stderr
    link = done.stdout.strip().splitlines()[-1]
    assert link.startswith(f"http://127.0.0.1:{port}/ui/login?ticket="), done.stdout
    yield {"root": root, "port": port, "link": link, "base": f"http://127.0.0.1:{port}/ui/r/"
           f"{http_access.root_id(root)}"}


def _foreign_site(target: str) -> tuple[ThreadingHTTPServer, str]:
    """A page on another origin (another loopback port) whose form posts to ``target``."""
    page = (f"<!doctype html><form id='f' method='post' action='{target}'><input name='form_token' value='x'>"
            "<button id='go'>go</button></form>").encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def test_a_person_searches_reads_follows_a_backlink_and_sees_the_hook_log(served) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    browser = _browser()
    try:
        wait = WebDriverWait(browser, WAIT)
        browser.get(f"{served['base']}/")  # no link opened yet: refused
        assert "Not signed in" in browser.find_element(By.TAG_NAME, "h1").text

        browser.get(served["link"])
        box = wait.until(seen.presence_of_element_located((By.ID, "q")))
        assert "ticket=" not in browser.current_url  # the secret left the address bar
        box.send_keys(QUESTION, Keys.ENTER)
        first = wait.until(seen.presence_of_element_located((By.CSS_SELECTOR, "li.hit")))
        assert (first.get_attribute("data-file"), first.get_attribute("data-heading")) == \
            ("configuration.md", "Configuration > Network timeouts")

        first.find_element(By.CSS_SELECTOR, "a.crumb").click()
        where = wait.until(seen.presence_of_element_located((By.ID, "where")))
        assert "Network timeouts" in where.text and "The client waits 30 seconds" in browser.page_source
        browser.find_element(By.PARTIAL_LINK_TEXT, "ops/checklist.md").click()
        wait.until(seen.text_to_be_present_in_element((By.ID, "where"), "ops/checklist.md"))

        payload = json.dumps({"session_id": "browser-session", "hook_event_name": "UserPromptSubmit",
                              "prompt": QUESTION, "cwd": str(served["root"])})
        hook = _cli("hook", "--docs-dir", str(served["root"]), stdin=payload)
        assert "Network timeouts" in hook.stdout, hook.stderr
        browser.get(f"{served['base']}/hook")
        entry = wait.until(seen.presence_of_element_located((By.CSS_SELECTOR, "tr.entry")))
        assert QUESTION in entry.text and "yes" in entry.text and "Network timeouts" in entry.text
        assert "browser-session" in browser.page_source

        server, foreign = _foreign_site(f"{served['base']}/index")
        try:
            browser.get(foreign)
            browser.find_element(By.ID, "go").click()
            wait.until(lambda b: b.current_url.startswith(served["base"]))
            assert "refused" in browser.page_source and "Index run done" not in browser.page_source
        finally:
            server.shutdown()

        browser.delete_all_cookies()  # a browser without the link's cookie
        browser.get(f"{served['base']}/?q=timeout")
        assert "Not signed in" in browser.find_element(By.TAG_NAME, "h1").text
        browser.get(served["link"])  # the link was used once already
        assert "already used" in browser.page_source
    finally:
        browser.quit()
