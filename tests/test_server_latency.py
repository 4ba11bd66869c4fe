"""What the per-call cost cuts of the MCP server (issue 18, "Under load") must not change: a
whole-table read reused across calls (counts, the document list, the vector token) is read
again as soon as any connection changed the database; a repeated query reuses its vector; the
server keeps numpy's BLAS to one thread unless the user chose otherwise."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from markdown_memory.config import Settings
from markdown_memory.engine import Engine
from markdown_memory.mcp.runtime import Runtime
from markdown_memory.models import SearchRequest
from markdown_memory.status import REFRESH_TTL_SECONDS


def test_answers_see_what_another_process_indexed_since_the_previous_call(docs_root: Path, tmp_path: Path) -> None:
    """The server (auto-index off: it never indexes by itself) answers twice; between the two
    calls another engine (as another process would) indexes a new file. The second answer's
    counts, hits and document list include it: whole-table reads a connection reuses (Store.versioned)
    are read again once another connection committed."""
    db = tmp_path / "index.db"
    runtime = Runtime(Settings.load(docs_root, db, "none", auto_index=False))
    runtime.engine.index()
    first = runtime.search_docs(SearchRequest("zebra crossing stripes"))
    documents = first["index_status"]["documents"]
    assert not any(h["file_path"] == "zebra.md" for h in first["results"])
    (docs_root / "zebra.md").write_text("# Zebra crossing\n\nThe stripes are painted white.\n", encoding="utf-8")
    other = Engine(Settings.load(docs_root, db, "none"))
    other.index()
    other.close()
    time.sleep(REFRESH_TTL_SECONDS + 0.1)  # index_status itself is reused for this long (status.py)
    second = runtime.search_docs(SearchRequest("zebra crossing stripes"))
    assert second["index_status"]["documents"] == documents + 1
    assert second["results"][0]["file_path"] == "zebra.md"
    assert "stale" not in second["results"][0]
    listed = runtime.answer("list_documents", {"directory": None, "offset": 0})
    assert "zebra.md" in {d["path"] for d in listed["documents"]}
    runtime.shutdown()


def test_an_edit_right_after_an_answer_is_in_the_next_answer_of_the_server(docs_root: Path, tmp_path: Path) -> None:
    """Through the server's tool body (auto-index on): an edit made right after one answer, to a
    file that was not among its hits, is in the very next answer (the cheaper probe still runs
    before each answer once 4x its own cost has passed)."""
    runtime = Runtime(Settings.load(docs_root, tmp_path / "index.db", "none", auto_index=True))
    runtime.engine.index()
    runtime.search_docs(SearchRequest("install on linux"))
    assert runtime.engine._scheduler.wait(30)
    for n in range(3):
        runtime.search_docs(SearchRequest("install on linux"))
        path = docs_root / "configuration.md"
        path.write_text(path.read_text(encoding="utf-8") + f"\n## Okapi herding {n}\n\nOkapis graze at dusk {n}.\n",
                        encoding="utf-8")
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # a coarse-clock filesystem
        hits = runtime.search_docs(SearchRequest(f"okapi herding graze dusk {n}"))["results"]
        assert hits[0]["heading_path"].endswith(f"Okapi herding {n}") and f"dusk {n}" in hits[0]["content"]
    runtime.shutdown()


class _CountingEmbedder:
    name = "counting"
    weights_id = "counting-v1"
    dimension = 3

    def __init__(self) -> None:
        self.calls = 0

    def embed_query(self, query: str):
        import numpy as np

        self.calls += 1
        return np.array([1.0, float(len(query)), 0.0], dtype=np.float32)


def test_the_server_runs_numpy_on_one_blas_thread_unless_the_user_set_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from markdown_memory.mcp import server

    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "3")
    server._single_threaded_blas()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1" and os.environ["MKL_NUM_THREADS"] == "3"


def test_reused_counts_follow_writes_of_the_same_connection(docs_root: Path, tmp_path: Path) -> None:
    engine = Engine(Settings.load(docs_root, tmp_path / "index.db", "none"))
    engine.index()
    store = engine.store
    before = store.counts()
    with store.transaction():
        store.delete_document(store.documents_by_path()["install.md"].id)
    after = store.counts()
    assert after["documents"] == before["documents"] - 1 and "install.md" not in store.documents_by_path()
    engine.close()
