"""The CLI's command registry (``markdown_memory.cli.COMMANDS``): every subcommand the parser
lists is dispatched to its module's handler, with no command left to a fallback."""

from __future__ import annotations

import argparse

from markdown_memory.cli import COMMANDS, build_parser


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_subcommand_has_a_handler_of_its_own_module() -> None:
    subcommands = _subcommands(build_parser())
    assert list(subcommands) == ["index", "search", "outline", "read", "status", "list", "eval", "setup",
                                 "map", "hook", "links", "drift", "roots", "serve", "ui"]
    modules = {m.__name__ for m in COMMANDS}
    for name, sub in subcommands.items():
        handler = sub.get_default("handler")
        assert callable(handler), name
        assert handler.__module__ in modules, (name, handler.__module__)


def test_only_the_prompt_hook_always_exits_zero() -> None:
    flagged = [name for name, sub in _subcommands(build_parser()).items() if sub.get_default("always_zero")]
    assert flagged == ["hook"]


def test_docs_dir_means_the_same_for_every_command_that_reads_a_docs_root() -> None:
    helps = {name: next(a.help for a in sub._actions if "--docs-dir" in a.option_strings)
             for name, sub in _subcommands(build_parser()).items() if name not in ("index", "setup", "roots", "serve")}
    assert len(set(helps.values())) == 1, helps


def test_index_without_a_folder_uses_the_default_docs_root(tmp_path) -> None:
    """Regression (the cli/ split): `index` with neither DOCS_ROOT nor --docs-dir indexes the
    default root (MARKDOWN_MEMORY_DOCS_DIR), as before, instead of failing on a missing option."""
    import json
    import os
    import subprocess
    import sys

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nalpha text\n")
    env = dict(os.environ, MARKDOWN_MEMORY_DOCS_DIR=str(docs), MARKDOWN_MEMORY_DB=str(tmp_path / "i.db"),
               MARKDOWN_MEMORY_EMBEDDER="none", HOME=str(tmp_path / "home"))
    done = subprocess.run([sys.executable, "-m", "markdown_memory.cli", "index", "--json"], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["scanned"] == 1


def test_docs_dir_before_the_command_applies_to_it(tmp_path) -> None:
    """Regression (new-user trial): `--docs-dir DIR` written before the command was silently
    ignored and the working folder was indexed instead; it now names the command's docs root,
    and a command's own `--docs-dir` still wins."""
    import json
    import os
    import subprocess
    import sys

    docs, other, cwd = tmp_path / "docs", tmp_path / "other", tmp_path / "cwd"
    for folder, word in ((docs, "zanzibar"), (other, "quokka"), (cwd, "nothing")):
        folder.mkdir()
        (folder / "a.md").write_text(f"# A\n\n{word} lives here\n")
    env = dict(os.environ, MARKDOWN_MEMORY_EMBEDDER="none", HOME=str(tmp_path / "home"),
               XDG_DATA_HOME=str(tmp_path / "data"))
    env.pop("MARKDOWN_MEMORY_DOCS_DIR", None)

    def run(*args: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "markdown_memory.cli", *args, "--json"], env=env, cwd=cwd,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    assert run("--docs-dir", str(docs), "index")["root"] == str(docs.resolve())
    hits = run("--docs-dir", str(docs), "search", "zanzibar")["results"]
    assert [h["file_path"] for h in hits] == ["a.md"] and "zanzibar" in hits[0]["content"]
    assert run("--docs-dir", str(docs), "search", "quokka", "--docs-dir", str(other))["results"]
