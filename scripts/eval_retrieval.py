#!/usr/bin/env python3
"""Retrieval-quality harness: run labelled queries through ``Engine.search`` and score them.

Queries are JSON Lines (``id``, ``query``, ``type``, ``lang``, ``expect: [{path, line,
heading}]``) as in ``../shared/eval-queries-dev.jsonl``. Each query goes through the same
``Engine.search`` the MCP tool calls, at its defaults (``top_k=5``, ``max_tokens=2000``); a hit
is correct when its file matches an expected path and its line range contains the expected
line. Printed per query type and overall:

* ``top1``, ``r5`` (Recall@5), ``mrr10`` (MRR@10, from a second, untimed call with top_k=10);
* ``inhit`` - share whose answer is inside a top-5 hit that carries its text (not a pointer);
* ``none_pos`` - share of answerable queries wrongly flagged ``confidence == "none"``;
* ``n``, median latency (ms) of the default call, median tokens of the JSON answer as the
  MCP tool sends it (``answer_tokens``).

Besides the query types, ``lang/zh>zh`` holds Chinese questions about Chinese pages and
``lang/cross`` questions whose language differs from the page's (an English-only model cannot
bridge those; the page language is read from the expected file).

``negative`` queries (``expect: []``) are scored apart: the share flagged ``confidence ==
"none"``. ``--baseline-out`` freezes the numbers; ``--compare`` fails (exit 1) when a quality
metric drops by more than one query's worth (``1/n`` of its group) plus ``--margin``.

Usage::

    python scripts/eval_retrieval.py --corpus ../shared/eval-corpus \\
        --queries ../shared/eval-queries-dev.jsonl --embedder minilm --db /tmp/eval/minilm.db
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markdown_memory.config import Settings
from markdown_memory.engine import Engine
from markdown_memory.models import SearchAnswer
from markdown_memory.search.rank import cjk_share
from markdown_memory.text import count_tokens

QUALITY = ("top1", "r5", "mrr10", "inhit")
TOP_K = 5
MAX_TOKENS = 2000


@dataclass
class QueryResult:
    """Outcome of one labelled query: ``rank`` is the 0-based position of the first correct hit
    in the top-10 list (None = not found); ``rank5`` the same within the default top-5 answer."""

    id: str
    query: str
    type: str
    lang: str
    expect: list[dict[str, Any]]
    rank: int | None = None
    rank5: int | None = None
    in_content: bool = False
    confidence: str = ""
    latency_ms: float = 0.0
    tokens: int = 0
    top: list[dict[str, Any]] = field(default_factory=list)
    doc_lang: str = ""  # "zh" when the expected page is mostly CJK text, else "en"

    @property
    def negative(self) -> bool:
        return not self.expect


def load_queries(path: Path, ids: Iterable[str] | None = None, limit: int | None = None,
                 folders: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Read the JSONL file; keep only ``ids`` (when given), queries whose every expected path
    lies under one of ``folders`` (negatives are always kept), and at most ``limit``."""
    wanted = set(ids or [])
    tops = tuple(f.strip("/") + "/" for f in (folders or []))
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        if wanted and q["id"] not in wanted:
            continue
        if tops and q["expect"] and not all(e["path"].startswith(tops) for e in q["expect"]):
            continue
        out.append(q)
    return out[:limit] if limit else out


def first_correct(results: list[dict[str, Any]], expect: list[dict[str, Any]]) -> int | None:
    """0-based position of the first hit (wire shape: ``Hit.to_dict()`` or an MCP answer's
    hits) whose file is an expected path and whose line range holds its line; None: none is."""
    for i, hit in enumerate(results):
        for e in expect:
            if hit["file_path"] == e["path"] and hit["start_line"] <= e["line"] <= hit["end_line"]:
                return i
    return None


def answer_tokens(answer: SearchAnswer) -> int:
    """Estimated tokens of the answer as the MCP ``search_docs`` tool returns it (its agent
    view: a hit that carries content drops its preview), without the ``index_status`` the tool
    adds to every answer (left out so the figure stays comparable with earlier baselines)."""
    shown = answer.to_dict(agent=True)
    shown.pop("index_status", None)
    return count_tokens(json.dumps(shown, ensure_ascii=False))


def page_language(path: Path) -> str:
    """"zh" when at least 5% of the letters in the page's first 20,000 characters are CJK (Chinese
    pages carry much code and English; English pages have none)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")[:20000]
    except OSError:
        return "?"
    return "zh" if cjk_share(text) >= 0.05 else "en"


def run_queries(engine: Engine, queries: list[dict[str, Any]]) -> list[QueryResult]:
    """Search every query (one warm-up search first so model loading is not timed)."""
    engine.search("warm up", top_k=TOP_K, max_tokens=MAX_TOKENS)
    out = []
    for q in queries:
        r = QueryResult(q["id"], q["query"], q.get("type", "?"), q.get("lang", "?"), q.get("expect", []))
        if r.expect:
            r.doc_lang = page_language(engine.root / r.expect[0]["path"])
        t0 = time.perf_counter()
        ans = engine.search(q["query"], top_k=TOP_K, max_tokens=MAX_TOKENS)
        r.latency_ms = (time.perf_counter() - t0) * 1000
        r.tokens = answer_tokens(ans)
        r.confidence = ans.confidence
        hits = [h.to_dict() for h in ans.results]
        r.rank5 = first_correct(hits, r.expect)
        r.in_content = r.rank5 is not None and ans.results[r.rank5].content is not None
        wide = [h.to_dict() for h in engine.search(q["query"], top_k=10, max_tokens=MAX_TOKENS).results]
        r.rank = first_correct(wide, r.expect)
        r.top = [
            {k: h.get(k) for k in ("file_path", "heading_path", "start_line", "end_line", "score", "matched_by")}
            | {"content": "content" in h}
            for h in wide[:5]
        ]
        out.append(r)
    return out


def summarise(results: list[QueryResult]) -> dict[str, Any]:
    """Metrics per group: ``overall``, each type, ``cjk/zh`` and ``cjk/en`` (by question
    language), ``lang/zh>zh`` (Chinese questions on Chinese pages) and ``lang/cross`` (question
    and page in different languages, any type); ``negative``."""
    groups: dict[str, list[QueryResult]] = {}
    for r in results:
        if r.negative:
            continue
        groups.setdefault("overall", []).append(r)
        groups.setdefault(r.type, []).append(r)
        if r.type == "cjk":
            groups.setdefault(f"cjk/{r.lang}", []).append(r)
        if r.lang == "zh" and r.doc_lang == "zh":
            groups.setdefault("lang/zh>zh", []).append(r)
        elif r.doc_lang and r.lang in ("zh", "en") and r.lang != r.doc_lang:
            groups.setdefault("lang/cross", []).append(r)
    out: dict[str, Any] = {}
    for name, rs in sorted(groups.items(), key=lambda kv: (kv[0] != "overall", kv[0])):
        n = len(rs)
        out[name] = {
            "n": n,
            "top1": sum(r.rank == 0 for r in rs) / n,
            "r5": sum(r.rank5 is not None for r in rs) / n,
            "mrr10": sum(1.0 / (r.rank + 1) for r in rs if r.rank is not None) / n,
            "inhit": sum(r.in_content for r in rs) / n,
            "none_pos": sum(r.confidence == "none" for r in rs) / n,
            "p50_ms": round(statistics.median(r.latency_ms for r in rs), 1),
            "p50_tokens": statistics.median(r.tokens for r in rs),
        }
    neg = [r for r in results if r.negative]
    if neg:
        out["negative"] = {"n": len(neg), "flagged_none": sum(r.confidence == "none" for r in neg) / len(neg),
                           "p50_ms": round(statistics.median(r.latency_ms for r in neg), 1)}
    if results:
        out["all_queries"] = {
            "n": len(results),
            "p50_ms": round(statistics.median(r.latency_ms for r in results), 1),
            "p95_ms": round(sorted(r.latency_ms for r in results)[int(0.95 * (len(results) - 1))], 1),
            "p50_tokens": statistics.median(r.tokens for r in results),
        }
    return out


def format_table(summary: dict[str, Any]) -> str:
    lines = [f"{'group':<12} {'n':>3} {'top1':>6} {'R@5':>6} {'MRR10':>6} {'inhit':>6} {'none+':>6} {'p50ms':>7} {'p50tok':>7}"]
    for name, m in summary.items():
        if name in ("negative", "all_queries"):
            continue
        lines.append(
            f"{name:<12} {m['n']:>3} {m['top1']:>6.1%} {m['r5']:>6.1%} {m['mrr10']:>6.3f} {m['inhit']:>6.1%} "
            f"{m['none_pos']:>6.1%} {m['p50_ms']:>7.1f} {m['p50_tokens']:>7.0f}"
        )
    if "negative" in summary:
        m = summary["negative"]
        lines.append(f"{'negative':<12} {m['n']:>3} flagged confidence=none: {m['flagged_none']:.1%}")
    if "all_queries" in summary:
        m = summary["all_queries"]
        lines.append(f"all {m['n']} queries: latency p50 {m['p50_ms']} ms, p95 {m['p95_ms']} ms; "
                     f"answer p50 {m['p50_tokens']:.0f} tokens")
    return "\n".join(lines)


def format_misses(results: list[QueryResult]) -> str:
    out = []
    for r in results:
        if (r.negative and r.confidence == "none") or (not r.negative and r.rank == 0 and r.in_content):
            continue
        kind = "NEG" if r.negative else ("MISS" if r.rank5 is None else f"rank {r.rank5 + 1}")
        out.append(f"[{r.id} {r.type}/{r.lang}] {kind} conf={r.confidence}: {r.query}")
        for e in r.expect:
            out.append(f"    want {e['path']}:{e['line']}  ({e.get('heading', '')})")
        for i, h in enumerate(r.top):
            mark = "*" if r.rank == i else " "
            out.append(f"   {mark}{i + 1}. {h['file_path']}:{h['start_line']}-{h['end_line']} {h['heading_path'][:70]!r} "
                       f"{'+'.join(h['matched_by'] or [])}{'' if h['content'] else ' (pointer)'}")
    return "\n".join(out)


def compare(summary: dict[str, Any], baseline: dict[str, Any], margin: float = 0.0) -> list[str]:
    """Quality drops beyond noise: for each group and metric, a drop larger than one query's
    worth (``1/n``) plus ``margin``. Returns human-readable failures (empty = pass)."""
    base = baseline.get("summary", baseline)
    failures = []
    for name, old in base.items():
        new = summary.get(name)
        if new is None or name == "all_queries":
            continue
        metrics = ("flagged_none",) if name == "negative" else QUALITY
        noise = 1.0 / max(1, old.get("n", 1)) + margin + 1e-9
        for metric in metrics:
            if metric in old and new.get(metric, 0.0) < old[metric] - noise:
                failures.append(f"{name}.{metric}: {new[metric]:.3f} < baseline {old[metric]:.3f} (noise {noise:.3f})")
    return failures


def open_engine(corpus: Path, db: Path, embedder: str, folders: list[str] | None = None) -> Engine:
    """An engine over ``corpus`` with database ``db``, indexed (only ``folders`` when given)
    when the database has no documents yet."""
    engine = Engine(Settings.load(corpus, db, embedder))
    if not engine.status().counts.documents:
        started = time.monotonic()
        for folder in folders or [None]:
            engine.index(folder)
        logging.getLogger("eval").info("indexed %s in %.0f s", corpus, time.monotonic() - started)
    return engine


def main(argv: list[str] | None = None) -> int:
    here = Path(__file__).resolve().parents[1]
    shared = here.parent / "shared"
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=shared / "eval-corpus")
    ap.add_argument("--queries", type=Path, default=shared / "eval-queries-dev.jsonl")
    ap.add_argument("--embedder", default="minilm", choices=("minilm", "none", "embeddinggemma"))
    ap.add_argument("--db", type=Path, help="index database to reuse (indexed first when empty); default: a temp file")
    ap.add_argument("--folders", help="comma-separated corpus sub-folders: index only these and keep only queries about them")
    ap.add_argument("--ids", help="comma-separated query ids to run (a subset)")
    ap.add_argument("--limit", type=int, help="run at most N queries")
    ap.add_argument("--json-out", type=Path, help="write summary and per-query results here")
    ap.add_argument("--baseline-out", type=Path, help="write a baseline file (summary + per-query ranks)")
    ap.add_argument("--compare", type=Path, metavar="BASELINE", help="exit 1 when a metric drops beyond noise")
    ap.add_argument("--margin", type=float, default=0.0, help="extra allowed drop for --compare (fraction)")
    ap.add_argument("--show-misses", action="store_true", help="print each miss with what came first")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")

    if not args.corpus.is_dir() or not args.queries.is_file():
        print(f"corpus {args.corpus} or queries {args.queries} not found", file=sys.stderr)
        return 2
    folders = [f.strip() for f in args.folders.split(",")] if args.folders else None
    ids = args.ids.split(",") if args.ids else None
    queries = load_queries(args.queries, ids, args.limit, folders)
    if args.db is None:
        import tempfile

        args.db = Path(tempfile.mkdtemp(prefix="mm-eval-")) / "index.db"
    engine = open_engine(args.corpus.resolve(), args.db, args.embedder, folders)
    results = run_queries(engine, queries)
    summary = summarise(results)
    counts = engine.status().counts
    header = (f"corpus {args.corpus} ({counts.documents} files, {counts.sections} sections), "
              f"{len(queries)} queries, embedder {args.embedder}, keyword_only={engine.search('x').keyword_only}")
    print(header)
    print(format_table(summary))
    if args.show_misses:
        print()
        print(format_misses(results))
    meta = {"embedder": args.embedder, "queries": str(args.queries.name), "folders": folders,
            "documents": counts.documents, "sections": counts.sections}
    if args.json_out:
        args.json_out.write_text(json.dumps({"meta": meta, "summary": summary,
                                             "queries": [r.__dict__ for r in results]}, indent=1, ensure_ascii=False))
    if args.baseline_out:
        args.baseline_out.write_text(json.dumps({"meta": meta, "summary": summary,
                                                 "ranks": {r.id: r.rank for r in results}}, indent=1) + "\n")
    if args.compare:
        failures = compare(summary, json.loads(args.compare.read_text()), args.margin)
        for f in failures:
            print(f"REGRESSION {f}", file=sys.stderr)
        if failures:
            return 1
        print(f"no regression against {args.compare}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
