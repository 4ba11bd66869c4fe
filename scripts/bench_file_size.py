#!/usr/bin/env python3
"""How indexing one file scales with its size (issue 13, case 029): time and peak memory must
grow at most linearly.

Generates one Markdown file per size (default 1, 4 and 16 MB), each a quarter of its bytes in
each of four single blocks that cannot be cut at a blank line: a paragraph of words without
blank lines, a table, a one-line minified JSON object, and a fenced code block (log lines). Each
file is indexed in a fresh docs root by its own ``markdown-memory index`` process
(``--max-file-mb`` raised above the file), keyword-only by default, ``--embedder minilm`` on
request. Prints per size: seconds (wall), peak RSS of the indexing process (MB), sections,
passages, and the ratios to the previous size (time and RSS growth per size growth: 1.0 is
linear; RSS includes a fixed ~60-300 MB of interpreter, SQLite and model, so its ratio is below
the time ratio). Not a timed test: absolute times vary with the machine and its load.

Usage: python scripts/bench_file_size.py [--sizes 1,4,16] [--embedder none|minilm] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORDS = ("deploy cache index worker queue shard replica token budget latency request gateway "
         "schema migration rollback config secret metric trace span ingest batch").split()


def generate(path: Path, size: int, seed: int = 13) -> None:
    """Write a ``size``-byte (about) Markdown file of four single huge blocks (see module docstring)."""
    rnd = random.Random(seed)
    quarter = size // 4
    def fill(make: Callable[[int], str], sep: str = "") -> str:
        """``make(0)``, ``make(1)``... joined by ``sep`` until they hold ``quarter`` characters."""
        pieces: list[str] = []
        length = 0
        while length < quarter:
            piece = make(len(pieces))
            pieces.append(piece)
            length += len(piece) + len(sep)
        return sep.join(pieces)

    prose = fill(lambda _i: " ".join(rnd.choice(WORDS) for _ in range(12)).capitalize() + ".", " ")
    table = fill(lambda i: f"| {i} | part-{i:07d} | rack-{i % 97} | {rnd.choice(WORDS)} |\n")
    payload = fill(lambda i: f'"k{i}":"v{rnd.randint(0, 10**9)}"', ",")
    log = fill(lambda i: f"2026-11-30T08:{i // 6000 % 60:02d}:{i // 100 % 60:02d} INFO worker-{i % 8} batch {i} ok\n")
    parts = ["# Scaling Probe\n\n## Prose\n\n", prose,
             "\n\n## Table\n\n| id | item | location | note |\n| --- | --- | --- | --- |\n", table,
             "\n## Payload\n\n{", payload, "}\n\n## Log\n\n```text\n", log, "```\n"]
    path.write_text("".join(parts), encoding="utf-8")


def index_once(root: Path, db: Path, embedder: str, limit_mb: float) -> tuple[float, float, dict]:
    """(wall seconds, peak RSS MB, the index report) of one ``markdown-memory index`` process."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    cmd = [sys.executable, "-m", "markdown_memory.cli", "--embedder", embedder, "--db", str(db),
           "--max-file-mb", str(limit_mb), "index", str(root), "--json"]
    started = time.monotonic()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _pid, status, usage = os.wait4(proc.pid, 0)
        seconds = time.monotonic() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"index exited {proc.returncode}: {' '.join(cmd)}")
        out.seek(0)
        report = json.loads(out.read().decode("utf-8"))
    peak_mb = usage.ru_maxrss / 1024  # kilobytes on Linux
    return seconds, peak_mb, report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1,4,16", help="file sizes in MB, comma-separated (default 1,4,16)")
    parser.add_argument("--embedder", default="none", choices=("none", "minilm"))
    parser.add_argument("--keep", metavar="DIR", help="write the files and databases here and keep them")
    args = parser.parse_args(argv)
    sizes = [float(s) for s in args.sizes.split(",") if s.strip()]
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="mm-bench-size-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"embedder={args.embedder}; one file per size, four single blocks (paragraph, table, one-line JSON, code)")
    print(f"{'MB':>6} {'seconds':>8} {'peak_rss_mb':>11} {'sections':>8} {'passages':>8} "
          f"{'time_ratio/size_ratio':>22} {'rss_ratio/size_ratio':>21}")
    previous: tuple[float, float, float] | None = None
    try:
        for mb in sizes:
            root = work / f"docs-{mb:g}mb"
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir()
            generate(root / "probe.md", int(mb * 1_000_000))
            actual = (root / "probe.md").stat().st_size / 1e6
            db = work / f"index-{mb:g}mb.db"
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
            seconds, peak, report = index_once(root, db, args.embedder, limit_mb=mb * 2 + 1)
            ratios = ("", "")
            if previous is not None:
                growth = actual / previous[0]
                ratios = (f"{seconds / previous[1] / growth:.2f}", f"{peak / previous[2] / growth:.2f}")
            print(f"{actual:6.2f} {seconds:8.2f} {peak:11.1f} {report['sections']:8d} {report['passages']:8d} "
                  f"{ratios[0]:>22} {ratios[1]:>21}", flush=True)
            previous = (actual, seconds, peak)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
