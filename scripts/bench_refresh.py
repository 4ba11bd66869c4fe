"""Cost of the per-call freshness refresh after a one-file edit (what the MCP server pays on
the next answer): copy a corpus, index it keyword-only, then N times append a line to one file
and run ``Engine.refresh()`` (the stat probe + re-index of the changed file + relink).

    python scripts/bench_refresh.py [--corpus eval/corpus2] [--runs 15]

Prints the median, min and max milliseconds of the refresh and of its relink step, wall clock
and CPU time of this process (steadier on a shared machine).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from markdown_memory.config import Settings
from markdown_memory.engine import Engine
from markdown_memory.index import indexer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parent.parent / "eval" / "corpus2")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "docs"
        shutil.copytree(args.corpus, root)
        engine = Engine(Settings.load(root, Path(tmp) / "index.db", "none"))
        engine.index()
        files = sorted(p for p in root.rglob("*.md"))
        linker_seconds: list[float] = []
        linker_cpu: list[float] = []
        for name in ("relink", "relink_documents"):
            original = getattr(indexer, name, None)
            if original is None:
                continue

            def timed(*a, _f=original, **k):  # type: ignore[no-untyped-def]
                t, c = time.perf_counter(), time.process_time()
                try:
                    return _f(*a, **k)
                finally:
                    linker_seconds.append(time.perf_counter() - t)
                    linker_cpu.append(time.process_time() - c)

            setattr(indexer, name, timed)
        refresh: list[float] = []
        refresh_cpu: list[float] = []
        for n in range(args.runs):
            target = files[(n * 37) % len(files)]
            time.sleep(0.02)  # a new mtime
            with target.open("a", encoding="utf-8") as fh:
                fh.write(f"\nedited line {n} [[{files[n % len(files)].stem}]]\n")
            t, c = time.perf_counter(), time.process_time()
            report = engine.refresh(ttl=0)
            refresh.append(time.perf_counter() - t)
            refresh_cpu.append(time.process_time() - c)
            assert report is not None and report.updated == 1, report
        engine.close()
    for label, values in (("refresh", refresh), ("relink", linker_seconds), ("refresh cpu", refresh_cpu),
                          ("relink cpu", linker_cpu)):
        if values:
            print(f"{label}: median {statistics.median(values) * 1000:.1f} ms, min {min(values) * 1000:.1f},"
                  f" max {max(values) * 1000:.1f} over {len(values)} runs")


if __name__ == "__main__":
    main()
