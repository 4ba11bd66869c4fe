"""``markdown-memory map`` and the ``docs://map`` MCP resource (issue 15): a token-budgeted
llms.txt-style outline of the docs root. The budget is what ``text.count_tokens`` counts; every
document is either listed or counted in a folder line; lines are never cut; a coarser map says
what it left out."""

from __future__ import annotations

import json
import re
import shutil
import urllib.parse
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from markdown_memory.text import count_tokens

FIXTURES = Path(__file__).parent / "fixtures"
GUIDE_DOCS = ["cli.md", "configuration.md", "install.md", "ops/release-notes.md", "ops/troubleshooting.md"]
LINE = re.compile(r"^(|# .+|> .+|Left out to fit [\d,]+ tokens: .+|## .+|- \[.+\]\(\S+\): .+|- … .+ not shown)$")


def _engine(root: Path, db: Path):
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine
    from markdown_memory.models import Freshness

    engine = Engine(Settings.load(root, db, "none"))
    engine.index()
    return engine, Freshness


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory):
    """An engine over 72 documents in 9 folders (some nested), each with headings two levels deep."""
    root = tmp_path_factory.mktemp("big") / "handbook"
    folders = ["", "api", "api/v2", "guides", "guides/deploy", "ops", "ops/runbooks", "reference", "team notes"]
    for f, folder in enumerate(folders):
        for d in range(8):
            heads = "\n".join(f"## Topic {f}.{d}.{h}\n\nText {h}.\n\n### Detail {h}a\n\nMore.\n\n### Detail {h}b\n\nMore.\n"
                              for h in range(5))
            path = root / folder / f"doc {d}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# Document {f}.{d}\n\nIntro.\n\n{heads}", encoding="utf-8")
    engine, freshness = _engine(root, tmp_path_factory.mktemp("db") / "i.db")
    yield engine
    engine.close()


def _check(docs_map, total_docs: int, paths: list[str]) -> None:
    text = docs_map.text
    assert docs_map.tokens == count_tokens(text) <= docs_map.max_tokens
    for line in text.splitlines():
        assert LINE.match(line), f"not a whole map line: {line!r}"
    listed = [p for p in paths if f"]({urllib.parse.quote(p)})" in text]
    counted = sum(int(n.replace(",", "")) for n in re.findall(r"([\d,]+) documents?(?:,|\))", text))
    assert len(listed) == docs_map.listed
    assert len(listed) + counted == total_docs, text
    assert (docs_map.left_out is None) == (docs_map.detail == "headings")
    assert (docs_map.left_out is not None) == ("Left out to fit" in text)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.integers(min_value=200, max_value=12_000))
def test_map_fits_any_budget_and_accounts_for_every_document(big, budget):
    paths = sorted(big.store.indexed_paths())
    docs_map = big.docs_map(budget)
    _check(docs_map, 72, paths)


def test_map_gives_up_detail_in_order_as_the_budget_shrinks(big):
    paths = sorted(big.store.indexed_paths())
    details = []
    for budget in (12_000, 5_000, 2_500, 1_500, 250, 200):
        docs_map = big.docs_map(budget)
        _check(docs_map, 72, paths)
        details.append(docs_map.detail)
    order = ["headings", "top headings", "documents", "folders", "top folders"]
    assert [order.index(d) for d in details] == sorted(order.index(d) for d in details)
    assert details[0] == "headings" and details[-1] == "folders"
    full = big.docs_map(12_000).text
    assert "- [Document 2.3](api/v2/doc%203.md): " in full and "Topic 2.3.0 (Detail 0a, Detail 0b)" in full
    assert "## team notes/" in full


@pytest.mark.parametrize("budget", [200, 400, 1500])
def test_many_folders_degrade_to_top_folders_then_say_how_many_are_not_shown(budget):
    from markdown_memory.reading.map import build_map
    from markdown_memory.store import HeadingRow

    rows = [HeadingRow(f"area-{i:03}/part/doc.md", f"Doc {i}", 100, 2, "Usage") for i in range(300)]
    paths = [r.path for r in rows]
    docs_map = build_map("big", rows, budget)
    _check(docs_map, 300, paths)
    assert docs_map.detail == "top folders"
    hidden = re.search(r"- … ([\d,]+) more folders \(([\d,]+) documents\) not shown$", docs_map.text.rstrip())
    assert hidden, docs_map.text[-300:]
    shown = docs_map.text.count("](area-")
    assert shown + int(hidden[1].replace(",", "")) == 300


def test_cli_map_of_the_guide_lists_every_document_with_its_top_headings(cli_main, tmp_path):
    root = tmp_path / "guide"
    shutil.copytree(FIXTURES / "guide", root)
    res = cli_main("--embedder", "none", "--db", str(tmp_path / "i.db"), "map", "--docs-dir", str(root))
    assert res.returncode == 0, res.stderr
    text = res.stdout
    assert text.startswith("# guide\n\n> 5 Markdown documents (")
    assert count_tokens(text) <= 1500
    for path in GUIDE_DOCS:
        assert f"]({path}): " in text
    assert "- [Installation Guide](install.md): " in text and "Linux, macOS, Windows" in text
    assert text.index("## ./") < text.index("## ops/")
    assert "Left out" not in text

    small = cli_main("--embedder", "none", "--db", str(tmp_path / "i.db"), "map", "--docs-dir", str(root),
                     "--max-tokens", "200", "--json")
    data = json.loads(small.stdout)
    assert data["tokens"] == count_tokens(data["text"]) <= 200
    assert set(data) == {"text", "tokens", "max_tokens", "documents", "listed", "detail", "left_out"}
    assert data["documents"] == 5
    bad = cli_main("map", "--docs-dir", str(root), "--max-tokens", "10")
    assert bad.returncode == 2 and "between 200 and 20000" in bad.stderr


def test_mcp_server_offers_the_map_as_a_resource(tmp_path):
    from test_server import McpClient, server_env

    root = tmp_path / "docs"
    shutil.copytree(FIXTURES / "guide", root)
    db = tmp_path / "index.db"
    client = McpClient(server_env(root, db, tmp_path / "home", "none"), tmp_path / "stderr.log")
    try:
        assert client.init.capabilities.resources is not None
        assert "docs://map" in (client.init.instructions or "")
        listed = client.portal.call(client.session.list_resources).resources
        assert [(r.uri, r.mime_type) for r in listed] == [("docs://map", "text/markdown")]
        assert not db.exists()  # the handshake and the listing open no database
        read = client.portal.call(client.session.read_resource, "docs://map")
        (content,) = read.contents
        assert content.text.startswith("# docs\n\n> 5 Markdown documents")  # the first read waited for the index
        for path in GUIDE_DOCS:
            assert f"]({path}): " in content.text
        assert count_tokens(content.text) <= 1500
    finally:
        client.close()
