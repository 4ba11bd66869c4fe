"""The local page (issue 38, docs/ui.md), through Starlette's TestClient on the service's HTTP app
(``mcp/http.py`` mounting ``ui/app.py``): who gets in (one-time link -> cookie, bearer token,
Host and Origin), each page's content, the same answer as ``Engine.search`` and the MCP tool,
the hook's log (written by ``hook.inject``, bounded, off, cleared), and the charts.

The fixture is a copy of tests/fixtures/guide plus one note linking to a section (for backlinks),
indexed with the real MiniLM model.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
PORT = 7799
TOKEN = "test-token-" + "x" * 32
ORIGIN = f"http://127.0.0.1:{PORT}"
QUESTION = "How long does the client wait for a server before it gives up on the connection?"
LINKING_NOTE = "# Checklist\n\nBefore a release, read [the wait limits](../configuration.md#network-timeouts).\n"


def hits_of(html: str) -> list[tuple[str, str]]:
    """(file_path, heading_path) of each hit the search page lists, in order."""
    return [(unescape(f), unescape(h)) for f, h in re.findall(r'class="hit" data-file="([^"]*)" data-heading="([^"]*)"',
                                                            html)]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, minilm) -> Iterator[SimpleNamespace]:
    from starlette.testclient import TestClient

    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine
    from markdown_memory.mcp import http_access
    from markdown_memory.mcp.http import McpHttpApp

    base = tmp_path_factory.mktemp("ui")
    root = base / "docs"
    shutil.copytree(FIXTURES / "guide", root)
    (root / "ops" / "checklist.md").write_text(LINKING_NOTE, encoding="utf-8")
    engine = Engine(Settings.load(root, base / "index.db", "minilm"), embedder=minilm)
    assert not engine.index().failed
    ident = http_access.root_id(root)
    app = McpHttpApp(PORT, TOKEN, engine_factory=lambda settings: engine,
                     lookup=lambda i: engine.settings if i == ident else None)
    with TestClient(app, base_url=ORIGIN) as client:
        yield SimpleNamespace(engine=engine, ident=ident, client=client, root=root, base=f"/ui/r/{ident}")
    engine.close()


def signed_in(site: SimpleNamespace) -> Any:
    """A fresh client (its own cookie jar) signed in through a one-time link."""
    from starlette.testclient import TestClient

    from markdown_memory.ui import access

    client = TestClient(site.client.app, base_url=ORIGIN)
    reply = client.get(access.link(PORT, TOKEN, f"r/{site.ident}/"), follow_redirects=False)
    assert reply.status_code == 303, reply.text
    return client


BEARER = {"Authorization": f"Bearer {TOKEN}"}


# -- who gets in -------------------------------------------------------------------------------

def test_every_page_is_refused_without_the_token_or_cookie(site) -> None:
    for path in ("/ui/", f"{site.base}/", f"{site.base}/?q=timeout", f"{site.base}/read?file=cli.md",
                 f"{site.base}/hook", f"{site.base}/drift", f"{site.base}/eval"):
        reply = site.client.get(path)
        assert reply.status_code == 401, path
        assert "markdown-memory ui" in reply.text and "Network timeouts" not in reply.text
    assert site.client.post(f"{site.base}/index").status_code == 401
    wrong = site.client.get(f"{site.base}/?q=timeout", headers={"Authorization": "Bearer wrong-token-wrong-token"})
    assert wrong.status_code == 401
    other_scheme = site.client.get(f"{site.base}/?q=timeout", headers={"Authorization": f"Basic {TOKEN}"})
    assert other_scheme.status_code == 401  # the token counts only as a bearer token
    from starlette.testclient import TestClient

    forger = TestClient(site.client.app, base_url=ORIGIN, cookies={"markdown_memory_ui": f"{int(time.time())}.{'0' * 64}"})
    assert forger.get(f"{site.base}/").status_code == 401


def test_the_one_time_link_sets_a_strict_cookie_and_works_once(site) -> None:
    from starlette.testclient import TestClient

    from markdown_memory.ui import access

    link = access.link(PORT, TOKEN, f"r/{site.ident}/")
    browser = TestClient(site.client.app, base_url=ORIGIN)
    reply = browser.get(link, follow_redirects=False)
    assert reply.status_code == 303 and reply.headers["location"] == f"{site.base}/"  # the ticket leaves the address
    cookie = reply.headers["set-cookie"].lower()
    for part in ("httponly", "samesite=strict", "path=/ui"):
        assert part in cookie, cookie
    assert browser.get(f"{site.base}/?q=timeout").status_code == 200
    other = TestClient(site.client.app, base_url=ORIGIN)  # the same link in another browser: used up
    again = other.get(link, follow_redirects=False)
    assert again.status_code == 401 and "already used" in again.text
    expired = access.make_ticket(TOKEN, now=time.time() - 2 * access.TICKET_SECONDS)
    assert other.get(f"/ui/login?ticket={expired}").status_code == 401
    foreign = access.make_ticket("another-token-" + "y" * 30)
    assert other.get(f"/ui/login?ticket={foreign}").status_code == 401


def test_the_link_only_leads_inside_the_page(site) -> None:
    from starlette.testclient import TestClient

    from markdown_memory.ui import access

    for target in ("//evil.example/ui/", "https://evil.example/", "/ui/../roots/x/mcp"):
        client = TestClient(site.client.app, base_url=ORIGIN)
        reply = client.get(f"/ui/login?ticket={access.make_ticket(TOKEN)}&next={target}", follow_redirects=False)
        assert reply.headers["location"] == "/ui/", target


def test_foreign_origin_and_host_are_refused_even_when_signed_in(site) -> None:
    browser = signed_in(site)
    assert browser.get(f"{site.base}/?q=timeout", headers={"Origin": "http://evil.example"}).status_code == 403
    assert browser.get(f"{site.base}/?q=timeout", headers={"Host": "evil.example"}).status_code == 421
    assert browser.get(f"{site.base}/?q=timeout", headers={"Origin": ORIGIN}).status_code == 200
    # the MCP endpoint's rules are unchanged beside the page
    assert site.client.post(f"/roots/{site.ident}/mcp", json={}).status_code == 401


def test_index_now_needs_the_form_token(site) -> None:
    browser = signed_in(site)
    assert browser.post(f"{site.base}/index", data={}).status_code == 403
    assert browser.post(f"{site.base}/index", data={"form_token": "0" * 64}).status_code == 403
    roots = browser.get("/ui/")
    token = re.search(r'name="form_token" value="([0-9a-f]{64})"', roots.text).group(1)
    (site.root / "cli.md").write_text((site.root / "cli.md").read_text() + "\nOne more line.\n")
    done = browser.post(f"{site.base}/index", data={"form_token": token})
    assert done.status_code == 200 and "Index run done" in done.text and "1 indexed" in done.text


# -- pages ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("query, filters", [
    (QUESTION, {}),
    ("ACME_MAX_RETRIES", {}),
    ("release storage engine", {"folder": "ops"}),
    ("settings", {"tag": "config"}),
    ("variable default meaning", {"kind": "table"}),
])
def test_the_page_lists_the_sections_engine_search_and_the_mcp_tool_list(site, query, filters) -> None:
    """Same answer as the CLI (Engine.search) and MCP (search_docs): same sections, same order."""
    from markdown_memory.mcp.runtime import Runtime
    from markdown_memory.ui.views import search_request

    request = search_request(query, filters.get("folder", ""), filters.get("tag", ""), filters.get("kind", ""), "")
    engine_order = [(h.file_path, h.heading_path) for h in site.engine.search(request).results]
    mcp = Runtime(site.engine.settings, engine_factory=lambda settings: site.engine).search_docs(request)
    mcp_order = [(h["file_path"], h["heading_path"]) for h in mcp["results"]]
    page = site.client.get(f"{site.base}/", params={"q": query, **filters}, headers=BEARER)
    assert page.status_code == 200
    assert engine_order, query
    assert hits_of(page.text) == engine_order == mcp_order


def test_the_search_page_shows_what_the_agent_gets(site) -> None:
    page = site.client.get(f"{site.base}/", params={"q": QUESTION}, headers=BEARER).text
    assert hits_of(page)[0] == ("configuration.md", "Configuration > Network timeouts")
    first = page[page.index('class="hit"'):]
    first = first[:first.index("</li>")]
    assert "Configuration › Network timeouts" in first and "lines 18-21" in first
    assert re.search(r"\d+ tokens", first) and "confidence" in first
    assert "The client waits 30 seconds" in first  # the text the agent gets
    assert re.search(r'<label for="q">', page) and 'id="q"' in page  # labelled controls


def test_markup_in_a_query_is_shown_as_text(site) -> None:
    page = site.client.get(f"{site.base}/", params={"q": '<script>alert(1)</script>"'}, headers=BEARER).text
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_reader_shows_outline_neighbours_and_backlinks(site) -> None:
    page = site.client.get(f"{site.base}/read", params={"file": "configuration.md",
                                                        "heading": "Configuration > Network timeouts"},
                           headers=BEARER).text
    assert "The client waits 30 seconds" in page
    assert 'aria-current="page">Network timeouts</a>' in page  # the outline beside it marks the section
    assert re.search(r'rel="prev"[^>]*>← previous: Configuration &gt; Environment variables', page)
    assert re.search(r'rel="next"[^>]*>next: Configuration &gt; Logging', page)
    backlinks = page[page.index('class="backlinks"'):]
    assert "ops/checklist.md · Checklist" in backlinks
    note = site.client.get(f"{site.base}/read", params={"file": "ops/checklist.md"}, headers=BEARER).text
    assert re.search(r'href="[^"]*file=configuration.md&amp;heading=Configuration%20%3E%20Network%20timeouts"', note)


def test_a_missing_document_is_a_clear_error(site) -> None:
    page = site.client.get(f"{site.base}/read", params={"file": "nope.md"}, headers=BEARER)
    assert page.status_code == 400 and "nope.md" in page.text and "Traceback" not in page.text
    unknown = site.client.get("/ui/r/nothing-000000000000/", headers=BEARER)
    assert unknown.status_code == 404


def test_the_roots_page_shows_model_coverage_and_size(site) -> None:
    page = site.client.get(f"{site.base}/", headers=BEARER)  # the root is opened once: listed from then on
    page = site.client.get("/ui/", headers=BEARER).text
    row = page[page.index(str(site.root)):]
    row = row[:row.index("</tr>")]
    assert "minilm" in row and "verified" in row and " MB" in row and "Index now" in row


def test_the_drift_page_lists_sections_naming_missing_code(site, tmp_path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "app.py").write_text("import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument('--dry-run')\n")
    page = site.client.get(f"{site.base}/drift", params={"code": str(code)}, headers=BEARER).text
    assert "cli.md · Command Line &gt; Flags" in page and "<code>--no-cache</code>" in page
    assert "<code>--dry-run</code>" not in page  # the code has it
    assert "declare the command to check them" in page  # no manifest names a command: said, not hidden


def test_the_evaluation_page_scores_a_question_file(site, tmp_path) -> None:
    import json

    questions = tmp_path / "q.jsonl"
    rows = [{"id": "t1", "type": "paraphrase", "query": QUESTION, "expect": [{"path": "configuration.md", "line": 19}]},
            {"id": "t2", "type": "exact", "query": "acme bench command", "expect": [{"path": "ops/release-notes.md",
                                                                                     "line": 9}]}]
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    browser = signed_in(site)
    form = browser.get(f"{site.base}/eval").text
    token = re.search(r'name="form_token" value="([0-9a-f]{64})"', form).group(1)
    page = browser.post(f"{site.base}/eval", data={"form_token": token, "questions": str(questions)}).text
    assert "2 questions" in page and "paraphrase" in page and "exact" in page
    assert page.count("<svg") == 2 and "MRR@10 per question type" in page
    bad = browser.post(f"{site.base}/eval", data={"form_token": token, "questions": str(tmp_path / "none.jsonl")})
    assert bad.status_code == 400 and "none.jsonl" in bad.text


# -- the hook's log ------------------------------------------------------------------------------

def _hook(site, prompt: str, session: str, keep: int | None = None) -> str | None:
    from markdown_memory.hook import inject
    from markdown_memory.hook.payload import Payload

    return inject(site.engine, Payload(prompt, session, str(site.root), "claude-code"), 800, log_keep=keep)


def test_the_hook_page_shows_each_prompt_what_was_added_and_why_not(site) -> None:
    session = f"s-{time.time_ns()}"
    assert _hook(site, QUESTION, session) is not None
    assert _hook(site, "what is the airspeed velocity of an unladen swallow", session) is None
    page = site.client.get(f"{site.base}/hook", params={"session": session}, headers=BEARER).text
    assert session in page
    rows = re.findall(r'<tr class="entry (added|silent)">(.*?)</tr>', page, re.S)
    assert [kind for kind, _ in rows] == ["silent", "added"]  # newest first
    silent, added = rows[0][1], rows[1][1]
    # the hook's reason for silence: the first hit's answer probability under its bar
    assert "swallow" in silent and re.search(r"probability 0\.\d\d, below the hook&#39;s bar 0\.\d\d", silent)
    assert "How long does the client wait" in added and "configuration.md · Configuration &gt; Network timeouts" in added
    assert re.search(r'<td class="num">[1-9]\d*</td>', added)  # tokens added


def test_the_hook_log_is_bounded_off_and_cleared(site, monkeypatch) -> None:
    from markdown_memory.hook import record

    session = f"b-{time.time_ns()}"
    for n in range(4):
        _hook(site, f"what is the airspeed of swallow number {n}", session, keep=3)
    entries = site.engine.store.hook_entries(session)
    assert [e.prompt[-1] for e in entries] == ["3", "2", "1"]
    monkeypatch.setenv(record.ENV, "off")
    _hook(site, "what is the airspeed of swallow number 9", session)
    assert len(site.engine.store.hook_entries(session)) == 3
    assert record.keep("off") == 0 and record.keep(None, from_env=False) == record.DEFAULT_KEEP
    assert record.keep("25") == 25 and record.keep("on") == record.DEFAULT_KEEP


def test_a_busy_database_drops_the_log_entry_not_the_answer(site) -> None:
    """An index run holding the write lock: the hook still answers; its log entry is dropped."""
    from markdown_memory.store import Store

    session = f"busy-{time.time_ns()}"
    writer = Store(site.engine.settings.db_path)
    try:
        with writer.transaction():  # the write lock, as an index run holds it
            assert _hook(site, QUESTION, session) is not None
    finally:
        writer.close()
    assert site.engine.store.hook_entries(session) == []
    assert _hook(site, QUESTION, session + "-after") is not None
    assert len(site.engine.store.hook_entries(session + "-after")) == 1


def test_the_hook_clients_setting_travels_to_the_service(site) -> None:
    """Through the service's ``hook`` op the hook client's MARKDOWN_MEMORY_HOOK_LOG decides:
    ``off`` writes nothing, a number bounds the log."""
    from markdown_memory.hook.service_op import HookCall, answer

    service = SimpleNamespace(engine=lambda settings: site.engine)
    session = f"op-{time.time_ns()}"

    def ask(setting: str | None) -> None:
        answer(service, HookCall(site.engine.settings, QUESTION, session, "claude-code", 800, setting))

    ask("off")
    assert site.engine.store.hook_entries(session) == []
    for _ in range(3):
        ask("2")
    entries = site.engine.store.hook_entries(session)
    assert len(entries) == 2 and entries[0].reason and "already added" in entries[0].reason


def test_ui_clear_hook_log_empties_the_roots_log(tmp_path, cli_main) -> None:
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine
    from markdown_memory.hook import inject
    from markdown_memory.hook.payload import Payload

    root = tmp_path / "docs"
    shutil.copytree(FIXTURES / "guide", root)
    db = tmp_path / "i.db"
    engine = Engine(Settings.load(root, db, "none"))
    engine.index()
    inject(engine, Payload(QUESTION, "s1", str(root), "codex"), 800, log_keep=10)
    assert len(engine.store.hook_entries()) == 1
    engine.close()
    done = cli_main("--db", str(db), "ui", "--docs-dir", str(root), "--clear-hook-log", "--embedder", "none")
    assert done.returncode == 0 and "1 prompt(s) deleted" in done.stdout, done.stderr
    engine = Engine(Settings.load(root, db, "none"))
    assert engine.store.hook_entries() == []
    engine.close()


# -- charts and the p_answer fallback ------------------------------------------------------------

def test_charts_are_inline_svg_with_their_figures_in_words() -> None:
    from markdown_memory.ui import charts

    svg = str(charts.confidence_vs_correct([("high", True), ("high", False), ("low", False), ("none", False)]))
    assert svg.startswith("<svg") and "high: 1 of 2 right" in svg and "low: 0 of 1 right" in svg
    assert svg.index(">high<") < svg.index(">low<") < svg.index(">none<")
    calibrated = str(charts.confidence_vs_correct([(0.93, True), (0.91, True), (0.12, False)]))
    assert "p 0.9-1.0: 2 of 2 right" in calibrated and "p 0.1-0.2: 0 of 1 right" in calibrated
    bars = str(charts.bars([("<b>", 0.5)], title="t"))
    assert "<b>" not in bars and "&lt;b&gt;" in bars


def test_p_answer_is_shown_when_the_search_gives_one() -> None:
    from markdown_memory.ui.views import certainty

    assert certainty(SimpleNamespace(p_answer=0.82), "high") == {"p_answer": 0.82, "label": "high"}
    assert certainty(SimpleNamespace(), "low") == {"p_answer": None, "label": "low"}


def test_without_an_engine_factory_the_app_s_own_engine_serves_the_page_and_stops_with_it(tmp_path, monkeypatch) -> None:
    """An HTTP app given no engine factory makes one engine per docs root for the MCP endpoint
    and the page alike, and stops it when the app stops (the page's engines were never stopped)."""
    from starlette.testclient import TestClient

    from markdown_memory import engine as engine_module
    from markdown_memory.config import Settings
    from markdown_memory.mcp import http_access
    from markdown_memory.mcp.http import McpHttpApp

    root = tmp_path / "docs"
    shutil.copytree(FIXTURES / "guide", root)
    settings = Settings.load(root, tmp_path / "i.db", "none")
    made: list[object] = []
    stopped: list[object] = []

    class Counted(engine_module.Engine):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

        def shutdown(self, timeout: float = 5.0) -> bool:
            stopped.append(self)
            return super().shutdown(timeout)

    monkeypatch.setattr(engine_module, "Engine", Counted)
    ident = http_access.root_id(root)
    app = McpHttpApp(PORT, TOKEN, lookup=lambda i: settings if i == ident else None)
    with TestClient(app, base_url=ORIGIN) as client:
        for query in ("timeout", "install"):
            assert client.get(f"/ui/r/{ident}/?q={query}", headers=BEARER).status_code == 200
        assert len(made) == 1
    assert stopped == made


def test_the_hook_op_cuts_a_long_prompt_as_the_hook_reads_one(site) -> None:
    """A prompt sent to the service's hook op is searched and logged cut as ``payload.parse``
    cuts the hook's stdin (a pasted log can be huge)."""
    from markdown_memory.hook.payload import MAX_PROMPT_CHARS
    from markdown_memory.hook.service_op import HookCall, answer

    session = f"long-{time.time_ns()}"
    prompt = QUESTION + " " + "x" * (2 * MAX_PROMPT_CHARS)
    answer(SimpleNamespace(engine=lambda settings: site.engine),  # type: ignore[arg-type]
           HookCall(site.engine.settings, prompt, session, "claude-code", 800, "10"))
    (entry,) = site.engine.store.hook_entries(session)
    assert entry.prompt == prompt[:MAX_PROMPT_CHARS]


def _hit_blocks(html: str) -> list[str]:
    """The markup of each hit the search page lists, in order."""
    return [block[:block.index("</li>")] for block in html.split('<li class="hit"')[1:]]


def test_only_the_answer_has_a_confidence_and_a_pointer_is_not_called_over_budget(site) -> None:
    """Regression (trial2): every hit said `confidence high` (the answer's label, repeated
    beside a hit of p(answer) 0.06), and every pointer said `past the token budget` though the
    answer had spent a few hundred of its 2,000 tokens (a sure first hit makes the others
    pointers)."""
    from markdown_memory.ui.views import search_request

    request = search_request(QUESTION, "", "", "", "")
    answer = site.engine.search(request)
    spent = sum(h.tokens for h in answer.results if h.content is not None)
    blocks = _hit_blocks(site.client.get(f"{site.base}/", params={"q": QUESTION}, headers=BEARER).text)
    assert len(blocks) == len(answer.results) > 1
    assert all("confidence" not in block for block in blocks[1:])
    pointers = [block for block, hit in zip(blocks, answer.results) if hit.content is None]
    assert pointers, "the question should leave some hits as pointers"
    if spent + sum(h.tokens for h in answer.results if h.content is None) < request.max_tokens // 2:
        assert all("token budget" not in block for block in pointers)


def test_a_root_that_cannot_be_opened_is_listed_with_its_reason_and_its_pages_say_why(tmp_path) -> None:
    """A root `markdown-memory roots` lists but the page cannot open (its index damaged, its docs
    root gone) stays on the Roots page with the listing's state and reason (and what to do), and
    its pages answer with them, not 404 "no indexed docs root has the id"."""
    from starlette.testclient import TestClient

    from markdown_memory.config import Settings, projects_dir
    from markdown_memory.engine import Engine
    from markdown_memory.mcp.http import McpHttpApp
    from markdown_memory.roots import PRUNE_HINT, list_indexes

    gone = tmp_path / "gone"
    shutil.copytree(FIXTURES / "guide", gone)
    engine = Engine(Settings.load(gone, None, "none"))
    assert not engine.index().failed
    engine.close()
    shutil.rmtree(gone)
    damaged = projects_dir() / "damaged-0123456789ab"
    damaged.mkdir(parents=True)
    (damaged / "index.db").write_bytes(b"this is not a database\n" * 200)
    listed = {e.folder.name: e for e in list_indexes()}
    assert sorted(e.state for e in listed.values()) == ["gone", "unreadable"]
    with TestClient(McpHttpApp(PORT, TOKEN), base_url=ORIGIN) as client:
        roots = unescape(client.get("/ui/", headers=BEARER).text)
        rows = {ident: "".join(r for r in roots.split("<tr>") if ident in r) for ident in listed}
        for ident, entry in listed.items():
            assert rows[ident], f"{ident} ({entry.state}) is not on the Roots page"
            assert entry.state in rows[ident] and entry.reason in rows[ident], rows[ident]
            page = client.get(f"/ui/r/{ident}/", params={"q": "timeout"}, headers=BEARER)
            text = unescape(page.text)
            assert page.status_code != 404 and "no indexed docs root" not in text
            assert entry.state in text and entry.reason in text and str(entry.database) in text
        gone_id = next(i for i, e in listed.items() if e.state == "gone")
        assert "no longer exists" in rows[gone_id] and PRUNE_HINT in rows[gone_id]
        assert PRUNE_HINT in unescape(client.get(f"/ui/r/{gone_id}/hook", headers=BEARER).text)
        assert "cannot be read" in rows[damaged.name] and str(gone) in rows[gone_id]
        assert client.get("/ui/r/nothing-000000000000/", headers=BEARER).status_code == 404
