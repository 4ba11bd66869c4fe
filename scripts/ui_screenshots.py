"""Screenshots of the local page (docs/ui.md) for the docs: the search page and the hook log.

Indexes a copy of tests/fixtures/guide with MiniLM in a private temporary home (config, data and
runtime folders: the user's own are not touched, except the model cache), starts the resident
service through ``markdown-memory ui --no-browser``, sends two prompts through the real hook
(one that gets a section, one that does not), and photographs both pages with headless
Chromium driven by Selenium and the OS's chromedriver.

    .venv/bin/python scripts/ui_screenshots.py [--out docs] [--embedder minilm]

Writes ``ui-search.png`` and ``ui-hook-log.png`` into ``--out``. Needs the OS packages chromium
and chromium-driver and the ``test`` extra (selenium).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUESTION = "How long does the client wait for a server before it gives up on the connection?"
QUIET = "what does the roadmap say about the mobile app?"


def _cli(env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    done = subprocess.run([sys.executable, "-m", "markdown_memory", *args], env=env, input=stdin,
                          capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise SystemExit(f"markdown-memory {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _browser() -> object:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1200,900", "--hide-scrollbars", "--force-device-scale-factor=1"):
        options.add_argument(flag)
    os.environ.setdefault("SE_OFFLINE", "true")
    driver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    return webdriver.Chrome(options=options, service=Service(executable_path=driver))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs")
    parser.add_argument("--embedder", default="minilm")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="mm-shots-"))
    env = {**os.environ, "MARKDOWN_MEMORY_CONFIG_DIR": str(home / "config"), "XDG_DATA_HOME": str(home / "data"),
           "MARKDOWN_MEMORY_RUNTIME_DIR": str(home / "run"), "MARKDOWN_MEMORY_SERVICE": "auto",
           "MARKDOWN_MEMORY_EMBEDDER": args.embedder}
    root = home / "guide"
    shutil.copytree(REPO / "tests" / "fixtures" / "guide", root)
    browser = None
    try:
        _cli(env, "index", str(root))
        link = _cli(env, "ui", "--docs-dir", str(root), "--no-browser", "--http-port", str(_free_port()))
        link = link.strip().splitlines()[-1]
        for prompt in (QUIET, QUESTION):
            payload = json.dumps({"session_id": "3f2a9c1e-demo", "hook_event_name": "UserPromptSubmit",
                                  "prompt": prompt, "cwd": str(root)})
            _cli(env, "hook", "--docs-dir", str(root), stdin=payload)
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys
        from selenium.webdriver.support import expected_conditions as seen
        from selenium.webdriver.support.ui import WebDriverWait

        browser = _browser()
        wait = WebDriverWait(browser, 60)
        browser.get(link)  # type: ignore[attr-defined]
        wait.until(seen.presence_of_element_located((By.ID, "q"))).send_keys(QUESTION, Keys.ENTER)
        wait.until(seen.presence_of_element_located((By.CSS_SELECTOR, "li.hit")))
        args.out.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(args.out / "ui-search.png"))  # type: ignore[attr-defined]
        base = browser.current_url.split("?")[0].rstrip("/")  # type: ignore[attr-defined]
        browser.get(f"{base}/hook")  # type: ignore[attr-defined]
        wait.until(seen.presence_of_element_located((By.CSS_SELECTOR, "tr.entry")))
        browser.save_screenshot(str(args.out / "ui-hook-log.png"))  # type: ignore[attr-defined]
        print(f"wrote {args.out / 'ui-search.png'} and {args.out / 'ui-hook-log.png'}")
    finally:
        if browser is not None:
            browser.quit()  # type: ignore[attr-defined]
        subprocess.run([sys.executable, "-m", "markdown_memory", "serve", "--stop"], env=env, capture_output=True,
                       timeout=60, check=False)
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
