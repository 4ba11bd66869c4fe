"""search_docs over MCP on the shared eval corpus answers exactly as the engine does.

Serves a copy of the session's ``eval_quick_db`` (three sub-folders of ``../shared/eval-corpus``,
ripgrep among them, indexed in-process with the session's MiniLM) through the real MCP server
and runs the dev queries about ripgrep through ``search_docs`` at its defaults. The first hit must be
the engine's first hit for every query (so the server reaches the top-1 rate the engine's eval
reports), and no answer may spend more than ``max_tokens`` on section text.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from conftest import EVAL_CORPUS, EVAL_QUERIES, copy_db
from markdown_memory.models import SearchRequest
from test_server import McpClient, server_env

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ["ripgrep"]
MAX_TOKENS = 2000

pytestmark = pytest.mark.slow


def _harness():
    spec = importlib.util.spec_from_file_location("eval_retrieval", REPO / "scripts" / "eval_retrieval.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


def test_search_docs_matches_engine_top1_within_budget_on_eval_corpus(tmp_path: Path, minilm, eval_quick_db) -> None:
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine

    harness = _harness()
    db = copy_db(eval_quick_db, tmp_path / "index.db")
    engine = Engine(Settings.load(EVAL_CORPUS, db, "minilm"), embedder=minilm)
    assert engine.list_documents("ripgrep").total > 0
    queries = harness.load_queries(EVAL_QUERIES, folders=FOLDERS)
    answerable = [q for q in queries if q["expect"]]
    assert len(answerable) >= 5

    client = McpClient(server_env(EVAL_CORPUS, db, tmp_path / "home", "minilm", MARKDOWN_MEMORY_AUTO_INDEX="0"),
                       tmp_path / "stderr.log")
    try:
        engine_top1 = server_top1 = 0
        for q in answerable:
            is_error, answer = client.call("search_docs", {"query": q["query"]})
            assert not is_error, answer
            assert answer["keyword_only"] is False
            hits = answer["results"]
            assert sum(h["tokens"] for h in hits if h.get("content") is not None) <= MAX_TOKENS
            direct = engine.search(SearchRequest(q["query"])).to_dict()["results"]
            assert [(h["file_path"], h["heading_path"]) for h in hits[:1]] == \
                   [(h["file_path"], h["heading_path"]) for h in direct[:1]], q["id"]
            server_top1 += harness.first_correct(hits, q["expect"]) == 0
            engine_top1 += harness.first_correct(direct, q["expect"]) == 0
    finally:
        client.close()
        engine.close()
    assert server_top1 == engine_top1
    assert server_top1 > 0
