"""CI-speed retrieval regression check on a subset of the shared eval set.

Indexes only three sub-folders of ``../shared/eval-corpus`` (httpx, ripgrep, runbooks) with the
real MiniLM model (the session's ``eval_quick_db``), runs the dev queries about them (plus the negatives) through
``Engine.search`` exactly as ``scripts/eval_retrieval.py`` does, hybrid and keyword-only, and
compares with the frozen baselines in ``eval/``: a metric may drop by at most one query's
worth (plus a small margin for latency-independent ties) before the test fails. Skips when the
shared corpus is absent.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from conftest import EVAL_CORPUS, EVAL_QUERIES, EVAL_QUICK_FOLDERS, score_queries

#: an end-to-end eval over the shared corpus: CI runs it, README's fast suite deselects slow
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
FOLDERS = EVAL_QUICK_FOLDERS
MARGIN = 0.0


def _harness():
    """Load scripts/eval_retrieval.py under a module name of its own, registered in sys.modules
    *before* it runs (its dataclasses look their module up there); another test loading the
    same file under another name cannot clash with it."""
    name = "markdown_memory_eval_quick_harness"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / "eval_retrieval.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@pytest.mark.parametrize("embedder", ["minilm", "none"])
def test_quick_eval_does_not_regress(eval_quick_db, minilm, embedder):
    harness = _harness()
    baseline_file = REPO / "eval" / f"baseline-quick-{embedder}.json"
    baseline = json.loads(baseline_file.read_text())
    queries = harness.load_queries(EVAL_QUERIES, folders=FOLDERS)
    assert len(queries) == baseline["summary"]["all_queries"]["n"], "the dev query file changed; refreeze the baseline"
    results, summary = score_queries(EVAL_CORPUS, eval_quick_db, embedder, minilm, queries)
    failures = harness.compare(summary, baseline, MARGIN)
    assert not failures, "retrieval regressed:\n" + "\n".join(failures) + "\n\n" + harness.format_misses(results)
