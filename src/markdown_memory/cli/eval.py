"""``markdown-memory eval QUESTIONS.jsonl``: score search on a user's own labelled questions.

Indexes the docs root first (incrementally, as ``index`` does), runs every question through the
same search the MCP tool answers with, and prints the figures of :mod:`..evaluation` (Top-1,
Recall@5, MRR@10, answer in a hit with text, answer tokens, per type; negatives flagged; precision
of ``confidence: high``), the misses per bucket of :mod:`..eval_taxonomy`, and each miss, under
its bucket, with what came first; ``--json`` prints one object
instead. The questions file format is in :mod:`..evaluation` and docs/evaluation.md.

Imported when the parser is built (at start-up): the scoring (numpy, the engine) is imported
only when the command runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .options import add_docs_dir, add_json, emit, open_engine


def register(sub: Any) -> None:
    """Add ``eval`` to the subcommand parsers ``sub`` (``--docs-dir`` and the run options,
    ``--embedder`` among them, may follow the command)."""
    p = sub.add_parser("eval", help="score search on your own labelled questions (docs/evaluation.md)")
    p.add_argument("questions", metavar="QUESTIONS.jsonl", help="JSON Lines file: one question per line with "
                   '"query" and "expect": [{"path", "line"}] (paths relative to the docs root)')
    add_docs_dir(p)
    p.add_argument("--features", metavar="FILE", help="also write, per question, its first 50 candidates' ranking "
                   "features and whether each answers (JSON Lines, the learned ranker's training data: docs/ranking.md)")
    p.add_argument("--no-misses", action="store_true", help="print the figures only, not each miss")
    add_json(p, help="print one JSON object (figures and every question)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Index (a progress bar on stderr), score, print. Raises QuestionsFileError for a bad
    questions file (before indexing)."""
    from ..progress import Progress

    with open_engine(args) as engine:
        return score(engine, args, Progress())


def score(engine: Any, args: argparse.Namespace, progress: Any) -> int:
    """Index, score, print. ``progress``: the CLI's progress bar (called during indexing, then
    ``finish()``). Raises QuestionsFileError for a bad questions file (before indexing)."""
    from .. import messages_eval
    from ..eval_taxonomy import format_buckets, miss_ids
    from ..evaluation import format_misses_by_bucket, format_table, is_miss, load_queries, run_queries, summarise

    path = Path(args.questions)
    queries = load_queries(path)
    engine.index(progress=progress)
    progress.finish()
    results = run_queries(engine, queries)
    if getattr(args, "features", None):
        from ..eval_features import export_features

        export_features(engine, queries, Path(args.features))
    summary = summarise(results)
    status = engine.status()
    data = {
        "questions": str(path), "root": str(engine.root), "embedder": engine.settings.embedder,
        "keyword_only": status.keyword_only, "summary": summary, "misses": miss_ids(results), "results": [r.to_dict() for r in results],
    }
    if args.json:
        emit(data)
        return 0
    negatives = sum(r.negative for r in results)
    mode = "keyword-only" if status.keyword_only else "hybrid"
    print(f"{len(results)} questions ({negatives} negative) from {path} over {engine.root}; "
          f"embedder {engine.settings.embedder}, {mode} search")
    print(format_table(summary))
    print(messages_eval.EVAL_LEGEND)
    print()
    print(format_buckets(summary))
    print(messages_eval.EVAL_BUCKET_LEGEND)
    unusable = [(r.id, where, why) for r in results for where, why in r.unusable.items()]
    if unusable:
        print(messages_eval.eval_unusable(unusable))
    if status.keyword_only and status.message:
        print(f"note: {status.message}")
    if not args.no_misses:
        misses = [r for r in results if is_miss(r)]
        print()
        print(f"misses ({len(misses)}):" if misses else "no misses: every first hit is right and carries its text")
        if misses:
            print(format_misses_by_bucket(misses))
    return 0
