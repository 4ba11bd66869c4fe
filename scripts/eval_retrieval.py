#!/usr/bin/env python3
"""Retrieval-quality harness: run labelled queries through ``Engine.search`` and score them.

The scoring lives in ``markdown_memory.evaluation`` (the same one ``markdown-memory eval``
uses; its docstring and docs/evaluation.md give the questions format and every figure): Top-1,
Recall@5, MRR@10, answer inside a hit with text, answer tokens and latency, per query type and
``cjk/*``, ``lang/zh>zh``, ``lang/cross``; each miss's bucket (``markdown_memory.eval_taxonomy``:
file_absent, file_no_section, wrong_section, lower) counted per group; negatives flagged ``confidence == "none"``; precision
of ``confidence == "high"`` (share of high answers whose top hit is correct).

Several dev sets: ``--set NAME=CORPUS:QUERIES`` (repeatable) scores each and prints a table per
set, then one line per set side by side; without ``--set`` the one set is ``--corpus`` /
``--queries``. ``--baseline-out`` freezes the numbers (one set: ``{meta, summary, ranks}``; several:
``{"sets": {NAME: {...}}}``); ``--compare`` fails (exit 1) when a quality metric drops by more than
one query's worth (``1/n`` of its group) plus ``--margin``, for every set the baseline holds.

Usage::

    python scripts/eval_retrieval.py --corpus ../shared/eval-corpus \\
        --queries ../shared/eval-queries-dev.jsonl --embedder minilm --db /tmp/eval/minilm.db
    python scripts/eval_retrieval.py --embedder minilm --db-dir /tmp/eval \\
        --set dev=../shared/eval-corpus:../shared/eval-queries-dev.jsonl \\
        --set corpus2=eval/corpus2:eval/queries-corpus2-dev.jsonl
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

from markdown_memory.config import EMBEDDER_CHOICES, Settings
from markdown_memory.engine import Engine
from markdown_memory.errors import MarkdownMemoryError
from markdown_memory.eval_taxonomy import BUCKETS, format_buckets, miss_ids
from markdown_memory.evaluation import (  # noqa: F401  (re-exported: tests/test_eval_quick.py)
    MAX_TOKENS,
    QUALITY,
    TOP_K,
    QueryResult,
    answer_tokens,
    compare,
    first_correct,
    format_misses,
    format_misses_by_bucket,
    format_table,
    load_queries,
    page_language,
    run_queries,
    summarise,
)


def open_engine(corpus: Path, db: Path, embedder: str, folders: list[str] | None = None,
                vector_cache: bool = False) -> Engine:
    """An engine over ``corpus`` with database ``db``, indexed (only ``folders`` when given)
    when the database has no documents yet; ``vector_cache``: KNN through the MCP server's
    in-memory quantized vectors (``store.VectorCache``) instead of sqlite-vec's exact scan."""
    engine = Engine(Settings.load(corpus, db, embedder), vectors_in_memory=vector_cache)
    if not engine.status().counts.documents:
        started = time.monotonic()
        for folder in folders or [None]:
            engine.index(folder)
        logging.getLogger("eval").info("indexed %s in %.0f s", corpus, time.monotonic() - started)
    return engine


def parse_set(text: str) -> tuple[str, Path, Path]:
    """``NAME=CORPUS:QUERIES`` -> (name, corpus, queries); raises argparse.ArgumentTypeError."""
    name, sep, rest = text.partition("=")
    corpus, colon, queries = rest.rpartition(":")
    if not (sep and colon and name and corpus and queries):
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=CORPUS:QUERIES")
    return name, Path(corpus), Path(queries)


def score_set(name: str, corpus: Path, queries_path: Path, db: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Index (when empty) and score one set: ``{name, meta, summary, results, header}``."""
    folders = [f.strip() for f in args.folders.split(",")] if args.folders else None
    ids = args.ids.split(",") if args.ids else None
    queries = load_queries(queries_path, ids, args.limit, folders, root=corpus.resolve())
    engine = open_engine(corpus.resolve(), db, args.embedder, folders, args.vector_cache)
    try:
        results = run_queries(engine, queries)
        if args.features:
            from markdown_memory.eval_features import export_features

            export_features(engine, queries, features_path(args.features, name, len(args.sets or []) > 1))
        status = engine.status()
    finally:
        engine.close()
    counts = status.counts
    header = (f"[{name}] corpus {corpus} ({counts.documents} files, {counts.sections} sections), "
              f"{len(queries)} queries, embedder {args.embedder}, keyword_only={status.keyword_only}")
    meta = {"embedder": args.embedder, "queries": str(queries_path.name), "folders": folders,
            "documents": counts.documents, "sections": counts.sections}
    return {"name": name, "meta": meta, "summary": summarise(results), "results": results, "header": header}


def features_path(path: Path, name: str, several: bool) -> Path:
    """Where ``--features`` writes set ``name``: ``path`` itself, or ``STEM-NAME.jsonl`` beside it
    when several sets run."""
    return path.with_name(f"{path.stem}-{name}{path.suffix or '.jsonl'}") if several else path


def side_by_side(scored: list[dict[str, Any]]) -> str:
    """One row per group, per set ``top1 / R@5 (n)``; then negatives flagged and high precision."""
    groups: list[str] = []
    for s in scored:
        groups += [g for g in s["summary"] if g not in groups and g not in ("negative", "confidence", "all_queries")]
    head = f"{'group':<12}" + "".join(f" {s['name'][:22]:>24}" for s in scored)
    lines = [head + "   (top1 / R@5 / n)"]
    for g in groups:
        cells = []
        for s in scored:
            m = s["summary"].get(g)
            cells.append(f"{m['top1']:>7.1%} / {m['r5']:>6.1%} / {m['n']:>3}" if m else f"{'-':>24}")
        lines.append(f"{g:<12}" + "".join(f" {c:>24}" for c in cells))
    neg = [s["summary"].get("negative") for s in scored]
    flagged = [None if m is None else m["flagged_none"] for m in neg]
    high = [s["summary"].get("confidence", {}).get("high_precision") for s in scored]
    for label, values in (("neg flagged", flagged), ("high prec", high)):
        lines.append(f"{label:<12}" + "".join(f" {'-' if v is None else format(v, '.1%'):>24}" for v in values))
    for bucket in BUCKETS:  # the overall misses of each taxonomy bucket (markdown_memory.eval_taxonomy)
        counts = [s["summary"].get("overall", {}).get("buckets", {}).get(bucket) for s in scored]
        lines.append(f"{bucket[:12]:<12}" + "".join(f" {'-' if c is None else c:>24}" for c in counts))
    return "\n".join(lines)


def _entry(s: dict[str, Any], ranks: bool) -> dict[str, Any]:
    out = {"meta": s["meta"], "summary": s["summary"]}
    if ranks:
        out["ranks"] = {r.id: r.rank for r in s["results"]}
    else:
        out["misses"] = miss_ids(s["results"])
        out["queries"] = [r.to_dict() for r in s["results"]]
    return out


def compare_all(scored: list[dict[str, Any]], baseline: dict[str, Any], margin: float) -> list[str]:
    """compare() for every set: a ``{"sets": ...}`` baseline by set name (sets absent from the run
    are skipped), a one-set baseline against the run's set of the same queries file (else the first)."""
    if "sets" in baseline:
        return [f"{s['name']}: {f}" for s in scored if s["name"] in baseline["sets"]
                for f in compare(s["summary"], baseline["sets"][s["name"]], margin)]
    wanted = baseline.get("meta", {}).get("queries")
    target = next((s for s in scored if s["meta"]["queries"] == wanted), scored[0])
    return compare(target["summary"], baseline, margin)


def main(argv: list[str] | None = None) -> int:
    here = Path(__file__).resolve().parents[1]
    shared = here.parent / "shared"
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=shared / "eval-corpus")
    ap.add_argument("--queries", type=Path, default=shared / "eval-queries-dev.jsonl")
    ap.add_argument("--set", dest="sets", action="append", type=parse_set, metavar="NAME=CORPUS:QUERIES",
                    help="a dev set to score (repeatable; replaces --corpus/--queries)")
    ap.add_argument("--embedder", default="minilm", choices=EMBEDDER_CHOICES)
    ap.add_argument("--db", type=Path, help="index database to reuse (indexed first when empty; one set only); "
                    "default: a temp file")
    ap.add_argument("--db-dir", type=Path, help="folder of databases to reuse, NAME-EMBEDDER.db per set")
    ap.add_argument("--folders", help="comma-separated corpus sub-folders: index only these and keep only queries about them")
    ap.add_argument("--ids", help="comma-separated query ids to run (a subset)")
    ap.add_argument("--limit", type=int, help="run at most N queries")
    ap.add_argument("--json-out", type=Path, help="write summary and per-query results here")
    ap.add_argument("--baseline-out", type=Path, help="write a baseline file (summary + per-query ranks)")
    ap.add_argument("--compare", type=Path, metavar="BASELINE", help="exit 1 when a metric drops beyond noise")
    ap.add_argument("--margin", type=float, default=0.0, help="extra allowed drop for --compare (fraction)")
    ap.add_argument("--vector-cache", action="store_true",
                    help="KNN through the server's in-memory quantized vectors (default: sqlite-vec's exact scan)")
    ap.add_argument("--features", type=Path, metavar="FILE",
                    help="also write each question's first 50 candidates' ranking features and labels (JSON Lines; "
                    "FILE-NAME.jsonl per set when several run; markdown_memory/eval_features.py)")
    ap.add_argument("--ranker", choices=("rrf", "learned"),
                    help="how search orders candidates (default: $MARKDOWN_MEMORY_RANKER, else the shipped default)")
    ap.add_argument("--show-misses", action="store_true", help="print each miss with what came first")
    args = ap.parse_args(argv)
    if args.ranker:
        import os

        os.environ["MARKDOWN_MEMORY_RANKER"] = args.ranker
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")

    sets = args.sets or [("dev", args.corpus, args.queries)]
    if args.db and len(sets) > 1:
        print("--db names one database; use --db-dir with several --set", file=sys.stderr)
        return 2
    scored = []
    for name, corpus, queries_path in sets:
        if not corpus.is_dir() or not queries_path.is_file():
            print(f"[{name}] corpus {corpus} or queries {queries_path} not found", file=sys.stderr)
            return 2
        if args.db:
            db = args.db
        elif args.db_dir:
            args.db_dir.mkdir(parents=True, exist_ok=True)
            db = args.db_dir / f"{name}-{args.embedder}.db"
        else:
            import tempfile

            db = Path(tempfile.mkdtemp(prefix="mm-eval-")) / "index.db"
        try:
            s = score_set(name, corpus, queries_path, db, args)
        except MarkdownMemoryError as exc:
            print(f"[{name}] {exc}", file=sys.stderr)
            return 2
        scored.append(s)
        print(s["header"])
        print(format_table(s["summary"]))
        print(format_buckets(s["summary"]))
        if args.show_misses:
            print()
            print(format_misses_by_bucket(s["results"]))
        print()
    if len(scored) > 1:
        print(side_by_side(scored))
    one = len(scored) == 1
    if args.json_out:
        data = _entry(scored[0], False) if one else {"sets": {s["name"]: _entry(s, False) for s in scored}}
        args.json_out.write_text(json.dumps(data, indent=1, ensure_ascii=False))
    if args.baseline_out:
        data = _entry(scored[0], True) if one else {"sets": {s["name"]: _entry(s, True) for s in scored}}
        args.baseline_out.write_text(json.dumps(data, indent=1) + "\n")
    if args.compare:
        failures = compare_all(scored, json.loads(args.compare.read_text()), args.margin)
        for f in failures:
            print(f"REGRESSION {f}", file=sys.stderr)
        if failures:
            return 1
        print(f"no regression against {args.compare}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
