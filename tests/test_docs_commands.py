"""Every command README.md and docs/*.md show in a shell code block is checked (issue 17): the
``markdown-memory`` lines run here through the CLI, the agent registration lines run in
tests/test_agent_registration.py, and the install and test lines run in CI (.ci/run). A new
line in the docs that none of these covers fails here until it is covered. Also: README stays
under 10 KB, its example is what the search prints, and every figure names its script."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from conftest import copy_db
from docs_text import REPO, blocks, shell_commands

README = REPO / "README.md"
#: README's test command: the fast suite (.ci/run runs it as written, then the ``slow`` tests)
TEST_LINE = 'bash scripts/setup.sh && .venv/bin/python -m pytest -q -m "not slow"'
#: lines .ci/run runs as written (install from the checkout, README's test command)
RUN_BY_CI = {
    TEST_LINE,
    "uv tool install '.[minilm]'",
}
REGISTRATION = ("claude mcp add ", "codex mcp add ")


def _markdown_memory_argv(line: str) -> list[str] | None:
    """The arguments of a ``markdown-memory ...`` line (also ``bash scripts/setup.sh &&
    .venv/bin/markdown-memory ...``), None for any other line."""
    if line.startswith("bash scripts/setup.sh && .venv/bin/markdown-memory "):
        line = line.split("&& ", 1)[1]
    argv = shlex.split(line)
    if argv and Path(argv[0]).name == "markdown-memory":
        return argv[1:]
    return None


def test_every_shell_line_in_the_docs_is_covered_by_a_test():
    lines = shell_commands()
    assert len(lines) >= 10
    for where, line in lines:
        covered = (line in RUN_BY_CI or line.startswith(REGISTRATION) or _markdown_memory_argv(line) is not None)
        assert covered, f"{where}: `{line}` is run by no test; add it to tests/test_docs_commands.py"


def test_ci_runs_the_install_and_test_lines_as_written():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert TEST_LINE in ci
    assert '.venv/bin/python -m pytest -q -m slow' in ci  # and what the fast suite leaves out
    assert "bash scripts/ci_packaging.sh" in ci
    packaging = (REPO / "scripts" / "ci_packaging.sh").read_text(encoding="utf-8")
    assert "uv tool install --quiet '.[minilm]'" in packaging
    # README opens with the two set-up commands: the main job, then the tests
    first = blocks("bash", [README])[0].body.splitlines()
    assert first[0].startswith("bash scripts/setup.sh && .venv/bin/markdown-memory ") and " search " in first[0]
    assert first[1] == TEST_LINE


@pytest.fixture(scope="module")
def docs_minilm_db(tmp_path_factory: pytest.TempPathFactory, minilm) -> Path:
    """An index of the project's docs/ with the session's MiniLM, built once for the README
    lines that search docs/ with MiniLM (each gets a copy, ``copy_db``): indexing the docs took
    each of them about a minute under load, a copy a few milliseconds. A search on a copy runs
    as on a first run's index: its refresh finds nothing changed, as after the first command."""
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine

    db = tmp_path_factory.mktemp("docs-minilm") / "index.db"
    engine = Engine(Settings.load(REPO / "docs", db, "minilm"), embedder=minilm)
    try:
        assert not engine.index().failed
    finally:
        engine.close()
    return db


def _searches_docs_with_minilm(argv: list[str]) -> bool:
    return "search" in argv and "minilm" in argv and argv[argv.index("--docs-dir") + 1:][:1] == ["docs"]


def _lines() -> list:
    """The docs' ``markdown-memory`` lines; those that search docs/ with MiniLM are README's
    opening command end to end (an index of docs/ with the model, 20-50 s): ``slow``."""
    lines = [(w, li) for w, li in shell_commands() if _markdown_memory_argv(li) is not None]
    return [pytest.param(w, li, marks=pytest.mark.slow) if _searches_docs_with_minilm(_markdown_memory_argv(li) or [])
            else (w, li) for w, li in lines]


@pytest.mark.parametrize("where,line", _lines())
def test_markdown_memory_lines_run_as_written(where, line, cli_main, tmp_path, request):
    argv = _markdown_memory_argv(line)
    assert argv is not None
    env: dict[str, str | None] = {"MARKDOWN_MEMORY_DB": str(tmp_path / "index.db")}
    if _searches_docs_with_minilm(argv):
        copy_db(request.getfixturevalue("docs_minilm_db"), tmp_path / "index.db")
    if "--download-model" in argv and "minilm" not in argv:
        # the default model would be fetched from the Hub (218 MB): point it at an empty folder,
        # so the line runs and answers with what to do, without the network
        (tmp_path / "empty").mkdir()
        env["MARKDOWN_MEMORY_MODEL_DIR"] = str(tmp_path / "empty")
        res = cli_main(*argv, env=env, cwd=REPO)
        assert res.returncode == 2 and "does not hold the embeddinggemma model" in res.stderr, res.stderr
        assert "Traceback" not in res.stderr
        return
    cwd = REPO
    if "setup" in argv:  # edits the agents' config: a temporary HOME and project, never the user's
        cwd = tmp_path / "project"
        cwd.mkdir()
        env.update(HOME=str(tmp_path / "home"), CLAUDE_CONFIG_DIR=None, CODEX_HOME=None, MARKDOWN_MEMORY_EMBEDDER=None)
    res = cli_main(*argv, env=env, cwd=cwd)
    assert res.returncode == 0, f"{where}: `{line}` failed: {res.stderr}"
    assert "Traceback" not in res.stderr
    if "search" in argv:
        assert res.stdout.startswith("1. "), res.stdout


@pytest.mark.slow  # README's opening search end to end: it indexes docs/ with MiniLM (docs_minilm_db)
def test_readme_example_is_what_the_search_prints(cli_main, tmp_path, docs_minilm_db):
    """The example block names its script and shows the hit the first command's search finds."""
    text = README.read_text(encoding="utf-8")
    assert "python scripts/readme_example.py --top-k 1" in text
    (example,) = [b.body for b in blocks("text", [README]) if b.body.startswith("$ markdown-memory ")]
    header = example.splitlines()[1]
    m = re.match(r"1\. (\S+):\d+-\d+  (.+?)  \(score", header)
    assert m, header
    query = shlex.split(example.splitlines()[0])[5]
    first = blocks("bash", [README])[0].body.splitlines()[0]
    assert shlex.quote(query) in first or f'"{query}"' in first
    db = copy_db(docs_minilm_db, tmp_path / "i.db")
    res = cli_main("--embedder", "minilm", "--db", str(db), "search", query, "--docs-dir",
                   str(REPO / "docs"), "--top-k", "1", "--json")
    hit = json.loads(res.stdout)["results"][0]
    assert (hit["file_path"], hit["heading_path"]) == (m[1], m[2])


def test_readme_is_short_and_its_figures_name_their_scripts():
    text = README.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) < 10_000
    for para in re.split(r"\n\s*\n", text):
        if re.search(r"\d+(\.\d+)? ?(%|ms|MB|s vs)", para) and "|" not in para.split("\n", 1)[0]:
            assert "scripts/" in para or "MB" in para, f"a figure without its script: {para[:120]}"
    assert "scripts/eval_retrieval.py" in text and "scripts/bench.py" in text


def test_reference_pages_exist_and_are_linked():
    text = README.read_text(encoding="utf-8")
    for page in ("configuration", "cli", "mcp-tools", "ranking", "models-and-offline-install", "performance",
                 "troubleshooting"):
        assert (REPO / "docs" / f"{page}.md").is_file()
        assert f"(docs/{page}.md)" in text
    for path in (REPO / "docs").glob("*.md"):
        for target in re.findall(r"\]\(([\w./-]+\.md)(?:#[\w-]+)?\)", path.read_text(encoding="utf-8")):
            assert (path.parent / target).resolve().is_file(), f"{path.name}: broken link to {target}"


def _example(start: str) -> str:
    (example,) = [b.body for b in blocks("text", [README]) if b.body.startswith(start)]
    return example


def test_readme_setup_example_is_what_setup_prints(cli_main, tmp_path):
    """The plan README shows is the first setup line's, run with HOME=/tmp/me and the console
    script in /tmp/me/.local/bin (here: a temporary HOME and this process's program path)."""
    from markdown_memory.agents.plan import program_argv

    first = next(li for _, li in shell_commands([README]) if " setup claude-code" in li)
    (tmp_path / "project").mkdir()
    res = cli_main(*shlex.split(first)[1:], cwd=tmp_path / "project",
                   env={"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": None, "CODEX_HOME": None})
    assert res.returncode == 0, res.stderr
    shown = res.stdout.replace(shlex.join(program_argv()), "/tmp/me/.local/bin/markdown-memory")
    assert shown.replace(str(tmp_path), "/tmp/me").rstrip() == _example("setup for Claude Code").rstrip()


def test_readme_map_example_is_what_map_prints(cli_main, tmp_path):
    text = README.read_text(encoding="utf-8")
    assert "`--docs-dir tests/fixtures/guide/ops`" in text
    res = cli_main("--embedder", "none", "--db", str(tmp_path / "i.db"), "map", "--docs-dir",
                   str(REPO / "tests" / "fixtures" / "guide" / "ops"))
    assert res.returncode == 0, res.stderr
    assert res.stdout.rstrip() == _example("# ops").rstrip()


def test_readme_says_what_it_is_first_and_that_the_first_command_leaves_the_service_running():
    text = README.read_text(encoding="utf-8")
    head, _, rest = text.partition("```bash")
    opening = head.split("\n", 1)[1].strip()
    assert opening.startswith("markdown-memory ") and "MCP server" in opening and opening.endswith(".")
    after = rest.split("```", 1)[1].split("\n\n")[1]  # the paragraph after the two commands
    assert "resident service" in after and "serve --stop" in after and "MARKDOWN_MEMORY_SERVICE=off" in after


@pytest.mark.parametrize("query", ["gitignore", "symlinked folders", "markdown-memory-ignore"])
def test_what_is_indexed_is_found_under_its_own_heading(query, cli_main, tmp_path):
    """Regression (trial2): what gets indexed (extensions, ignore files, symlinks, file names)
    sat under "Which embedder a command uses", so a search for it answered with that heading."""
    result = cli_main("--embedder", "none", "--db", str(tmp_path / "docs.db"), "search", query,
                      "--docs-dir", str(REPO / "docs"), "--top-k", "1", "--json")
    assert result.returncode == 0, result.stderr
    first = json.loads(result.stdout)["results"][0]
    assert (first["file_path"], first["heading_path"]) == ("configuration.md", "Configuration > What gets indexed")
