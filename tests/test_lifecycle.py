"""Index lifecycle (issue 5): the background catch-up scheduler and an honest index_status.

Engines run in server mode (``background=True``, as the MCP server makes them). The scheduler
is driven through ``BackgroundIndexer.on_call`` exactly as the engine's ``Freshness.REFRESH``
policy drives it: the engine's own ``engine._scheduler`` (default timings), or one built here
with shortened gaps (or a fake clock), so nothing here sleeps for real minutes.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from markdown_memory.errors import DocumentNotFoundError
from markdown_memory.index import embedding, indexer
from markdown_memory.index.scheduler import BackgroundIndexer
from markdown_memory.models import SearchRequest
from markdown_memory.store.testing import stored_passages

CASES = Path(__file__).parent / "fixtures" / "cases"


def write_docs(root: Path, n: int, start: int = 0) -> None:
    """n small documents, each with a unique identifier token WIDGET_<i>_QUOTA."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(start, start + n):
        (root / f"widget-{i:04d}.md").write_text(
            f"# Widget {i}\n\n## Overview\n\nWidget {i} renders part {i % 13} of the dashboard.\n\n"
            f"## Limits\n\nSet `WIDGET_{i}_QUOTA` to cap how many rows widget {i} keeps.\n",
            encoding="utf-8",
        )


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def paths_of(answer) -> list[str]:
    return [h.file_path for h in answer.results]


@pytest.fixture
def server_engine(tmp_path, request):
    """``server_engine(root, embedder="minilm", db=None)`` -> an Engine in server mode
    (``background=True``) with a private database; ``"minilm"`` shares the session's model.
    Background work is shut down after the test."""
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine

    engines = []

    def factory(root: Path, embedder: str = "minilm", db: Path | None = None):
        model = request.getfixturevalue("minilm") if embedder == "minilm" else None
        settings = Settings.load(root, db or (tmp_path / f"server-{len(engines)}.db"), embedder)
        engine = Engine(settings, embedder=model, background=True)
        engines.append(engine)
        return engine

    yield factory
    for engine in engines:
        engine.shutdown()
        engine.close()


@pytest.fixture
def scheduler():
    """``scheduler(engine, **timings)`` -> a BackgroundIndexer of its own for ``engine`` (enabled
    as the engine's would be: with auto-index on), shut down after the test."""
    made = []

    def factory(engine, **timings) -> BackgroundIndexer:
        auto = BackgroundIndexer(engine._index_hooks(), enabled=engine.settings.auto_index, **timings)
        made.append(auto)
        return auto

    yield factory
    for auto in made:
        auto.shutdown()


def slow_writes(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Make every document write take ``seconds`` longer, so a run is long enough to watch."""
    real = indexer.write_document

    def slow(*args, **kwargs):
        time.sleep(seconds)
        return real(*args, **kwargs)

    monkeypatch.setattr(indexer, "write_document", slow)


def test_first_call_starts_a_run_and_answers_at_once(tmp_path, server_engine, monkeypatch):
    root = tmp_path / "docs"
    write_docs(root, 120)
    slow_writes(monkeypatch, 0.005)
    engine = server_engine(root, "minilm")
    auto = engine._scheduler
    assert engine.status().indexing is False and engine.status().counts.documents == 0  # nothing before a call
    assert auto.on_call("search") == "first"
    answer = engine.search(SearchRequest("WIDGET_7_QUOTA"))
    status = engine.status()
    # the first call did not wait for the catch-up run: it is still going (no wall-clock bound)
    assert status.indexing is True
    assert status.counts.documents < 120 and status.message and "in progress" in status.message
    assert isinstance(answer.results, tuple)
    assert auto.on_call("search") is None, "one run at a time"
    assert auto.wait(60)
    status = engine.status()
    assert status.indexing is False and status.counts.documents == 120
    assert status.coverage == "verified" and status.counts.vectors == status.counts.passages > 0
    assert status.message is None and status.last_run.seconds > 0
    assert paths_of(engine.search(SearchRequest("WIDGET_7_QUOTA")))[0] == "widget-0007.md"
    assert auto.runs == 1


def test_documents_become_searchable_one_by_one_during_the_first_run(tmp_path, server_engine, monkeypatch):
    root = tmp_path / "docs"
    write_docs(root, 80)
    slow_writes(monkeypatch, 0.02)
    engine = server_engine(root, "none")
    auto = engine._scheduler
    auto.on_call("search")
    deadline = time.monotonic() + 20
    while engine.status().counts.documents < 10 and time.monotonic() < deadline:
        time.sleep(0.02)
    status = engine.status()
    assert status.indexing is True and 10 <= status.counts.documents < 80
    assert status.progress.phase == "parse" and status.progress.total == 80
    indexed = [d.path for d in engine.list_documents().documents]
    first = int(indexed[0].split("-")[1].split(".")[0])
    assert paths_of(engine.search(SearchRequest(f"WIDGET_{first}_QUOTA")))[0] == indexed[0]
    assert auto.wait(30) and engine.status().counts.documents == 80


def test_search_during_embedding_uses_vectors_where_present_and_keywords_elsewhere(tmp_path, make_engine,
                                                                                   monkeypatch):
    root = tmp_path / "docs"
    write_docs(root, 40)
    monkeypatch.setattr(embedding, "EMBED_CHUNK", 16)
    engine = make_engine(root, "minilm")
    embedded_once = []
    report = engine.index(progress=lambda phase, done, total: embedded_once.append(done) if phase == "embed" else None,
                          should_stop=lambda: bool(embedded_once))
    assert report.interrupted
    status = engine.status()
    assert 0 < status.counts.vectors < status.counts.passages, "stopped in phase 2: some passages embedded"
    assert "wait for vectors" in status.message
    store = engine.store
    with_vec = {p.path for p in stored_passages(store) if p.has_vector}
    without = sorted({d.path for d in engine.list_documents().documents} - with_vec)
    assert with_vec and without
    for path in (sorted(with_vec)[0], without[0]):
        i = int(path.split("-")[1].split(".")[0])
        answer = engine.search(SearchRequest(f"how many rows does widget {i} keep WIDGET_{i}_QUOTA"))
        assert answer.keyword_only is False
        assert paths_of(answer)[0] == path
    # a paraphrase without the identifier still reaches an embedded document through vectors
    hits = engine.search(SearchRequest("cap on retained rows for a dashboard widget", top_k=10)).results
    assert any("vector" in h.matched_by and h.file_path in with_vec for h in hits)
    assert all(h.file_path in with_vec for h in hits if h.matched_by == ("vector",))
    # the next run resumes and fills in the rest
    engine.index()
    status = engine.status()
    assert status.counts.vectors == status.counts.passages and status.message is None


def test_edited_file_is_reindexed_on_the_next_call_after_the_gap(tmp_path, server_engine, scheduler):
    root = tmp_path / "docs"
    write_docs(root, 10)
    engine = server_engine(root, "minilm")
    clock = FakeClock()
    auto = scheduler(engine, min_gap=10, probe_ttl=0, refresh_wait=30, clock=clock)
    auto.on_call("search")
    assert auto.wait(60)
    target = root / "widget-0003.md"
    target.write_text(target.read_text().replace("WIDGET_3_QUOTA", "GADGET_3_BUDGET"), encoding="utf-8")
    clock.now += 2  # within the gap: no run, but hits from the edited file are flagged stale
    assert auto.on_call("search") is None
    answer = engine.search(SearchRequest("WIDGET_3_QUOTA"))
    assert engine._reporter.changed_among(h.file_path for h in answer.results) == {"widget-0003.md": "modified"}
    assert answer.results[0].file_path == "widget-0003.md" and answer.results[0].stale == "modified"
    assert all(h.stale is None for h in answer.results[1:])
    assert "marked stale" in answer.message and "re-indexed automatically" in answer.message
    assert "re-indexed automatically" in engine.status().message
    clock.now += 10
    assert auto.on_call("search") == "changed"  # waited for the refresh
    assert paths_of(engine.search(SearchRequest("GADGET_3_BUDGET")))[0] == "widget-0003.md"
    assert "widget-0003.md" not in paths_of(engine.search(SearchRequest("WIDGET_3_QUOTA")))
    assert auto.last_report.updated == 1 and auto.last_report.added == 0
    assert engine.status().changed_files == ()


def test_deleted_file_disappears_and_new_file_appears_after_a_walk(tmp_path, server_engine, scheduler):
    root = tmp_path / "docs"
    write_docs(root, 10)
    engine = server_engine(root, "none")
    clock = FakeClock()
    auto = scheduler(engine, min_gap=10, probe_ttl=3, walk_interval=300, clock=clock)
    auto.on_call("search")
    assert auto.wait(30)
    (root / "widget-0004.md").unlink()
    write_docs(root, 1, start=50)  # a new file: no stat probe can see it, only a walk
    clock.now += 11
    assert auto.on_call("search") == "changed"
    assert auto.wait(30)
    assert "widget-0004.md" not in paths_of(engine.search(SearchRequest("WIDGET_4_QUOTA")))
    with pytest.raises(DocumentNotFoundError):
        engine.read("widget-0004.md", "Widget 4 > Limits")
    # the run caused by the deletion walked the tree, so the new file is in too
    assert paths_of(engine.search(SearchRequest("WIDGET_50_QUOTA"))) == ["widget-0050.md"]
    write_docs(root, 1, start=60)
    clock.now += 20
    assert auto.on_call("search") is None, "nothing changed among indexed files and no walk is due"
    assert engine.search(SearchRequest("WIDGET_60_QUOTA")).results == ()
    clock.now += 300
    assert auto.on_call("list_documents") == "walk"
    assert auto.wait(30)
    assert paths_of(engine.search(SearchRequest("WIDGET_60_QUOTA"))) == ["widget-0060.md"]
    assert engine.status().coverage == "verified"


def test_shutdown_stops_between_documents_and_the_next_run_resumes(tmp_path, server_engine, monkeypatch):
    root = tmp_path / "docs"
    write_docs(root, 200)
    slow_writes(monkeypatch, 0.01)
    db = tmp_path / "resume.db"
    engine = server_engine(root, "none", db=db)
    auto = engine._scheduler
    auto.on_call("search")
    deadline = time.monotonic() + 20
    while engine.status().counts.documents < 20 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert auto.shutdown(timeout=30)
    # a run stops between two documents: interrupted with most of the 200 (10 ms each) unwritten,
    # not a wall-clock bound (a loaded machine stretches any duration)
    assert auto.last_report.interrupted
    assert auto.on_call("search") is None, "no new run after shutdown"
    partial = engine.status()
    assert 20 <= partial.counts.documents < 200, "the run went on to the end"
    assert partial.coverage == "unknown" and partial.indexing is False
    # a new process (new engine, same database) resumes: only the rest is parsed
    monkeypatch.undo()
    engine2 = server_engine(root, "none", db=db)
    auto2 = engine2._scheduler
    auto2.on_call("search")
    assert auto2.wait(30)
    report = auto2.last_report
    assert report.added == 200 - partial.counts.documents and report.unchanged == partial.counts.documents
    assert engine2.status().counts.documents == 200 and engine2.status().coverage == "verified"


def test_auto_index_off_never_runs_and_tells_the_agent_to_index(tmp_path, server_engine, monkeypatch):
    root = tmp_path / "docs"
    write_docs(root, 5)
    monkeypatch.setenv("MARKDOWN_MEMORY_AUTO_INDEX", "0")
    engine = server_engine(root, "none")
    assert engine.settings.auto_index is False
    auto = engine._scheduler
    assert auto.on_call("search") is None and not auto.running
    status = engine.status()
    assert status.counts.documents == 0 and status.indexing is False
    assert "index_directory" in status.message
    engine.index()
    (root / "widget-0001.md").write_text("# Widget 1\n\nrewritten\n", encoding="utf-8")
    assert auto.on_call("search") is None
    assert "index_directory" in engine.status().message
    assert engine._reporter.changed_among(["widget-0001.md", "widget-0002.md"]) == {"widget-0001.md": "modified"}
    # flagged, though nothing re-indexes it
    flagged = engine.search(SearchRequest("WIDGET_1_QUOTA"))
    assert flagged.results[0].file_path == "widget-0001.md" and flagged.results[0].stale == "modified"
    assert "index_directory" in flagged.message and "re-indexed automatically" not in flagged.message
    current = engine.search(SearchRequest("WIDGET_2_QUOTA")).results[0]
    assert current.file_path == "widget-0002.md" and current.stale is None


def test_case_019_no_manual_reindex_between_change_and_query(tmp_path, server_engine, scheduler):
    """Case 019 part A through the engine + BackgroundIndexer the server uses: after delete, rename
    and edit, the next search answers from the refreshed index with no explicit index call."""
    root = tmp_path / "notes"
    shutil.copytree(CASES / "019-stale-index-delete-rename-edit" / "notes", root)
    engine = server_engine(root, "minilm")
    auto = scheduler(engine, min_gap=0, probe_ttl=0, refresh_wait=30)
    auto.on_call("search")
    assert auto.wait(60)
    for token, path in (("ghosttoken777", "alpha.md"), ("renametoken42", "beta.md"), ("oldphrase-kiwi", "gamma.md")):
        assert paths_of(engine.search(SearchRequest(token)))[0] == path

    def step(name: str) -> None:
        subprocess.run(["bash", str(CASES / "019-stale-index-delete-rename-edit" / "scenario.sh"), str(root), name],
                       check=True, timeout=30)

    step("delete")
    assert auto.on_call("search") == "changed"
    assert "alpha.md" not in paths_of(engine.search(SearchRequest("ghosttoken777")))
    with pytest.raises(DocumentNotFoundError):
        engine.read("alpha.md", "Alpha Notes > Ghost Check")
    step("rename")
    assert auto.on_call("search") == "changed"
    renamed = paths_of(engine.search(SearchRequest("renametoken42")))
    assert renamed[0] == "archive/beta-renamed.md" and "beta.md" not in renamed
    step("edit")
    assert auto.on_call("search") == "changed"
    assert paths_of(engine.search(SearchRequest("newphrase-mango")))[0] == "gamma.md"
    old = engine.search(SearchRequest("oldphrase-kiwi"))  # only weak vector neighbours may remain: never the old text
    assert old.confidence == "none" and not any("oldphrase-kiwi" in (h.content or "") for h in old.results)
    assert not any(h.file_path == "gamma.md" and "keyword" in h.matched_by for h in old.results)
