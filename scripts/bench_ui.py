#!/usr/bin/env python3
"""Benchmark the local page's search (docs/ui.md): server time per search page over a corpus.

Indexes the corpus (default ../shared/eval-corpus) with one preset into ``--db`` (reused when it
exists), serves it as the resident service does (``mcp.http.HttpServer`` on an ephemeral
loopback port, one background engine, the ``/ui`` page mounted), and asks the search page once
per question of ``--queries`` over real HTTP with the bearer token, after one untimed warm-up
page. Each question is timed once, cold (its query vector not yet cached): by the page for the
even positions, by ``Engine.search`` for the odd ones. Prints medians and 95th percentiles, in
ms, of:

- ``page``: the page's server time (``Server-Timing: page``: the search and the HTML, what the
  100 ms aim is about);
- ``search``: the engine's search inside it (``Server-Timing: search``);
- ``wall``: the client's round trip (HTTP on loopback included);
- ``engine``: ``Engine.search`` called directly on the same engine, for the ratio page/engine.

    python scripts/bench_ui.py [--corpus DIR] [--queries FILE] [--embedder minilm] [--db FILE] [--json-out F]

Absolute times vary with the machine and its load; compare the ratio from one run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: the workplace's shared material beside the checkout (a worktree sits one folder deeper)
SHARED = Path(os.environ.get("MARKDOWN_MEMORY_SHARED_DIR") or next(
    (p / "shared" for p in (HERE.parent.parent, HERE.parent.parent.parent) if (p / "shared").is_dir()),
    HERE.parent.parent / "shared"))


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def _timing(header: str, name: str) -> float:
    m = re.search(rf"{name};dur=([0-9.]+)", header)
    if not m:
        raise SystemExit(f"no {name} in Server-Timing {header!r}")
    return float(m.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=SHARED / "eval-corpus")
    parser.add_argument("--queries", type=Path, default=SHARED / "eval-queries-dev.jsonl")
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "embeddinggemma", "none"])
    parser.add_argument("--db", type=Path, help="index database (default: a temporary one, built first)")
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"corpus not found: {args.corpus}", file=sys.stderr)
        return 2
    sys.path.insert(0, str(HERE.parent / "src"))
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine
    from markdown_memory.mcp import http_access
    from markdown_memory.mcp.http import HttpServer

    db = args.db or Path(tempfile.mkdtemp(prefix="mm-bench-ui-")) / "index.db"
    settings = Settings.load(args.corpus, db, args.embedder)
    engine = Engine(settings, background=True)  # as the service's pool makes it: vectors in memory
    report = engine.index(wait_seconds=600)
    print(f"indexed {args.corpus}: {report.scanned} files ({report.indexed} (re)indexed, {report.seconds:.1f} s)",
          file=sys.stderr)
    queries = [json.loads(line)["query"] for line in args.queries.read_text(encoding="utf-8").splitlines()
               if line.strip()]
    ident = http_access.root_id(settings.docs_root)
    token = "bench-" + "t" * 40
    server = HttpServer(0, engine_factory=lambda _settings: engine, token=token,
                        lookup=lambda i: engine.settings if i == ident else None)
    server.start()
    base = f"http://127.0.0.1:{server.port}/ui/r/{urllib.parse.quote(ident, safe='')}/"
    page, search, wall, direct = [], [], [], []
    try:
        def ask(query: str) -> tuple[float, float, float]:
            req = urllib.request.Request(base + "?" + urllib.parse.urlencode({"q": query}),
                                         headers={"Authorization": f"Bearer {token}"})
            start = time.perf_counter()
            with urllib.request.urlopen(req, timeout=120) as resp:
                resp.read()
                timing = resp.headers.get("Server-Timing", "")
            return _timing(timing, "page"), _timing(timing, "search"), (time.perf_counter() - start) * 1000

        from markdown_memory.models import Freshness, SearchRequest

        freshness = Freshness.REFRESH if engine.settings.auto_index else Freshness.FLAG

        def direct_search(query: str) -> float:
            start = time.perf_counter()
            engine.search(SearchRequest(query), freshness=freshness)
            return (time.perf_counter() - start) * 1000

        ask(queries[0])  # warm-up: model session, page cache, templates
        direct_search(queries[0])
        # the query-vector cache would favour whichever asks second: each question is timed cold
        # once, by the page for even positions and by the engine for odd ones (the other asks untimed)
        for i, query in enumerate(queries):
            if i % 2 == 0:
                p, s, w = ask(query)
                page.append(p)
                search.append(s)
                wall.append(w)
            else:
                direct.append(direct_search(query))
    finally:
        server.stop()
        engine.shutdown()
        engine.close()
    results: dict[str, object] = {"corpus": str(args.corpus), "embedder": engine.settings.embedder,
                                  "queries": len(queries)}
    for name, values in (("page", page), ("search", search), ("wall", wall), ("engine", direct)):
        results[f"{name}_p50_ms"] = round(statistics.median(values), 1)
        results[f"{name}_p95_ms"] = round(_percentile(values, 95), 1)
    results["page_over_engine_p50"] = round(statistics.median(page) / statistics.median(direct), 2)
    print(json.dumps(results, indent=2))
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
