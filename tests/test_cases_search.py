"""Real-world search and path cases (issue 6): CJK text, FTS5 query syntax, exact identifiers
in hybrid ranking, Python without loadable SQLite extensions, Windows paths.

Inputs are copies of ../shared/cases/<id>/ in tests/fixtures/cases/<id>/; test names carry the
case id. Ranking checks use the real MiniLM model (hybrid) and, where the case asks, the
keyword-only engine too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from markdown_memory.errors import PathOutsideRootError, QueryError
from markdown_memory.models import SearchRequest
from markdown_memory.reading.resolve import normalise_request_path, resolve_document
from markdown_memory.store.testing import stored_passages

CASES = Path(__file__).parent / "fixtures" / "cases"


def copy_case(case_id: str, dest: Path, *names: str) -> Path:
    src = CASES / case_id
    dest.mkdir(parents=True, exist_ok=True)
    for name in names:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / name, dest / name)
    return dest


def first_hit(engine, query: str) -> tuple[str, str]:
    results = engine.search(SearchRequest(query)).results
    assert results, f"no result for {query!r}"
    return results[0].file_path, results[0].heading_path


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "markdown_memory.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


# -- 016 CJK ------------------------------------------------------------------------------------
# Source: https://github.com/tommy0103/obelisk/issues/9 (and claude-mem#3801, engram#140, pi-hermes-memory#174)
CJK_QUERIES = [
    ("悬空引用", "zh.md", "部署指南 > 数据库迁移"),
    ("itgc", "zh.md", "部署指南 > 数据库迁移"),
    ("gen-itgc", "zh.md", "部署指南 > 数据库迁移"),
    ("回滚", "zh.md", "部署指南 > 回滚步骤"),
    ("サンドボックス", "ja.md", "開発環境のセットアップ > サンドボックス"),
    ("再起動", "ja.md", "開発環境のセットアップ > よくある質問"),
    ("キャッシュ", "ja.md", "開発環境のセットアップ > よくある質問"),
]


@pytest.mark.parametrize("embedder", ["minilm", "none"])
def test_case_016_cjk_substrings_are_found(tmp_path, make_engine, embedder):
    root = copy_case("016-cjk-search", tmp_path / "docs", "zh.md", "ja.md")
    engine = make_engine(root, embedder=embedder)
    engine.index()
    outline = [(h.start_line, h.heading_path) for h in engine.outline("zh.md").headings]
    assert outline == [(1, "部署指南"), (3, "部署指南 > 数据库迁移"), (7, "部署指南 > 回滚步骤")]
    outline = [(h.start_line, h.heading_path) for h in engine.outline("ja.md").headings]
    assert outline == [(1, "開発環境のセットアップ"), (3, "開発環境のセットアップ > サンドボックス"),
                       (7, "開発環境のセットアップ > よくある質問")]
    for query, path, section in CJK_QUERIES:
        assert first_hit(engine, query) == (path, section), query
    path, section = first_hit(engine, "迁移")
    assert path == "zh.md" and section.startswith("部署指南 > ")
    # displayed text is stored unmodified (no bigram spaces, no NFKC)
    source = (root / "zh.md").read_text(encoding="utf-8").split("\n")
    read = engine.read("zh.md", "部署指南 > 数据库迁移").content
    assert read == "\n".join(source[2:5])


# -- 017 FTS5 query syntax ------------------------------------------------------------------------
# Source: https://github.com/arabold/docs-mcp-server/issues/262 (and hermes-agent#40653, dogsheep-beta#31,
# meta_skill#100, 3gpp-mcp#43, MemOS#1227, tinyfts#2)
def _queries_017() -> list[tuple[str, str]]:
    lines = (CASES / "017-fts5-query-syntax" / "queries.tsv").read_text(encoding="utf-8").split("\n")[1:]
    return [tuple(line.split("\t")) for line in lines if line]  # type: ignore[misc]


QUERIES_017 = _queries_017()


@pytest.fixture(scope="module")
def engines_017(tmp_path_factory, minilm):
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine

    tmp = tmp_path_factory.mktemp("c017")
    root = copy_case("017-fts5-query-syntax", tmp / "docs", "input.md")
    out = {}
    for name in ("minilm", "none"):
        engine = Engine(Settings.load(root, tmp / f"{name}.db", name), embedder=minilm if name == "minilm" else None)
        engine.index()
        out[name] = engine
    yield out
    for engine in out.values():
        engine.close()


def test_case_017_has_all_rows():
    assert len(QUERIES_017) == 29


@pytest.mark.parametrize("mode", ["minilm", "none"])
@pytest.mark.parametrize("query, expected", QUERIES_017, ids=[q for q, _ in QUERIES_017])
def test_case_017_hostile_queries_return_normally(engines_017, mode, query, expected):
    answer = engines_017[mode].search(SearchRequest(query))
    assert isinstance(answer.results, tuple)
    if expected != "-":
        assert answer.results, query
        assert answer.results[0].heading_path == expected


def test_case_017_empty_and_huge_queries(engines_017):
    engine = engines_017["none"]
    for query in ("", "   ", "\t\n"):
        with pytest.raises(QueryError, match="empty"):
            engine.search(SearchRequest(query))
    words = ("timeout proxy linter build cache ticket spec module filters automaton config "
             "NEAR AND OR NOT - : * ^ ( ) \"").split()
    pasted_log = " ".join(words[i % len(words)] + str(i % 7) for i in range(2000))
    assert isinstance(engine.search(SearchRequest(pasted_log)).results, tuple)
    assert isinstance(engines_017["minilm"].search(SearchRequest(pasted_log)).results, tuple)


def test_case_017_cli_search_with_hostile_queries(tmp_path, cli_main):
    """Each hostile query through the command line (in this process: conftest's ``cli_main``;
    an uncaught error would raise here instead of printing a traceback)."""
    root = copy_case("017-fts5-query-syntax", tmp_path / "docs", "input.md")
    db = str(tmp_path / "i.db")
    assert cli_main("--embedder", "none", "--db", db, "index", str(root)).returncode == 0
    for query, expected in QUERIES_017:
        out = cli_main("--embedder", "none", "--db", db, "search", "--docs-dir", str(root), "--no-refresh", "--json",
                       "--", query)
        assert out.returncode == 0, (query, out.stderr)
        assert "Traceback" not in out.stderr and "OperationalError" not in out.stderr
        answer = json.loads(out.stdout)
        if expected != "-":
            assert answer["results"][0]["heading_path"] == expected, query
    out = cli_main("--embedder", "none", "--db", db, "search", "--docs-dir", str(root), "--no-refresh", "   ")
    assert out.returncode == 2 and "empty" in out.stderr and "Traceback" not in out.stderr


# -- 018 exact identifiers in hybrid ranking -------------------------------------------------------
# Source: https://github.com/Destrayon/Connapse/issues/402 (and mcp-memory-service#175, mcp-vector-search#103)
IDENTIFIERS_018 = [
    ("MAX_RETRY_BACKOFF_MS", "docs/configuration.md", "Configuration > Retry Settings"),
    ("max_retry_backoff_ms", "docs/configuration.md", "Configuration > Retry Settings"),
    ("RETRY_JITTER_RATIO", "docs/configuration.md", "Configuration > Retry Settings"),
    ("ECONNRESET", "docs/errors.md", "Errors > Socket Errors"),
    ("rebuild_search_index()", "docs/maintenance.md", "Maintenance > Index Commands"),
    ("rebuild_search_index", "docs/maintenance.md", "Maintenance > Index Commands"),
    ("--dry-run-json", "docs/maintenance.md", "Maintenance > Index Commands"),
]


@pytest.mark.parametrize("embedder", ["minilm", "none"])
def test_case_018_exact_identifiers_beat_semantic_neighbours(tmp_path, make_engine, embedder):
    names = ("docs/configuration.md", "docs/errors.md", "docs/maintenance.md")
    root = copy_case("018-exact-identifiers-hybrid", tmp_path / "root", *names)
    engine = make_engine(root, embedder=embedder)
    engine.index()
    for query, path, section in IDENTIFIERS_018:
        answer = engine.search(SearchRequest(query))
        assert first_hit(engine, query) == (path, section), query
        assert answer.keyword_only is (embedder == "none")
        matched = answer.results[0].matched_by
        assert "keyword" in matched or "exact" in matched
    if embedder == "minilm":
        top3 = [h.heading_path for h in engine.search(SearchRequest("how long does the client wait between retries")).results[:3]]
        assert "Configuration > Retry Behaviour" in top3
        top3 = [h.heading_path for h in engine.search(SearchRequest("server closed the connection")).results[:3]]
        assert {"Errors > Network Problems", "Errors > Socket Errors"} & set(top3)


# -- 024 no loadable extensions ----------------------------------------------------------------------
# Source: https://github.com/asg017/sqlite-vec/issues/83 (and pyenv#1702, mcp-memory-service#97, sqlite-rag#4)
NO_EXTENSIONS_SITE = '''
import sqlite3, sys
class _NoExtensions(sqlite3.Connection):
    @property
    def enable_load_extension(self):  # like a pyenv build without --enable-loadable-sqlite-extensions
        raise AttributeError("'sqlite3.Connection' object has no attribute 'enable_load_extension'")
_connect = sqlite3.connect
def connect(*args, **kwargs):
    kwargs.setdefault("factory", _NoExtensions)
    return _connect(*args, **kwargs)
sqlite3.connect = connect
sys.modules["sqlite_vec"] = None  # importing sqlite_vec now fails: parser and FTS must not need it
'''


@pytest.mark.parametrize("how", ["no_enable_load_extension", "vec_load_fails"])
def test_case_024_keyword_only_when_sqlite_vec_cannot_load(tmp_path, make_engine, how):
    root = copy_case("024-no-loadable-extensions", tmp_path / "case", "docs/guide.md") / "docs"
    db = tmp_path / "index.db"
    env = {"MARKDOWN_MEMORY_SQLITE_DRIVER": "sqlite3"}  # no fallback driver: the degraded path
    if how == "no_enable_load_extension":
        site = tmp_path / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(NO_EXTENSIONS_SITE)
        env["PYTHONPATH"] = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])
    else:
        garbage = tmp_path / "vec0.so"
        garbage.write_bytes(b"\x7fELF not really a shared object")
        env["MARKDOWN_MEMORY_VEC_PATH"] = str(garbage)
    base = ["--embedder", "minilm", "--db", str(db)]
    out = cli(*base, "index", str(root), env=env)
    assert out.returncode == 0, out.stderr
    assert "vector search disabled" in out.stderr and "Traceback" not in out.stderr
    assert "vector search disabled" not in out.stdout
    out = cli(*base, "search", "--docs-dir", str(root), "--no-refresh", "--json", "--", "--no-cache", env=env)
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["keyword_only"] is True and "sqlite-vec" in answer["message"]
    assert answer["results"][0]["heading_path"] == "Guide > Install"
    out = cli(*base, "outline", "guide.md", "--docs-dir", str(root), env=env)
    assert out.returncode == 0 and "Guide > Troubleshooting" in out.stdout
    out = cli(*base, "read", "guide.md", "Guide > Troubleshooting", "--docs-dir", str(root), env=env)
    assert out.returncode == 0 and "port 8080" in out.stdout
    # The extension becomes available: a plain index adds vectors without re-parsing.
    engine = make_engine(root, embedder="minilm", db=db)
    if not engine.store.vec_available:
        pytest.skip("sqlite-vec cannot be loaded in this test process either")
    report = engine.index()
    assert (report.added, report.updated, report.unchanged) == (0, 0, 1)
    assert report.vectors_embedded == engine.status().counts.passages > 0
    assert engine.search(SearchRequest("the service will not start")).keyword_only is False


# -- 028 Windows paths ----------------------------------------------------------------------------
# Source: https://github.com/modelcontextprotocol/servers/issues/1987 (and servers#1838, railway-mcp-server#28,
# Dyalog/link#270, language-servers#2785)
def _paths_028() -> list[tuple[str, str]]:
    lines = (CASES / "028-windows-paths" / "paths.tsv").read_text(encoding="utf-8").split("\n")[1:]
    return [tuple(line.split("\t")) for line in lines if line]  # type: ignore[misc]


@pytest.mark.parametrize("requested, expected", _paths_028())
def test_case_028_windows_path_arguments(tmp_path, requested, expected):
    indexed = ["Guides/Setup Guide.md"]
    if expected.startswith("REJECT"):
        with pytest.raises(PathOutsideRootError, match="outside"):
            normalise_request_path(requested, tmp_path, root_text="C:\\Docs")
        return
    rel = normalise_request_path(requested, tmp_path, root_text="C:\\Docs")
    assert resolve_document(rel, tmp_path, indexed) == expected


def test_case_028_paths_and_backslashes_in_results(tmp_path, make_engine):
    root = copy_case("028-windows-paths", tmp_path / "Docs", "Docs/Guides/Setup Guide.md") / "Docs"
    engine = make_engine(root, embedder="minilm")
    engine.index()
    for requested in ("Guides/Setup Guide.md", "Guides\\Setup Guide.md", "guides/setup guide.md",
                      str(root / "Guides" / "Setup Guide.md"), "Guides\\..\\Guides\\Setup Guide.md"):
        assert engine.outline(requested).file_path == "Guides/Setup Guide.md", requested
    with pytest.raises(PathOutsideRootError):
        engine.outline("..\\outside.md")
    section = engine.read("Guides/Setup Guide.md", "Setup Guide > Proxy")
    source = (root / "Guides" / "Setup Guide.md").read_text(encoding="utf-8").split("\n")
    assert section.content == "\n".join(source[2:7])
    assert "C:\\ProgramData\\Tool\\proxy.ini" in section.content
    assert "C:\\Users\\me\\.aws\\config" in section.content
    answer = engine.search(SearchRequest("proxy.ini"))
    assert (answer.results[0].file_path, answer.results[0].heading_path) == (
        "Guides/Setup Guide.md", "Setup Guide > Proxy")
    texts = [p.text for p in stored_passages(engine.store)]
    assert any("C:\\Users\\me\\.aws\\config" in t for t in texts)
