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
                                 "map", "hook", "links", "drift", "roots"]
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
             for name, sub in _subcommands(build_parser()).items() if name not in ("index", "setup", "roots")}
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
