"""A search answer's notes are typed values collected by the ANNOTATORS table
(``answer_notes.py``) and worded for an explicit reader (``messages.render_notes`` with a
``reader.Reader``): the same facts give the same sentences to every reader but the program and
folder they name."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from markdown_memory import messages
from markdown_memory.answer_notes import ANNOTATORS, SearchFacts, annotate
from markdown_memory.models import IndexCounts, IndexStatus
from markdown_memory.models.notes import (
    BusyElsewhere,
    NoConfidentMatch,
    PartlyKeywordOnly,
    QueryCut,
    Said,
    StaleHits,
)
from markdown_memory.reader import Reader


def _status(pending: int = 0, indexing: bool = False) -> IndexStatus:
    counts = IndexCounts(documents=3, sections=9, passages=20, vectors=20 - pending, pending_vectors=pending)
    return IndexStatus(root="/docs", database="/db", counts=counts, embedder=None, keyword_only=False,
                       indexing=indexing, progress=None, coverage="verified", changed_files=(), failures=(),
                       last_run=None, moved_aside=None, message=None)


QUIET = SearchFacts(query_length=10, query_limit=100, flagged=0, keyword_only=False, status=_status(),
                    indexed_here=True, background=False, disk_full=None)

# (what changes in the facts, the one note it adds)
CASES = [
    ({"disk_full": "disk full: free space at /x"}, Said("disk full: free space at /x")),
    ({"indexed_here": False}, BusyElsewhere(3, 20)),
    ({"status": _status(indexing=True)}, BusyElsewhere(3, 20)),
    ({"status": _status(pending=5)}, PartlyKeywordOnly(5, 20)),
    ({"flagged": 2}, StaleHits(2)),
    ({"query_length": 101}, QueryCut(101, 100)),
]


def test_quiet_facts_give_no_note_and_no_message() -> None:
    assert annotate(QUIET) == ()
    assert messages.render_notes(messages.Context(Path("/docs"), "minilm", False), ()) is None


@pytest.mark.parametrize(("change", "note"), CASES)
def test_each_fact_gives_its_note(change: dict, note: object) -> None:
    assert annotate(replace(QUIET, **change)) == (note,)


def test_a_background_engine_leaves_busy_and_disk_full_to_index_status() -> None:
    facts = replace(QUIET, background=True, indexed_here=False, disk_full="disk full: free space at /x")
    assert annotate(facts) == ()


def test_notes_follow_the_table_order_then_the_ranking_s_own() -> None:
    everything = QUIET
    for change, _note in CASES[1:]:
        everything = replace(everything, **change)
    everything = replace(everything, status=_status(pending=5, indexing=True), disk_full="full")
    ranked = (NoConfidentMatch(("zzq",)),)
    notes = annotate(everything, ranked)
    assert [type(n) for n in notes] == [Said, BusyElsewhere, PartlyKeywordOnly, StaleHits, QueryCut, NoConfidentMatch]
    assert [a.name for a in ANNOTATORS] == ["disk_full", "busy_elsewhere", "partly_keyword_only", "stale_hits",
                                             "query_cut"]
    ctx = messages.Context(Path("/docs"), "minilm", False)
    text = messages.render_notes(ctx, notes)
    assert text is not None and text.split("; ")[0] == "full" and "no document mentions 'zzq'" in text


def test_every_note_type_has_a_sentence() -> None:
    from markdown_memory.models import notes

    declared = {t for t in vars(notes).values() if isinstance(t, type) and t.__module__ == notes.__name__}
    assert declared == set(messages.NOTE_SENTENCES)


def test_the_reader_is_a_value_the_sentences_name(tmp_path: Path) -> None:
    """The service words a CLI client's answer with the client's program and folder: passed as a
    value, not set in the thread."""
    from markdown_memory.config import DEFAULT_EMBEDDER

    root = tmp_path / "docs"
    ctx = messages.Context(root, DEFAULT_EMBEDDER, False)
    elsewhere = ctx.for_reader(Reader("/opt/venv/bin/markdown-memory", tmp_path, agent=False))
    inside = ctx.for_reader(Reader("mm", root, agent=False))
    agent = ctx.for_reader(Reader("mm", root, agent=True))
    assert messages.render_notes(elsewhere, (StaleHits(1),)).endswith(
        f"run `/opt/venv/bin/markdown-memory index {root}` to refresh the index "
        "(`/opt/venv/bin/markdown-memory read` reads a file's current text)")
    assert "run `mm index` to refresh" in messages.render_notes(inside, (StaleHits(1),))  # the root is its folder
    assert "call index_directory" in messages.render_notes(agent, (StaleHits(1),))
    assert "read_section reads" in messages.render_notes(agent, (StaleHits(1),))


CLIENT = "/x/bin/markdown-memory"  # a client's command that is not on PATH (a checkout's .venv)


def test_an_error_raised_in_the_service_names_its_client_s_command() -> None:
    """An error made deep down (the model's files checked) names the command of whoever reads
    it: the service words its client's failure with the client's program, not its own."""
    from markdown_memory.errors import ModelNotInstalledError
    from markdown_memory.reader import ProgramSentence, program
    from markdown_memory.search_text import error_facts

    exc = ModelNotInstalledError(ProgramSentence(lambda name: f"the model is not installed; run `{name} --download-model`"))
    payload, sentence, status = error_facts(exc, CLIENT)
    assert sentence == f"error: the model is not installed; run `{CLIENT} --download-model`" and status == 2
    assert payload == {"error": {"message": sentence.removeprefix("error: "), "type": "model_not_installed"}}
    assert error_facts(exc)[1] == f"error: the model is not installed; run `{program()} --download-model`"


def test_a_missing_model_in_the_answer_names_the_reader_s_command(tmp_path: Path) -> None:
    """The model's load failed in the engine's process (the service's, shared by its clients):
    the answer's ``embedder.error`` names the command of the reader the search was made for."""
    import shutil

    from markdown_memory.config import Settings
    from markdown_memory.embed import gemma
    from markdown_memory.engine import Engine
    from markdown_memory.models import SearchRequest

    if gemma.problem() is None:
        pytest.skip("embeddinggemma is installed here: its load does not fail")
    root = tmp_path / "docs"
    shutil.copytree(Path(__file__).parent / "fixtures" / "guide", root)
    engine = Engine(Settings.load(root, tmp_path / "i.db", "embeddinggemma"))
    try:
        engine.index()
        answer = engine.search(SearchRequest("timeout"), reader=Reader(CLIENT, root)).to_dict()
    finally:
        engine.close()
    error = answer["index_status"]["embedder"]["error"]
    assert f"`{CLIENT} --download-model`" in error, error


def test_why_the_engine_chose_its_model_names_the_reader_s_command(tmp_path: Path, monkeypatch) -> None:
    """The engine chose MiniLM because the default model is missing (said once, when the engine
    is made: the service's serves every client): the answer's reason names the reader's command."""
    from markdown_memory.config import Settings
    from markdown_memory.embed import gemma
    from markdown_memory.engine import Engine
    from markdown_memory.models import SearchRequest

    if gemma.problem() is None:
        pytest.skip("embeddinggemma is installed here: nothing else is chosen")
    monkeypatch.delenv("MARKDOWN_MEMORY_EMBEDDER", raising=False)
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# Timeouts\n\nThe client waits 30 seconds.\n", encoding="utf-8")
    engine = Engine(Settings.load(root, tmp_path / "i.db", None))
    try:
        chosen = engine.search(SearchRequest("timeout"), reader=Reader(CLIENT, root)).to_dict()["index_status"]["embedder"]
    finally:
        engine.close()
    if chosen["name"] != "minilm":
        pytest.skip("MiniLM is not installed here: the default is kept")
    assert f"`{CLIENT} --download-model`" in chosen["chosen"], chosen
