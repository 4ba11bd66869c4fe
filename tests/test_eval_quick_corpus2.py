"""CI-speed retrieval regression check on the second dev corpus (``eval/corpus2``, in the repo).

Indexes two of its folders (hono: an API guide; quartz: a notes vault) with the real MiniLM
model, runs the labelled questions about them (plus the negatives) through ``Engine.search``
with the package's scoring (``markdown_memory.evaluation``, the same as ``markdown-memory eval``
and ``scripts/eval_retrieval.py``), hybrid and keyword-only, and compares with the frozen
baselines ``eval/baseline-quick2-*.json``: a metric may drop by at most one query's worth.
Re-freeze a baseline after an intended ranking change with ``MM_RECORD_EVAL=1`` (say so in the
commit, with the figures of both dev sets).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import index_folders, score_queries

#: an end-to-end eval over the shared corpus: CI runs it, README's fast suite deselects slow
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "eval" / "corpus2"
QUERIES = REPO / "eval" / "queries-corpus2-dev.jsonl"
FOLDERS = ["hono", "quartz"]


@pytest.fixture(scope="module")
def corpus2_db(tmp_path_factory: pytest.TempPathFactory, minilm) -> Path:
    return index_folders(CORPUS, FOLDERS, tmp_path_factory.mktemp("eval-quick2") / "index.db", minilm)


@pytest.mark.parametrize("embedder", ["minilm", "none"])
def test_quick_eval_on_the_second_corpus_does_not_regress(corpus2_db: Path, minilm, embedder: str) -> None:
    from markdown_memory import evaluation

    queries = evaluation.load_queries(QUERIES, folders=FOLDERS)
    results, summary = score_queries(CORPUS, corpus2_db, embedder, minilm, queries)
    baseline_file = REPO / "eval" / f"baseline-quick2-{embedder}.json"
    if os.environ.get("MM_RECORD_EVAL") == "1":
        baseline_file.write_text(json.dumps({"summary": summary}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    baseline = json.loads(baseline_file.read_text(encoding="utf-8"))
    assert len(queries) == baseline["summary"]["all_queries"]["n"], "the question file changed; refreeze the baseline"
    failures = evaluation.compare(summary, baseline)
    assert not failures, "retrieval regressed:\n" + "\n".join(failures) + "\n\n" + evaluation.format_misses(results)
