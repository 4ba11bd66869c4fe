"""The console script's fast paths (``entry.py``) know the CLI's options without importing the
CLI: their option sets must say what the argparse parser says, so a line the fast path takes
means what the full CLI would make of it, and a new option is not silently mis-read."""

from __future__ import annotations

import argparse

from markdown_memory import entry
from markdown_memory.cli import build_parser

#: global options the fast paths leave to the full CLI on purpose (a line holding one goes there)
_LEFT_TO_THE_CLI = {"-h", "--help", "--version", "--download-model", "--log-level",
                    "--ranker"}  # a process setting the service does not take from its clients


def _options(parser: argparse.ArgumentParser) -> tuple[set[str], set[str]]:
    """(options taking a value, options taking none) of ``parser`` itself, long forms."""
    valued: set[str] = set()
    flags: set[str] = set()
    for action in parser._actions:  # argparse has no public listing of its actions
        if isinstance(action, argparse._SubParsersAction) or not action.option_strings:
            continue
        (flags if action.nargs == 0 else valued).update(action.option_strings)
    return valued, flags


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[name]
    raise AssertionError("the CLI has no commands")


def test_global_option_sets_match_the_parser():
    valued, flags = _options(build_parser())
    assert entry._GLOBAL_VALUED <= valued
    assert entry._GLOBAL_FLAGS <= flags
    known = entry._GLOBAL_VALUED | entry._GLOBAL_FLAGS | _LEFT_TO_THE_CLI
    assert (valued | flags) - known == set(), "a global option the fast path neither knows nor leaves to the CLI"


def test_hook_option_set_matches_the_parser():
    valued, flags = _options(_subparser(build_parser(), "hook"))
    assert entry._HOOK_VALUED <= valued
    # the hook's other options (--embedder, --verbose, ...) run in the full CLI: slower, same answer
    for option in (valued | flags) - entry._HOOK_VALUED:
        line = ["hook", option] + (["x"] if option in valued else [])
        assert entry._scan(line) is None, line


def test_a_line_with_an_option_the_fast_path_does_not_know_goes_to_the_cli():
    assert entry._scan(["--docs-dir", "/docs", "hook", "--max-tokens", "100"]) == (
        "hook", {"--docs-dir": "/docs"}, {"--max-tokens": "100"})
    assert entry._scan(["--log-level", "DEBUG"]) is None
    assert entry._scan(["hook", "--verbose"]) is None
