"""``markdown-memory drift`` over small git repositories made in tmp: docs that name a renamed
flag, a removed env var, a moved file or a deleted function are flagged, with their lines;
placeholders, the docs' own example names and third-party names are not; the code index
follows an edit without reading unchanged files again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CODE = '''\
import argparse
import os

import requests


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="shipit")
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--target")
    return parser.parse_args(argv)


def deploy_release(target):
    timeout = float(os.environ.get("SHIPIT_TIMEOUT", "30"))
    return requests.post(target, timeout=timeout)


class Client:
    def stream(self):
        return iter(())
'''

DOCS = '''\
# Shipit

## Usage

Run `shipit --dry-run` first, or pass `--dry-run` to see the plan, and `--target` for the host.

```console
$ SHIPIT_TIMEOUT=5 shipit --target prod --dry-run
deploying...
```

## Settings

Set the environment variable `SHIPIT_TIMEOUT` to wait longer. Settings live in `shipit/cli.py`.

## API

Call `parse_args()` and then `deploy_release()`; `Client.stream()` yields events.

```python
from shipit.cli import Client, deploy_release
```

## Examples

Create `my_app.py` with your own `build_site()` helper, then set `YOUR_TOKEN` and
`<name>`; `requests.get()` and `numpy.array()` come from other packages, and
`pip install --upgrade shipit` or `git commit --amend` are other tools.

```python
from flask import Flask
import requests

def build_site():
    return Flask(__name__)

APP_SECRET_MODE = "x"
```

Set `APP_SECRET_MODE` as above; the example's `--port` comes from `parser.add_argument("--port")`.

```python
parser.add_argument("--port")
```

## Other tools

Run `cargo outdated`, and also `--aggressive`. Graph optimisation off (`ORT_DISABLE_ALL`) is slower.
The environment variable `WATCHFILES_FORCE_POLLING` belongs to a dependency.

```bash
export FZF_DEFAULT_COMMAND='shipit --list-files'
```
'''


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                            GIT_COMMITTER_EMAIL="t@t"))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "shipit").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "shipit" / "__init__.py").write_text("")
    (root / "shipit" / "cli.py").write_text(CODE + "\nimport watchfiles  # noqa\n")
    (root / "pyproject.toml").write_text('[project]\nname = "shipit"\ndependencies = ["requests", "watchfiles"]\n')
    (root / "docs" / "guide.md").write_text(DOCS)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root


def drift(root: Path, db: Path, *extra: str, check_exit: int | None = 0) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "markdown_memory.cli", "--embedder", "none", "drift",
                           "--docs-dir", str(root / "docs"), *extra], capture_output=True, text=True,
                          env=dict(os.environ, MARKDOWN_MEMORY_DB=str(db)), timeout=300)
    if check_exit is not None:
        assert proc.returncode == check_exit, proc.stderr
    return proc


def missing(proc: subprocess.CompletedProcess[str]) -> dict[str, list[tuple[str, int]]]:
    data = json.loads(proc.stdout)
    return {s["heading_path"]: [(m["name"], m["line"]) for m in s["missing"]] for s in data["sections"]}


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_docs_that_match_the_code_do_not_drift(repo, tmp_path):
    """Also: another tool's flag after its command, a library constant, a dependency's variable,
    an `export` for another tool, placeholders, the docs' own example names."""
    proc = drift(repo, tmp_path / "db", "--json", "--fail")
    assert missing(proc) == {}
    assert json.loads(proc.stdout)["references_checked"] >= 10


def test_renamed_flag_is_flagged_with_its_lines(repo, tmp_path):
    edit(repo / "shipit" / "cli.py", '"--dry-run"', '"--plan-only"')
    proc = drift(repo, tmp_path / "db", "--json", "--fail", check_exit=1)
    assert missing(proc) == {"Shipit > Usage": [("--dry-run", 5), ("--dry-run", 8)]}


def test_removed_env_var_is_flagged(repo, tmp_path):
    edit(repo / "shipit" / "cli.py", 'float(os.environ.get("SHIPIT_TIMEOUT", "30"))', "30.0")
    found = missing(drift(repo, tmp_path / "db", "--json"))
    assert found == {"Shipit > Usage": [("SHIPIT_TIMEOUT", 8)], "Shipit > Settings": [("SHIPIT_TIMEOUT", 14)]}


def test_moved_file_is_flagged(repo, tmp_path):
    git(repo, "mv", "shipit/cli.py", "shipit/main.py")
    found = missing(drift(repo, tmp_path / "db", "--json"))
    assert found == {"Shipit > Settings": [("shipit/cli.py", 14)]}


def test_deleted_function_is_flagged_in_prose_and_imports(repo, tmp_path):
    edit(repo / "shipit" / "cli.py", "def deploy_release(target):", "def _push(target):")
    found = missing(drift(repo, tmp_path / "db", "--json"))
    assert found == {"Shipit > API": [("deploy_release()", 18), ("deploy_release", 21)]}


def test_human_output_names_file_line_breadcrumb(repo, tmp_path):
    edit(repo / "shipit" / "cli.py", '"--dry-run"', '"--preview"')
    out = drift(repo, tmp_path / "db").stdout
    assert "guide.md:3  Shipit > Usage" in out
    assert "--dry-run  (flag)" in out and "1 drifting section(s)" in out


def test_code_root_outside_git_needs_the_flag(tmp_path):
    docs = tmp_path / "plain" / "docs"
    docs.mkdir(parents=True)
    (docs / "a.md").write_text("# A\n\nUse `--x`.\n")
    proc = subprocess.run([sys.executable, "-m", "markdown_memory.cli", "--embedder", "none", "drift", "--docs-dir",
                           str(docs)], capture_output=True, text=True,
                          env=dict(os.environ, MARKDOWN_MEMORY_DB=str(tmp_path / "db")), timeout=300)
    assert proc.returncode == 2 and "pass --code-root DIR" in proc.stderr


def test_find_drift_outside_git_tells_the_agent_what_it_can_do(tmp_path):
    """Trial finding 8: the MCP tool has no code-root argument, so its refusal names the
    terminal command (with this docs root) or asking the user, never a flag to pass."""
    from markdown_memory.config import Settings
    from markdown_memory.errors import UsageError
    from markdown_memory.mcp.runtime import Runtime

    docs = tmp_path / "plain" / "docs"
    docs.mkdir(parents=True)
    (docs / "a.md").write_text("# A\n\nUse `--x`.\n")
    runtime = Runtime(Settings.load(docs, tmp_path / "mcp.db", "none", auto_index=False))
    try:
        with pytest.raises(UsageError) as err:
            runtime.answer("find_drift", {})
    finally:
        runtime.shutdown()
    text = str(err.value)
    assert "drift --code-root DIR --docs-dir" in text and str(docs) in text and "in a terminal" in text
    assert "ask the user" in text and "pass --code-root" not in text
    code = tmp_path / "plain" / "src"
    code.mkdir()
    (code / "m.py").write_text('FLAGS = ["--y"]\n')
    proc = subprocess.run([sys.executable, "-m", "markdown_memory.cli", "--embedder", "none", "drift", "--docs-dir",
                           str(docs), "--code-root", str(tmp_path / "plain"), "--json"], capture_output=True, text=True,
                          env=dict(os.environ, MARKDOWN_MEMORY_DB=str(tmp_path / "db")), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert missing(proc) == {"A": [("--x", 3)]}


def test_code_index_follows_an_edit_reading_only_the_changed_file(repo, tmp_path):
    from markdown_memory.drift.codeside import update_code_index
    from markdown_memory.store import Store

    db = tmp_path / "db"
    drift(repo, db)
    for i in range(5):
        (repo / "shipit" / f"extra{i}.py").write_text(f"VALUE_{i} = {i}\n")
    store = Store(db)
    try:
        first = update_code_index(store, repo)
        assert first.read == 5 and first.tokenized == 5
        edit(repo / "shipit" / "cli.py", '"--dry-run"', '"--plan-only"')
        second = update_code_index(store, repo)
        assert (second.read, second.tokenized, second.removed) == (1, 1, 0)
    finally:
        store.close()
    assert missing(drift(repo, db, "--json"))["Shipit > Usage"][0] == ("--dry-run", 5)


def search(root: Path, db: Path, query: str) -> list[dict[str, object]]:
    proc = subprocess.run([sys.executable, "-m", "markdown_memory.cli", "--embedder", "none", "search", query,
                           "--docs-dir", str(root / "docs"), "--json"], capture_output=True, text=True,
                          env=dict(os.environ, MARKDOWN_MEMORY_DB=str(db)), timeout=300)
    assert proc.returncode == 0, proc.stderr
    return list(json.loads(proc.stdout)["results"])


def test_search_hits_carry_the_missing_names_once_the_code_side_is_read(repo, tmp_path):
    db = tmp_path / "db"
    edit(repo / "shipit" / "cli.py", '"--dry-run"', '"--preview"')
    assert all("drift" not in hit for hit in search(repo, db, "dry-run plan"))  # no code side read yet
    drift(repo, db)
    hits = {hit["heading_path"]: hit for hit in search(repo, db, "dry-run plan")}
    assert hits["Shipit > Usage"]["drift"] == ["--dry-run"]
    assert all("drift" not in hit for path, hit in hits.items() if path != "Shipit > Usage")


def test_a_file_name_that_is_not_utf8_is_skipped_not_fatal(repo, tmp_path):
    (repo / "shipit").joinpath(os.fsdecode(b"bad\xff.py")).write_text("X = 1\n")
    assert missing(drift(repo, tmp_path / "db", "--json")) == {}


def test_mcp_search_docs_hits_carry_drift(repo, tmp_path):
    """The agent's view: `search_docs` over MCP names what the hit's section lost."""
    from test_server import McpClient, server_env

    db = tmp_path / "db"
    edit(repo / "shipit" / "cli.py", '"--dry-run"', '"--preview"')
    drift(repo, db)
    client = McpClient(server_env(repo / "docs", db, tmp_path / "home", "none", MARKDOWN_MEMORY_AUTO_INDEX="0"),
                       tmp_path / "stderr.log")
    try:
        is_error, answer = client.call("search_docs", {"query": "dry-run plan"})
    finally:
        client.close()
    assert not is_error, answer
    hits = {hit["heading_path"]: hit for hit in answer["results"]}
    assert hits["Shipit > Usage"]["drift"] == ["--dry-run"]


def test_mcp_find_drift_lists_the_drifting_sections(repo, tmp_path):
    """The agent can ask which sections drift, without the CLI: `find_drift` answers the same
    sections and names as `drift --json`, and a section whose names the code still has is absent."""
    from test_server import McpClient, server_env

    db = tmp_path / "db"
    edit(repo / "shipit" / "cli.py", '"--dry-run"', '"--preview"')
    client = McpClient(server_env(repo / "docs", db, tmp_path / "home", "none", MARKDOWN_MEMORY_AUTO_INDEX="0"),
                       tmp_path / "stderr.log")
    try:
        is_error, answer = client.call("find_drift", {})
    finally:
        client.close()
    assert not is_error, answer
    found = {s["heading_path"]: [(m["name"], m["line"]) for m in s["missing"]] for s in answer["sections"]}
    assert found == missing(drift(repo, tmp_path / "db2", "--json"))
    assert {name for name, _line in found["Shipit > Usage"]} == {"--dry-run"}  # named on two lines


OWN_CODE = '''\
import argparse
import os

from pydantic_settings import BaseSettings, SettingsConfigDict


def main(argv=None):
    parser = argparse.ArgumentParser(prog="shipit")
    parser.add_argument("--color", action="store_true")
    parser.add_argument("--max-size", type=int)
    parser.add_argument("--verbose", action=argparse.BooleanOptionalAction)
    debug = os.environ.get("APP_DEBUG")
    return parser.parse_args(argv), debug


class Settings(BaseSettings):  # pydantic-settings: SHIPIT_CACHE_DIR sets cache_dir
    model_config = SettingsConfigDict(env_prefix="SHIPIT_")
    cache_dir: str = ""
'''

OWN_DOCS = '''\
# Shipit

## Options

Run `shipit --color` to paint, `shipit --no-color` to stop, `shipit --verbose` or
`shipit --no-verbose`, and `shipit --max-sise 10` for big files.

```bash
gh pr create --fill | shipit --max-size 3
```

## Environment

The variables shipit reads: `APP_DEBUG=1` prints more, `APP_LEGACY_MODE=1` keeps the old layout,
and `SHIPIT_CACHE_DIR` moves the cache.
'''


@pytest.fixture
def own_repo(tmp_path: Path) -> Path:
    root = tmp_path / "own"
    (root / "shipit").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "tests").mkdir()
    (root / "shipit" / "__init__.py").write_text("")
    (root / "shipit" / "cli.py").write_text(OWN_CODE)
    (root / "tests" / "test_cli.py").write_text('ARGS = ["--color", "--max-size"]\n')
    (root / "pyproject.toml").write_text('[project]\nname = "shipit"\n[project.scripts]\nshipit = "shipit.cli:main"\n')
    (root / "docs" / "guide.md").write_text(OWN_DOCS)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root


def test_own_flags_and_variables_the_code_lacks_are_flagged_with_owner_and_did_you_mean(own_repo, tmp_path):
    """`--no-color` (only `--color` defined, no negation generated), `APP_LEGACY_MODE=1` (the code
    reads APP_DEBUG, never it) and the typo `--max-sise` are flagged; `--no-verbose` (argparse's
    BooleanOptionalAction makes it), `SHIPIT_CACHE_DIR` (built: "SHIPIT_" + a field) and the flags
    of `gh` before the pipe are not."""
    proc = drift(own_repo, tmp_path / "db", "--json")
    found = {m["name"]: m for s in json.loads(proc.stdout)["sections"] for m in s["missing"]}
    assert set(found) == {"--no-color", "APP_LEGACY_MODE", "--max-sise"}
    assert found["--no-color"]["owner"] == {"rule": "shell", "command": "shipit"}
    assert found["APP_LEGACY_MODE"]["owner"]["rule"] == ""  # no command claims it: the code reads APP_*
    assert found["--max-sise"]["did_you_mean"] == "--max-size"
    text = drift(own_repo, tmp_path / "db").stdout
    assert "--max-sise  (flag)  did you mean --max-size?" in text


def test_a_name_left_only_in_a_test_or_a_deprecation_shim_is_flagged(own_repo, tmp_path):
    """Partial renames: `--max-size` renamed in the code but kept by a test, and `--color` kept
    only beside a deprecation notice, are gone for the docs."""
    edit(own_repo / "shipit" / "cli.py", '"--max-size"', '"--size-limit"')
    edit(own_repo / "shipit" / "cli.py", 'parser.add_argument("--color", action="store_true")',
         'parser.add_argument("--paint", action="store_true")\n'
         '    # deprecated: --color was renamed to --paint\n'
         '    parser.add_argument("--color", dest="paint", help=argparse.SUPPRESS)')
    found = {m["name"] for s in json.loads(drift(own_repo, tmp_path / "db", "--json").stdout)["sections"]
             for m in s["missing"]}
    assert {"--max-size", "--color", "--no-color"} <= found


def test_a_repository_without_a_command_of_its_own_is_told_its_flags_were_not_checked(repo, tmp_path):
    """Trial finding: with no manifest naming a command (no `[project.scripts]`), flags and
    environment variables are never judged the repository's own, and `drift` said `0 drifting`
    without a word. It says so now, in text and JSON, and stops once a command is declared."""
    db = tmp_path / "i.db"
    text = drift(repo, db).stdout
    assert "not checked" in text and "declare the command" in text
    data = json.loads(drift(repo, db, "--json").stdout)
    assert data["own_commands"] == [] and "not checked" in data["note"]
    pyproject = repo / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '\n[project.scripts]\nshipit = "shipit.cli:main"\n')
    git(repo, "commit", "-qam", "declare the command")
    data = json.loads(drift(repo, db, "--json", check_exit=None).stdout)
    assert data["own_commands"] == ["shipit"] and "note" not in data
    assert "not checked" not in drift(repo, db, check_exit=None).stdout
