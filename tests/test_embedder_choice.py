"""Which embedding preset a command uses when none is named (``embed/choice.py``), through the
real CLI, the engine façade and the MCP runtime: an index built once with ``--embedder minilm``
keeps MiniLM without the flag; a flag or MARKDOWN_MEMORY_EMBEDDER always wins; a new index gets
the best preset that loads (MiniLM here, where the default model is not downloaded) and says so
once; an index whose model cannot load falls back to the default and says so. The default model is never present in tests."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, requires_minilm
from markdown_memory.config import Settings
from markdown_memory.engine import Engine
from markdown_memory.models import SearchRequest

pytestmark = requires_minilm
QUERY = "how do I install on macOS"


@pytest.fixture
def root(tmp_path: Path, minilm, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The guide docs; a MiniLM load (the CLI's, the engine's) gets the session's model."""
    from markdown_memory import embed

    real = embed.get_embedder
    monkeypatch.setattr(embed, "get_embedder", lambda name, *a, **k: minilm if name == "minilm" else real(name, *a, **k))
    docs = tmp_path / "docs"
    shutil.copytree(FIXTURES / "guide", docs)
    return docs


def _search(cli_main, root: Path, *flags: str, env: dict | None = None) -> dict:
    res = cli_main(*flags, "search", QUERY, "--docs-dir", str(root), "--json", env=env)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _vector_hits(answer: dict) -> int:
    return sum("vector" in hit["matched_by"] for hit in answer["results"])


class _AsGemma:
    """The session's MiniLM posing as EmbeddingGemma: an index whose vectors are gemma's."""

    name = "embeddinggemma"
    weights_id = "embeddinggemma-300m-test:000000000000"

    def __init__(self, inner) -> None:
        self.inner, self.dimension = inner, inner.dimension

    def document_text(self, title: str, text: str) -> str:
        return self.inner.document_text(title, text)

    def embed_texts(self, texts):
        return self.inner.embed_texts(texts)

    def embed_query(self, query: str):
        return self.inner.embed_query(query)


def test_search_without_embedder_uses_the_minilm_vectors_of_the_index(cli_main, root: Path) -> None:
    built = cli_main("--embedder", "minilm", "index", str(root))
    assert built.returncode == 0, built.stderr
    answer = _search(cli_main, root)
    emb = answer["index_status"]["embedder"]
    assert emb["name"] == "minilm" and emb["loaded"] is True
    assert emb["chosen"].startswith("not named: this index's vectors were made with minilm")
    assert answer["keyword_only"] is False and _vector_hits(answer) >= 1
    assert "keyword-only" not in (answer.get("message") or "")
    # the preset did not change: the text answer and status say why only with --verbose
    text = cli_main("search", QUERY, "--docs-dir", str(root))
    assert "embedder:" not in text.stdout
    assert "--embedder minilm" not in text.stdout  # the read commands need no flag: read infers the same
    verbose = cli_main("search", QUERY, "--docs-dir", str(root), "--verbose")
    assert "embedder: minilm (not named: this index's vectors were made with minilm;" in verbose.stdout
    status = cli_main("status", "--docs-dir", str(root))
    assert "search     hybrid (keyword + vectors); embedder minilm\n" in status.stdout
    status = cli_main("--verbose", "status", "--docs-dir", str(root))
    assert "search     hybrid (keyword + vectors); embedder minilm (not named: this index's vectors" in status.stdout
    # read, outline, list work on the same index without the flag (and index keeps the vectors)
    again = cli_main("index", str(root), "--json")
    report = json.loads(again.stdout)
    assert again.returncode == 0 and report["keyword_only"] is False
    assert json.loads(cli_main("status", "--docs-dir", str(root), "--json").stdout)["vectors"] == 21


def test_a_named_embedder_wins_over_the_index(cli_main, root: Path) -> None:
    assert cli_main("--embedder", "minilm", "index", str(root)).returncode == 0
    by_flag = _search(cli_main, root, "--embedder", "none")
    assert by_flag["keyword_only"] is True and _vector_hits(by_flag) == 0
    assert "keyword-only by choice (--embedder none)" in by_flag["message"]
    assert by_flag["index_status"]["embedder"]["name"] == "none"
    assert "chosen" not in by_flag["index_status"]["embedder"]  # named: nothing to explain
    by_env = _search(cli_main, root, env={"MARKDOWN_MEMORY_EMBEDDER": "none"})
    assert by_env["keyword_only"] is True and "chosen" not in by_env["index_status"]["embedder"]
    # the keyword-only runs left the MiniLM vectors alone: without a flag it is hybrid again
    after = _search(cli_main, root)
    assert after["index_status"]["embedder"]["name"] == "minilm" and _vector_hits(after) >= 1


def test_gemma_vectors_without_the_gemma_model_stay_keyword_only_with_the_usual_message(
        cli_main, root: Path, minilm) -> None:
    eng = Engine(Settings.load(root, None, "embeddinggemma"), embedder=_AsGemma(minilm))
    assert eng.index().vectors_embedded > 0
    eng.close()
    inferred = _search(cli_main, root)
    named = _search(cli_main, root, "--embedder", "embeddinggemma")
    assert inferred["keyword_only"] is True and _vector_hits(inferred) == 0
    assert inferred["message"] == named["message"]
    assert "keyword-only: the embeddinggemma model is not installed; run" in inferred["message"]
    assert inferred["index_status"]["embedder"] == named["index_status"]["embedder"]
    assert "chosen" not in inferred["index_status"]["embedder"]  # it is the default: nothing to explain


def test_a_new_index_gets_the_installed_minilm_when_the_default_is_missing_and_says_so_once(
        cli_main, root: Path) -> None:
    first = cli_main("search", QUERY, "--docs-dir", str(root))
    assert first.returncode == 0, first.stderr
    assert "embedder: minilm (not named: the default embeddinggemma model is not installed, so minilm" in first.stdout
    assert "--download-model` gets the default" in first.stdout
    assert "vector" in first.stdout  # hybrid from the first search: the hits were matched by vectors too
    answer = _search(cli_main, root)  # the index now holds MiniLM's vectors: kept, and not said again
    assert answer["index_status"]["embedder"]["name"] == "minilm"
    assert answer["keyword_only"] is False and _vector_hits(answer) >= 1
    assert "embedder:" not in cli_main("search", QUERY, "--docs-dir", str(root)).stdout


def test_a_new_index_is_keyword_only_only_when_no_model_can_load(cli_main, root: Path, tmp_path: Path) -> None:
    empty = tmp_path / "no-minilm"
    empty.mkdir()
    answer = _search(cli_main, root, env={"MARKDOWN_MEMORY_MINILM_DIR": str(empty)})
    assert answer["index_status"]["embedder"]["name"] == "embeddinggemma"
    assert answer["keyword_only"] is True and "chosen" not in answer["index_status"]["embedder"]
    assert "keyword-only: the embeddinggemma model is not installed" in answer["message"]


def test_minilm_vectors_with_minilm_gone_fall_back_to_the_default_and_say_why(
        cli_main, root: Path, tmp_path: Path) -> None:
    assert cli_main("--embedder", "minilm", "index", str(root)).returncode == 0
    empty = tmp_path / "no-minilm"
    empty.mkdir()
    answer = _search(cli_main, root, env={"MARKDOWN_MEMORY_MINILM_DIR": str(empty)})
    emb = answer["index_status"]["embedder"]
    assert emb["name"] == "embeddinggemma" and answer["keyword_only"] is True
    assert emb["chosen"] == ("not named: this index's vectors were made with minilm, which cannot load here, so the "
                             "default embeddinggemma is used instead and they are kept while it cannot load either "
                             "(install minilm again to use them)")  # the default model is absent in tests
    assert "keyword-only: the embeddinggemma model is not installed" in answer["message"]
    assert "--embedder minilm" not in answer["message"], answer["message"]  # minilm cannot load here


def test_a_preset_that_cannot_load_is_never_advised(cli_main, root: Path, tmp_path: Path) -> None:
    """Trial: with minilm's files gone, status said minilm "cannot load here" and then "run with
    `--embedder minilm` … to use them"; search advised "or use `--embedder minilm` (no download)"."""
    assert cli_main("--embedder", "minilm", "index", str(root)).returncode == 0
    empty = tmp_path / "no-minilm"
    empty.mkdir()
    env = {"MARKDOWN_MEMORY_MINILM_DIR": str(empty)}
    status = cli_main("--embedder", "embeddinggemma", "status", "--docs-dir", str(root), "--json", env=env)
    message = json.loads(status.stdout)["message"]
    assert "--embedder minilm" not in message and "the minilm model cannot load here either" in message, message
    search = _search(cli_main, root, "--embedder", "embeddinggemma", env=env)
    assert "--embedder minilm" not in search["message"], search["message"]
    assert "keyword-only: the embeddinggemma model is not installed" in search["message"]


def test_the_engine_and_the_mcp_runtime_choose_the_same_way(cli_main, root: Path, tmp_path: Path) -> None:
    from markdown_memory.mcp.runtime import Runtime

    db = tmp_path / "index.db"
    assert cli_main("--embedder", "minilm", "--db", str(db), "index", str(root)).returncode == 0
    settings = Settings.load(root, db, auto_index=False)
    assert settings.embedder == "embeddinggemma" and not settings.embedder_named  # not chosen yet
    eng = Engine(settings)
    try:
        assert eng.settings.embedder == "minilm"
        answer = eng.search(SearchRequest(QUERY))
        assert not answer.keyword_only and any("vector" in h.matched_by for h in answer.results)
    finally:
        eng.close()
    runtime = Runtime(settings)  # the server started without --embedder
    try:
        over_mcp = runtime.search_docs(SearchRequest(QUERY))
    finally:
        runtime.shutdown(1)
    emb = over_mcp["index_status"]["embedder"]
    assert emb["name"] == "minilm" and emb["chosen"].startswith("not named: this index's vectors")
    assert emb.get("loading") or over_mcp["keyword_only"] is False  # the background load may still run


def test_setup_without_embedder_registers_the_installed_minilm(cli_main, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    res = cli_main("setup", "claude-code", env={"HOME": str(home), "CLAUDE_CONFIG_DIR": None}, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "--embedder minilm" in res.stdout and "note:" not in res.stdout


def test_status_over_minilm_vectors_with_gemma_named_but_absent_keeps_them(cli_main, root: Path) -> None:
    """Trial finding: status advised "run `… index DIR` to re-embed them with embeddinggemma"
    while that model was not downloaded (the run would change nothing)."""
    assert cli_main("--embedder", "minilm", "index", str(root)).returncode == 0
    status = json.loads(cli_main("--embedder", "embeddinggemma", "status", "--docs-dir", str(root), "--json").stdout)
    assert "re-embed" not in status["message"], status["message"]
    assert "run with `--embedder minilm`" in status["message"]
    assert "they are kept while the embeddinggemma model cannot load here" in status["message"]
    search = _search(cli_main, root, "--embedder", "embeddinggemma")
    assert "re-embed" not in search["message"] and "--embedder minilm" in search["message"]
    text = cli_main("--embedder", "embeddinggemma", "status", "--docs-dir", str(root))
    assert "re-embed them with embeddinggemma" not in text.stdout and "--embedder minilm" in text.stdout


def test_index_force_without_a_loadable_model_keeps_the_stored_vectors(cli_main, root: Path, tmp_path: Path) -> None:
    """Trial finding: `index DIR --force` with the configured model absent (the default
    embeddinggemma not downloaded, or MiniLM uninstalled) rewrote every document without its
    MiniLM vectors: 21 vectors before, 0 after, and search keyword-only for good."""
    assert cli_main("--embedder", "minilm", "index", str(root)).returncode == 0
    empty = tmp_path / "no-minilm"
    empty.mkdir()
    for flags, env in ((("--embedder", "embeddinggemma"), None), ((), {"MARKDOWN_MEMORY_MINILM_DIR": str(empty)})):
        res = cli_main(*flags, "index", str(root), "--force", "--json", env=env)
        report = json.loads(res.stdout)
        assert res.returncode == 0 and report["updated"] == 5 and report["keyword_only"] is True, res.stdout
        assert report["vectors_embedded"] == 0
        status = json.loads(cli_main(*flags, "status", "--docs-dir", str(root), "--json", env=env).stdout)
        assert status["vectors"] == 21, (flags, status)
    # the kept vectors are the index's again as soon as MiniLM loads: nothing to re-embed
    answer = _search(cli_main, root)
    assert answer["index_status"]["embedder"]["name"] == "minilm" and _vector_hits(answer) >= 1
    again = json.loads(cli_main("--embedder", "minilm", "index", str(root), "--force", "--json").stdout)
    assert again["vectors_embedded"] == 0 and again["vectors_reused"] == 21


def test_a_keyword_only_index_named_none_stays_keyword_only_without_the_flag(cli_main, root: Path) -> None:
    """Trial finding 2: `--embedder none index` then a plain `search` embedded everything with
    MiniLM; a named `none` is kept by the index like any other named preset."""
    built = cli_main("--embedder", "none", "index", str(root))
    assert built.returncode == 0, built.stderr
    answer = _search(cli_main, root)
    assert answer["index_status"]["embedder"]["name"] == "none"
    assert answer["keyword_only"] is True and _vector_hits(answer) == 0
    assert json.loads(cli_main("status", "--docs-dir", str(root), "--json").stdout)["vectors"] == 0
    # naming a model later switches it, and that is kept in turn
    assert cli_main("--embedder", "minilm", "index", str(root)).returncode == 0
    after = _search(cli_main, root)
    assert after["index_status"]["embedder"]["name"] == "minilm" and _vector_hits(after) >= 1
