"""Ranking mechanisms a user notices on small purpose-written docs: other word forms of a query
word match (``depend`` finds "Dependencies"), a changelog entry does not outrank the section
that documents an identifier, and a parent section is returned beside its better-ranked child."""

from __future__ import annotations

import pytest

from conftest import indexed_engine, top
from markdown_memory.models import SearchRequest
from markdown_memory.search.query import analyse, stem_prefix

DOCS = {
    "install.md": """# Installation

## Dependencies

Some programs are needed on the machine first: bash 4, column, awk.

## Upgrading

Run the installer again; the tool keeps the programs already present. Upgrading over the
weekend is fine.
""",
    "commands.md": """# Commands

## sync

Copies programs and their settings between machines. Commands run one after another.

## prune

Removes programs that no command uses any more.
""",
    "config.md": """# Configuration

## Retry settings

The `retry.backoff_ms` key sets how long to wait between two attempts, in milliseconds.

## Colours

Each tag gets a colour picked from its name; set `color` in the tag's front matter to pick one.

### Disabling automatic colours

Set `autoColor: false` to keep every tag grey, automatic colours disabled.
""",
    "CHANGELOG.md": """# Changelog

## 2.3.0 (2026-01-10)

* Added `retry.backoff_ms`, replacing `retry.backoff`; `retry.backoff_ms` is read from the config.
* `retry.backoff_ms` now accepts zero.

## 2.2.0 (2025-11-02)

* Faster sync for large programs.
""",
}


@pytest.fixture(scope="module", params=["none", "minilm"])
def engine(request, tmp_path_factory, minilm):
    root = tmp_path_factory.mktemp(f"forms-{request.param}") / "docs"
    root.mkdir()
    for name, text in DOCS.items():
        (root / name).write_text(text, encoding="utf-8")
    eng = indexed_engine(root, request.param, minilm)
    yield eng
    eng.close()


def test_stem_prefix_reaches_other_forms():
    assert stem_prefix("dependencies") == "depend"
    assert stem_prefix("dependency") == "depend"
    assert stem_prefix("depend") == "depend"
    assert stem_prefix("exactly") == "exact"
    assert stem_prefix("colours") == "colour"
    assert stem_prefix("tag") is None  # too short to cut safely
    assert stem_prefix("max_retry") is None  # identifiers stay exact
    terms = analyse("--dry-run os.path.join").terms
    assert not any(t.prefix for t in terms)


def test_another_form_of_a_query_word_finds_the_section(engine):
    # "depend" never occurs in the docs; "Dependencies" does, in a heading.
    answer = engine.search(SearchRequest("which programs does it depend on"))
    got = [(r.file_path, r.heading_path) for r in answer.results]
    # Keyword-only it is first; with vectors of five tiny sections RRF ranks are close, top 2.
    assert ("install.md", "Installation > Dependencies") in got[: 1 if answer.keyword_only else 2]


def test_documenting_section_beats_changelog_mentions(engine):
    answer = engine.search(SearchRequest("retry.backoff_ms"))
    assert top(answer) == ("config.md", "Configuration > Retry settings")
    assert answer.results[1].file_path == "CHANGELOG.md"  # still listed, just not first


def test_changelog_wins_when_the_question_is_about_changes(engine):
    answer = engine.search(SearchRequest("which release added retry.backoff_ms"))
    assert top(answer) == ("CHANGELOG.md", "Changelog > 2.3.0 (2026-01-10)")


def test_parent_is_returned_beside_its_child(engine):
    answer = engine.search(SearchRequest("automatic colours disabled for a tag colour"))
    got = {(r.file_path, r.heading_path): r.content is not None for r in answer.results}
    parent = ("config.md", "Configuration > Colours")
    child = ("config.md", "Configuration > Colours > Disabling automatic colours")
    assert parent in got and child in got  # both found, and their texts are disjoint, so ...
    assert got[parent] and got[child]  # ... both carry them (issue 14: an intro hid its child)


def test_proper_names_skip_sentence_starts():
    from markdown_memory.search.query import proper_names

    assert proper_names("How do I open it in VS Code?") == ["VS Code"]
    assert proper_names("Large SSDs show phantom partitions") == []
    assert proper_names("If I set it. Which CI Runner runs it?") == ["CI Runner"]


def test_a_product_the_docs_never_mention_is_not_answered(engine):
    answer = engine.search(SearchRequest("how do I set retry backoff in Acme Cloud Gateway"))
    assert answer.confidence == "none"
    assert "'Cloud Gateway'" in answer.message or "'Acme Cloud Gateway'" in answer.message


def test_a_name_the_docs_mention_is_answered(engine):
    (engine.root / "gateway.md").write_text("# Acme Cloud Gateway\n\nSet retry backoff in the gateway file.\n",
                                           encoding="utf-8")
    try:
        engine.index()
        answer = engine.search(SearchRequest("how do I set retry backoff in Acme Cloud Gateway"))
        assert answer.confidence != "none"
        assert top(answer) == ("gateway.md", "Acme Cloud Gateway")
    finally:
        (engine.root / "gateway.md").unlink()
        engine.index()


def test_one_stray_word_is_not_a_confident_answer(engine):
    # "weekend" occurs once in the docs; "snowfall" nowhere: a hit on one word of two is stray.
    # (issue 34: the label is read from the calibrated p_answer; on this eight-section corpus a
    # stray word may be "low", never "high", and always far less likely than a real answer)
    answer = engine.search(SearchRequest("snowfall weekend"))
    assert answer.confidence != "high"
    assert answer.p_answer < engine.search(SearchRequest("automatic colours disabled for a tag colour")).p_answer


def test_identical_sections_in_several_files_are_returned_once(tmp_path, make_engine):
    block = "## Copy options\n\nUse `--checksum` to compare files by hash instead of size and time.\n"
    root = tmp_path / "docs"
    root.mkdir()
    for name in ("copy", "move", "sync"):
        (root / f"{name}.md").write_text(f"# {name}\n\nThe {name} command.\n\n{block}", encoding="utf-8")
    (root / "hash.md").write_text("# Hashes\n\nWhich hash each backend supports for comparing files.\n",
                                  encoding="utf-8")
    engine = make_engine(root, "none")
    engine.index()
    results = engine.search(SearchRequest("compare files by hash", top_k=5)).results
    texts = [r.content for r in results if r.content is not None and "--checksum" in r.content]
    assert len(texts) == 1, [r.file_path for r in results]
    assert any(r.file_path == "hash.md" for r in results)  # the slot goes to another section
