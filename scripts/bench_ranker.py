#!/usr/bin/env python3
"""What the learned ranker and the calibration add to a search: the time of building the feature
rows of the first stage's 50 candidates (``search/features.py``), of scoring them with the
shipped model (numpy), and of the calibrated answer probability (``calibration.estimate``: its
features and three logistic models), per question, as medians; and the whole search's median
with ``--ranker rrf`` and ``learned`` over the same questions.

Usage::

    python scripts/bench_ranker.py --corpus ../shared/eval-corpus --queries ../shared/eval-queries-dev.jsonl \\
        --db /work/evaldb/rank/shared-minilm.db --embedder minilm
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_retrieval import open_engine  # noqa: E402
from markdown_memory.evaluation import load_queries  # noqa: E402
from markdown_memory.models import Freshness, SearchRequest  # noqa: E402
from markdown_memory.search import learned  # noqa: E402
from markdown_memory.search import rank as ranking  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--queries", type=Path, required=True)
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--repeat", type=int, default=20, help="timings of the scorer per question")
    args = ap.parse_args(argv)
    queries = load_queries(args.queries)
    engine = open_engine(args.corpus.resolve(), args.db, args.embedder)
    model = learned.shipped_model()
    feature_ms: list[float] = []
    score_ms: list[float] = []
    sizes: list[int] = []
    real_features = learned.features

    def timed_features(pool, ordered):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        rows = real_features(pool, ordered)
        feature_ms.append((time.perf_counter() - t0) * 1000)
        return rows

    estimate_ms: list[float] = []
    real_estimate = ranking.estimate

    def timed_estimate(*args, **kwargs):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        out = real_estimate(*args, **kwargs)
        estimate_ms.append((time.perf_counter() - t0) * 1000)
        return out

    learned.features = timed_features  # type: ignore[assignment]
    ranking.estimate = timed_estimate  # type: ignore[assignment]
    search_ms: dict[str, list[float]] = {"rrf": [], "learned": []}
    try:
        engine.search(SearchRequest("warm up", top_k=5), freshness=Freshness.FLAG)
        for q in queries:
            for ranker in ("rrf", "learned"):
                os.environ["MARKDOWN_MEMORY_RANKER"] = ranker
                t0 = time.perf_counter()
                engine.search(SearchRequest(q["query"], top_k=5), freshness=Freshness.FLAG)
                search_ms[ranker].append((time.perf_counter() - t0) * 1000)
            with learned.capture() as seen:  # the rows scored (capturing costs no search time above)
                engine.search(SearchRequest(q["query"], top_k=5), freshness=Freshness.FLAG)
            if seen:
                rows = seen[-1].rows
                sizes.append(len(rows))
                scorer = model.for_mode(seen[-1].has_vectors)
                t0 = time.perf_counter()
                for _ in range(args.repeat):
                    s = scorer.score(rows)
                    sorted(range(len(s)), key=lambda i: (-s[i], i))
                score_ms.append((time.perf_counter() - t0) * 1000 / args.repeat)
    finally:
        learned.features = real_features  # type: ignore[assignment]
        ranking.estimate = real_estimate  # type: ignore[assignment]
        engine.close()
    print(f"{len(queries)} questions, candidates per question median {statistics.median(sizes)}")
    print(f"feature rows: median {statistics.median(feature_ms):.3f} ms; numpy scoring + order: median "
          f"{statistics.median(score_ms):.3f} ms")
    print(f"calibration (estimate): median {statistics.median(estimate_ms):.3f} ms; scoring + calibration: "
          f"median {statistics.median(score_ms) + statistics.median(estimate_ms):.3f} ms")
    rrf, lrn = statistics.median(search_ms["rrf"]), statistics.median(search_ms["learned"])
    print(f"whole search median: rrf {rrf:.1f} ms, learned {lrn:.1f} ms (ratio {lrn / rrf:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
