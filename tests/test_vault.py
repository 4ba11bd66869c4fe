"""Notes vaults (issue 16, front matter part): tags, aliases, description and dates from front
matter and inline ``#tags``; a note found by any of its names; search filters (tags, block kind,
code language) applied before ranking, through the CLI, the MCP runtime and the engine."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import EVAL_CORPUS, FIXTURES, require_eval_corpus
from markdown_memory.config import Settings
from markdown_memory.engine import Engine
from markdown_memory.mcp.runtime import Runtime
from markdown_memory.models import SearchRequest

VAULT = FIXTURES / "vault"
BASH_FAMILY = {"bash", "sh", "shell", "zsh", "console", "shell-session", "shellsession", "terminal"}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(VAULT, root)
    return root


def _cli_json(cli_main, *args: str, env: dict[str, str | None]) -> dict:
    result = cli_main(*args, "--json", env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _env(tmp_path: Path, embedder: str = "none") -> dict[str, str | None]:
    return {"MARKDOWN_MEMORY_DB": str(tmp_path / "cli.db"), "MARKDOWN_MEMORY_EMBEDDER": embedder}


def _passage_fence(root: Path, hit) -> str:
    """The language word of the fence opening just above a hit's passage ("" when none)."""
    lines = (root / hit.file_path).read_text(encoding="utf-8").split("\n")
    opening = lines[hit.passage_lines[0] - 2].strip()
    return opening[3:].split()[0].lower() if opening.startswith("```") and len(opening) > 3 else ""


def _fence_langs(content: str) -> set[str]:
    return {line.strip()[3:].split()[0].lower() for line in content.split("\n")
            if line.strip().startswith("```") and len(line.strip()) > 3}


# -- front matter and inline tags ------------------------------------------------------------
def test_list_documents_shows_front_matter_and_inline_tags(cli_main, vault: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    assert cli_main("index", str(vault), env=env).returncode == 0
    result = cli_main("list", "--docs-dir", str(vault), "--json", env=env)
    tags = {d["path"]: d["tags"] for d in json.loads(result.stdout)["documents"]}
    assert tags["projects/alpha.md"] == ["project/alpha", "status/active"]  # YAML list
    assert tags["projects/beta.md"] == ["project/beta", "status/paused", "meeting"]  # string + inline
    assert tags["recipes.md"] == ["kitchen", "baking"]  # space-separated string, leading '#' dropped
    # inline: not the code span, fenced lines, '#123', 'C#', '(#deploy)' or 'http://…/#fragment'
    assert tags["daily/2024-05-01.md"] == ["journal", "project/alpha", "Follow-Up"]


def test_case_023_invalid_yaml_still_indexes_with_inline_tags(cli_main, vault: Path, tmp_path: Path) -> None:
    """Invalid YAML front matter stays a warning (case 023): the document is indexed, its
    front-matter tags are unknown, its inline tag counts."""
    env = _env(tmp_path)
    report = json.loads(cli_main("index", str(vault), "--json", env=env).stdout)
    assert any(w["path"] == "broken.md" and "invalid YAML" in w["message"] for w in report["warnings"])
    docs = json.loads(cli_main("list", "--docs-dir", str(vault), "--json", env=env).stdout)["documents"]
    assert [d["tags"] for d in docs if d["path"] == "broken.md"] == [["still-found"]]


def test_outline_shows_aliases_tags_description_and_dates(cli_main, vault: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    cli_main("index", str(vault), env=env)
    outline = json.loads(cli_main("outline", "projects/alpha.md", "--docs-dir", str(vault), "--json", env=env).stdout)
    assert outline["aliases"] == ["Project A", "Skyhook"]
    assert outline["tags"] == ["project/alpha", "status/active"]
    assert outline["description"].startswith("Plan and runbook")
    assert (outline["date"], outline["updated"]) == ("2024-03-01", "2024-04-15")
    beta = json.loads(cli_main("outline", "projects/beta.md", "--docs-dir", str(vault), "--json", env=env).stdout)
    assert beta["aliases"] == ["Beta", "Project B"] and beta["date"] is None
    text = cli_main("outline", "projects/alpha.md", "--docs-dir", str(vault), env=env).stdout
    assert "aliases: Project A, Skyhook" in text and "tags: #project/alpha #status/active" in text


# -- names ----------------------------------------------------------------------------------
@pytest.mark.parametrize("query, path", [("Skyhook", "projects/alpha.md"), ("project b", "projects/beta.md"),
                                         ("Bread Book", "recipes.md"), ("Alpha project", "projects/alpha.md")])
def test_alias_or_title_query_ranks_the_note_first(make_engine, vault: Path, query: str, path: str) -> None:
    engine = make_engine(vault)
    engine.index()
    answer = engine.search(SearchRequest(query))
    first = answer.results[0]
    assert (first.file_path, first.heading_path) == (path, engine.outline(path).headings[0].heading_path)
    assert answer.confidence != "none"


def test_alias_words_are_keyword_text(cli_main, vault: Path, tmp_path: Path) -> None:
    """Keyword-only, a word only an alias holds ('Skyhook', in a query that is not a name) finds the note."""
    env = _env(tmp_path)
    cli_main("index", str(vault), env=env)
    answer = _cli_json(cli_main, "search", "skyhook schedule", "--docs-dir", str(vault), env=env)
    assert answer["results"][0]["file_path"] == "projects/alpha.md"


# -- filters --------------------------------------------------------------------------------
def test_tag_filter_any_all_and_nested(cli_main, vault: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    cli_main("index", str(vault), env=env)
    base = ("search", "widget service", "--docs-dir", str(vault), "--top-k", "20")
    nested = _cli_json(cli_main, *base, "--tag", "project", env=env)  # 'project' matches project/alpha, /beta
    assert {h["file_path"] for h in nested["results"]} == {"projects/alpha.md", "projects/beta.md", "daily/2024-05-01.md"}
    both = _cli_json(cli_main, *base, "--tag", "project/alpha", "--tag", "#status/active", "--tags-mode", "all", env=env)
    assert {h["file_path"] for h in both["results"]} == {"projects/alpha.md"}
    either = _cli_json(cli_main, *base, "--tag", "KITCHEN", "--tag", "meeting", env=env)  # case-insensitive
    assert {h["file_path"] for h in either["results"]} <= {"recipes.md", "projects/beta.md"}
    assert "projects/beta.md" in {h["file_path"] for h in either["results"]}


def test_kind_code_lang_bash_returns_only_bash_code(make_engine, vault: Path) -> None:
    engine = make_engine(vault)
    engine.index()
    answer = engine.search(SearchRequest("restart the service", kind="code", lang="bash", top_k=10))
    assert answer.results
    for hit in answer.results:  # the passage shown is a shell block (never alpha's python one)
        assert _passage_fence(vault, hit) in BASH_FAMILY, hit.heading_path
    assert "projects/beta.md" in {h.file_path for h in answer.results}  # ```sh counts as bash
    python = engine.search(SearchRequest("kubectl rollout", lang="python"))
    assert [h.file_path for h in python.results] == ["projects/alpha.md"]
    assert python.results[0].preview.startswith("import subprocess")
    tables = engine.search(SearchRequest("who owns the backend", kind="table"))
    assert [h.heading_path for h in tables.results] == ["Alpha project > Owners"]


@pytest.mark.parametrize("flags, named", [
    (("--tag", "nothere"), "filter tags matched nothing"),
    (("--lang", "cobol"), "filter lang matched nothing"),
    (("--tag", "kitchen", "--kind", "table"), "match nothing together"),
])
def test_filter_matching_nothing_is_an_empty_answer_naming_it(cli_main, vault: Path, tmp_path: Path,
                                                             flags: tuple[str, ...], named: str) -> None:
    env = _env(tmp_path)
    cli_main("index", str(vault), env=env)
    answer = _cli_json(cli_main, "search", "widget", "--docs-dir", str(vault), *flags, env=env)
    assert answer["results"] == [] and named in answer["message"]
    text = cli_main("search", "widget", "--docs-dir", str(vault), *flags, env=env)
    assert text.returncode == 0 and "no results" in text.stdout and named in text.stdout


def test_list_documents_by_tag(cli_main, vault: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    cli_main("index", str(vault), env=env)
    docs = _cli_json(cli_main, "list", "--docs-dir", str(vault), "--tag", "status", env=env)
    assert [d["path"] for d in docs["documents"]] == ["projects/alpha.md", "projects/beta.md"]
    assert docs["total"] == 2
    none = _cli_json(cli_main, "list", "--docs-dir", str(vault), "--tag", "nothere", env=env)
    assert none["documents"] == [] and "filter tags matched nothing" in none["message"]


def test_filters_apply_before_ranking_not_to_the_top_list(make_engine, tmp_path: Path) -> None:
    """Forty notes about the query outrank the one tagged note by far; the tag filter still
    returns it (keyword and vector side), so it was applied before ranking, not to a top 20."""
    root = tmp_path / "many"
    root.mkdir()
    for i in range(40):
        (root / f"n{i:02}.md").write_text(f"# Cache eviction {i}\n\nCache eviction policy for the cache eviction "
                                          f"worker: evict the cache when it is full ({i}).\n")
    (root / "tagged.md").write_text("---\ntags: [rare]\n---\n# Garden\n\nWater the tomatoes; a cache of seeds "
                                    "is kept in the shed.\n\n```bash\necho seeds\n```\n")
    engines = [make_engine(root), make_engine(root, "none")]
    for engine in engines:
        engine.index()
    for search in (e.search for e in engines):
        answer = search(SearchRequest("cache eviction policy", tags=("rare",), top_k=3))
        assert [h.file_path for h in answer.results] == ["tagged.md"]
        code = search(SearchRequest("cache eviction policy", lang="bash", top_k=3))
        assert [h.file_path for h in code.results] == ["tagged.md"]


def test_knn_allowed_set_masks_every_path(make_engine, vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``vectors.knn`` with an allowed set returns only those passages, through the in-memory
    matrix, vec0's ``rowid IN`` and (a sqlite-vec refusing it) vectors read by rowid, alike."""
    from markdown_memory.store import VectorCache, knn, vectors

    engine = make_engine(vault)
    engine.index()
    store = engine.store
    every = store.allowed_passages("projects")
    assert every is not None and len(every)
    allowed = every[::2]
    qvec = np.asarray(engine._loader.for_search().embed_query("deploy the widget"), dtype=np.float32)
    answers = []
    for cache in (None, VectorCache(), "no rowid IN"):
        if cache == "no rowid IN":
            monkeypatch.setattr(vectors, "_vec0_knn_among", lambda *_a: None)
        rows = knn(store, qvec, 50, None if isinstance(cache, str) else cache, allowed)
        assert {pid for pid, _d in rows} == set(int(i) for i in allowed)
        assert [d for _p, d in rows] == sorted(d for _p, d in rows)
        answers.append([pid for pid, _d in rows])
    assert answers[0] == answers[1] == answers[2]
    assert knn(store, qvec, 5, None, np.asarray([], dtype=np.int64)) == []


# -- MCP ------------------------------------------------------------------------------------
def _call(runtime: Runtime, tool: str, fn) -> tuple[bool, dict]:
    result = anyio.run(runtime.call, tool, fn)
    return bool(result.is_error), json.loads(result.content[0].text)


def test_mcp_search_docs_and_list_documents_take_filters(vault: Path, tmp_path: Path) -> None:
    from markdown_memory.mcp.tools import tool_set

    runtime = Runtime(Settings.load(vault, tmp_path / "mcp.db", "none"))
    try:
        runtime.engine.index()
        _app, tools = tool_set(runtime)
        props = tools["search_docs"].parameters["properties"]
        assert {"tags", "tags_mode", "kind", "lang"} <= set(props)
        assert "list_documents" in tools and "tags" in tools["list_documents"].parameters["properties"]
        error, body = _call(runtime, "search_docs", lambda: runtime.search_docs(
            SearchRequest("restart", kind="code", lang="sh")))
        assert not error and body["results"]
        assert all(_fence_langs(h["content"]) & BASH_FAMILY for h in body["results"])
        error, body = _call(runtime, "search_docs", lambda: runtime.search_docs(SearchRequest("widget", tags=["nope"])))
        assert not error and body["results"] == [] and "filter tags matched nothing" in body["message"]
        assert "list_documents" in body["message"]  # the agent is told its own tool
        error, body = _call(runtime, "search_docs", lambda: runtime.search_docs(SearchRequest("widget", kind="chart")))
        assert error and "kind 'chart' is not one of" in body["error"]
        error, body = _call(runtime, "list_documents", lambda: runtime.answer("list_documents", {"directory": None, "offset": 0, "tags": ["project/alpha"]}))
        assert not error and [d["path"] for d in body["documents"]] == ["daily/2024-05-01.md", "projects/alpha.md"]
    finally:
        runtime.shutdown()


# -- property: a tag filter never returns an untagged document --------------------------------
_POOL = ["a", "a/b", "a/c", "b", "b/x/y", "c"]


@pytest.fixture(scope="module")
def tagged_engine(tmp_path_factory: pytest.TempPathFactory):
    import random

    rnd = random.Random(16)
    root = tmp_path_factory.mktemp("tagged") / "docs"
    root.mkdir()
    carried: dict[str, set[str]] = {}
    for i in range(24):
        tags = set(rnd.sample(_POOL, rnd.randint(0, 3)))
        inline = {t for t in tags if rnd.random() < 0.4}
        front = tags - inline
        fm = f"---\ntags: [{', '.join(sorted(front))}]\n---\n" if front else ""
        body = " ".join(f"#{t}" for t in sorted(inline))
        (root / f"d{i:02}.md").write_text(f"{fm}# Note {i}\n\nShared words about lanterns. {body}\n")
        carried[f"d{i:02}.md"] = tags
    engine = Engine(Settings.load(root, root.parent / "index.db", "none"))
    engine.index()
    yield engine, carried
    engine.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(wanted=st.lists(st.sampled_from(["a", "a/b", "b", "b/x", "c", "a/c"]), min_size=1, max_size=3, unique=True),
       mode=st.sampled_from(["any", "all"]))
def test_tag_filter_results_are_documents_carrying_the_tags(tagged_engine, wanted: list[str], mode: str) -> None:
    engine, carried = tagged_engine

    def has(doc: str, tag: str) -> bool:
        return any(t == tag or t.startswith(tag + "/") for t in carried[doc])

    expected = {d for d in carried if (all if mode == "all" else any)(has(d, t) for t in wanted)}
    answer = engine.search(SearchRequest("lanterns", tags=wanted, tags_mode=mode, top_k=20))
    got = {h.file_path for h in answer.results}
    assert got <= expected
    assert bool(got) == bool(expected)
    if mode == "any":
        listed = engine.list_documents(tags=wanted)
        assert {d.path for d in listed.documents} == expected


# -- the dendron vault of the shared eval corpus ---------------------------------------------
@pytest.fixture(scope="module")
def dendron(tmp_path_factory: pytest.TempPathFactory, minilm):
    require_eval_corpus()
    root = EVAL_CORPUS / "dendron"
    engine = Engine(Settings.load(root, tmp_path_factory.mktemp("dendron") / "index.db", "minilm"), embedder=minilm)
    engine.index()
    yield engine
    engine.close()


@pytest.mark.slow
def test_dendron_tag_filter_and_dotted_nesting(dendron) -> None:
    vault = EVAL_CORPUS / "dendron" / "vault"
    seeds = {f"vault/{p.name}" for p in vault.glob("*.md") if "stage.seed" in p.read_text(encoding="utf-8")}
    answer = dendron.search(SearchRequest("how does this feature work", tags=["stage"], top_k=20))
    assert answer.results and {h.file_path for h in answer.results} <= seeds | {
        f"vault/{p.name}" for p in vault.glob("*.md") if "stage." in p.read_text(encoding="utf-8")}
    listed = {d.path for d in dendron.list_documents(tags=["stage.seed"]).documents}
    assert listed and listed <= seeds


@pytest.mark.slow
def test_dendron_title_query_ranks_the_note_first(dendron) -> None:
    answer = dendron.search(SearchRequest("Cheatsheet"))
    assert answer.results[0].file_path == "vault/dendron.cheatsheet.md"


@pytest.mark.slow
def test_dendron_bash_code_filter_and_no_match(dendron) -> None:
    answer = dendron.search(SearchRequest("install the dendron cli", kind="code", lang="bash", top_k=10))
    assert answer.results
    assert all(_passage_fence(EVAL_CORPUS / "dendron", h) in BASH_FAMILY for h in answer.results)
    empty = dendron.search(SearchRequest("install the dendron cli", lang="cobol"))
    assert empty.results == () and "filter lang matched nothing" in (empty.message or "")


def test_schema_v3_index_migrates_and_gets_tags_on_the_next_run(vault: Path, tmp_path: Path) -> None:
    """An index written before the vault tables (schema 3, parser 4) opens, gains
    ``passages.lang`` and the vault tables, and the next run re-parses every file, so tag and
    language filters work on it without deleting the index."""
    import sqlite3

    db = tmp_path / "old.db"
    engine = Engine(Settings.load(vault, db, "none"))
    engine.index()
    engine.close()
    raw = sqlite3.connect(db)
    raw.execute("DROP TABLE tags")
    raw.execute("DROP TABLE doc_names")
    raw.execute("ALTER TABLE passages DROP COLUMN lang")
    raw.execute("UPDATE meta SET value = '4' WHERE key = 'parser_version'")
    raw.execute("PRAGMA user_version = 3")
    raw.commit()
    raw.close()
    engine = Engine(Settings.load(vault, db, "none"))
    try:
        engine.index()
        assert [h.file_path for h in engine.search(SearchRequest("kubectl rollout", lang="python")).results] == ["projects/alpha.md"]
        assert {d.path for d in engine.list_documents(tags=["kitchen"]).documents} == {"recipes.md"}
    finally:
        engine.close()


def test_toml_front_matter_gives_title_tags_and_date(tmp_path, cli_main) -> None:
    """Trial finding: Hugo/Zola TOML front matter (`+++ … +++`) was not read: it became a
    (preamble) section and the title and tags were lost. Invalid TOML is front matter with a
    warning, as invalid YAML is."""
    root = tmp_path / "site"
    root.mkdir()
    (root / "hugo.md").write_text('+++\ntitle = "Hugo Page"\ntags = ["alpha", "beta"]\ndate = 2024-01-02\n+++\n\n'
                                  "Intro text here.\n\n## Usage\n\nUse it.\n", encoding="utf-8")
    (root / "bad.md").write_text('+++\ntitle = "Unclosed\n+++\n\n# Body\n\ntext\n', encoding="utf-8")
    env: dict[str, str | None] = {"MARKDOWN_MEMORY_EMBEDDER": "none", "MARKDOWN_MEMORY_DB": str(tmp_path / "i.db")}
    run = cli_main("index", str(root), env=env)
    assert run.returncode == 0 and "bad.md: invalid TOML front matter" in run.stdout + run.stderr
    outline = json.loads(cli_main("outline", "hugo.md", "--docs-dir", str(root), "--json", env=env).stdout)
    assert (outline["title"], outline["tags"], outline["date"]) == ("Hugo Page", ["alpha", "beta"], "2024-01-02")
    assert outline["preamble"]["start_line"] == 7 and "title" in outline["front_matter_keys"]
    # (line 6 is the blank line after the front matter: a section starts at its first line of text)
    bad = json.loads(cli_main("outline", "bad.md", "--docs-dir", str(root), "--json", env=env).stdout)
    assert bad["preamble"] is None and [h["heading_path"] for h in bad["headings"]] == ["Body"]
    run = cli_main("read", "Hugo Page", "Usage", "--docs-dir", str(root), env=env)
    assert run.returncode == 0 and run.stdout.startswith("## Usage")


def test_toml_front_matter_error_at_its_end_names_the_closing_line(tmp_path, cli_main) -> None:
    """Trial: "Unterminated string (at end of document)" named no line (the YAML warning does)."""
    root = tmp_path / "site"
    root.mkdir()
    (root / "bad.md").write_text('+++\ntitle = """Unclosed\ndraft = true\n+++\n\n# Body\n\ntext\n', encoding="utf-8")
    env: dict[str, str | None] = {"MARKDOWN_MEMORY_EMBEDDER": "none", "MARKDOWN_MEMORY_DB": str(tmp_path / "i.db")}
    run = cli_main("index", str(root), env=env)
    assert run.returncode == 0
    assert ("bad.md: invalid TOML front matter: Unterminated string (at line 4, the closing +++)"
            in run.stdout + run.stderr), run.stdout + run.stderr


def test_outline_dates_are_iso_8601_with_a_t(tmp_path, cli_main) -> None:
    """Trial: `updated: 2024-03-04 05:06:07+00:00` came back with a space, not ISO 8601's T."""
    root = tmp_path / "v"
    root.mkdir()
    (root / "n.md").write_text("---\ndate: 2024-03-01\nupdated: 2024-03-04 05:06:07+00:00\n---\n\n# N\n\ntext\n",
                               encoding="utf-8")
    env: dict[str, str | None] = {"MARKDOWN_MEMORY_EMBEDDER": "none", "MARKDOWN_MEMORY_DB": str(tmp_path / "i.db")}
    outline = json.loads(cli_main("outline", "n.md", "--docs-dir", str(root), "--json", env=env).stdout)
    assert (outline["date"], outline["updated"]) == ("2024-03-01", "2024-03-04T05:06:07+00:00")
