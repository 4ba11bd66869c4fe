"""Index lifecycle benchmark (issue 5) on ../shared/eval-corpus (or --root DIR).

Measures, with a fresh database each time:
  * cold start, server path: ``Runtime.search_docs`` on a never-indexed root (what an agent's
    first MCP search costs: engine creation, catch-up start, the bounded wait for keywords);
  * cold start, scheduler only: a server-mode engine's ``engine._scheduler.on_call`` (the
    ``BackgroundIndexer``) + ``Engine.search`` (keyword-only until the model is loaded);
  * time until the catch-up run is complete (parse + embed);
  * a no-change re-index (median of --repeat runs; target < 100 ms for ~700 files).

Usage: python scripts/bench_lifecycle.py [--root DIR] [--embedder minilm|none] [--repeat 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

QUERY = "how do I configure a proxy"


def main() -> int:
    here = Path(__file__).resolve().parents[1]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(here.parent / "shared" / "eval-corpus"))
    parser.add_argument("--embedder", default="minilm", choices=("minilm", "none", "embeddinggemma"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    root = Path(args.root)
    if not root.is_dir():
        sys.stderr.write(f"no corpus at {root}\n")
        return 2
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine
    from markdown_memory.mcp.runtime import Runtime
    from markdown_memory.models import SearchRequest

    out: dict[str, object] = {"root": str(root), "embedder": args.embedder}
    with tempfile.TemporaryDirectory() as tmp:
        # 1. the server path
        settings = Settings.load(root, Path(tmp) / "server.db", args.embedder, auto_index=True)
        started = time.perf_counter()
        runtime = Runtime(settings)
        answer = runtime.search_docs(SearchRequest(QUERY))
        out["server_first_answer_ms"] = round((time.perf_counter() - started) * 1000, 1)
        out["server_first_answer_documents"] = answer["index_status"]["documents"]
        out["server_first_answer_hits"] = len(answer["results"])
        runtime.shutdown(timeout=30)

        # 2. scheduler + engine, then the full catch-up
        settings = Settings.load(root, Path(tmp) / "auto.db", args.embedder, auto_index=True)
        started = time.perf_counter()
        engine = Engine(settings, background=True)  # server mode: model loads in a thread
        auto = engine._scheduler
        auto.on_call("search_docs")
        first = engine.search(SearchRequest(QUERY))
        out["first_answer_ms"] = round((time.perf_counter() - started) * 1000, 1)
        out["first_answer_hits"] = len(first.results)
        auto.wait()
        out["catch_up_complete_s"] = round(time.perf_counter() - started, 2)
        status = engine.status().to_dict()
        out.update({k: status[k] for k in ("documents", "sections", "passages", "vectors", "coverage")})

        # 3. no-change re-index
        times = []
        for _ in range(max(1, args.repeat)):
            t = time.perf_counter()
            report = engine.index()
            times.append((time.perf_counter() - t) * 1000)
            assert report.indexed == 0, report.to_dict()
        out["no_change_reindex_ms_median"] = round(statistics.median(times), 1)
        out["no_change_reindex_ms_all"] = [round(x, 1) for x in times]
        t = time.perf_counter()
        engine._reporter.changed_files(limit=None)
        out["stat_probe_ms"] = round((time.perf_counter() - t) * 1000, 1)
        engine.shutdown(timeout=30)
        engine.close()
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:32} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
