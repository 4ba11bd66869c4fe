"""MCP handshake benchmark (issue 27): does starting the catch-up index run at the handshake
delay it?

For ``--runs`` fresh server processes (``python -m markdown_memory.cli``, code from ``--src``,
default this checkout's src/) on a copy of ``--docs`` with a new empty database each, it
measures wall milliseconds from process start to the ``initialize`` answer (the handshake),
and from sending ``notifications/initialized`` to the answer of a ``tools/list`` sent right
after it (the event loop stays free while the engine is made in a thread), then closes stdin.
Prints p50 / p95 of each with the load average. Compare two builds by passing the other's
source folder (``git archive COMMIT src | tar -x -C /tmp/before``).

Usage::

    python scripts/bench_handshake.py --docs tests/fixtures/guide --runs 15
    python scripts/bench_handshake.py --docs tests/fixtures/guide --runs 15 --src /tmp/before/src
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

HERE = Path(__file__).resolve().parent.parent


def _send(pipe: IO[bytes], message: dict[str, Any]) -> None:
    pipe.write((json.dumps(message) + "\n").encode())
    pipe.flush()


def _answer(pipe: IO[bytes], ident: int) -> dict[str, Any]:
    for line in pipe:
        data = json.loads(line)
        if data.get("id") == ident:
            return dict(data)
    raise SystemExit("server closed stdout before answering")


def one_run(src: Path, docs: Path, work: Path, embedder: str) -> tuple[float, float]:
    """(handshake ms, tools/list-after-initialized ms) of one fresh server on a copy of ``docs``."""
    root = work / "docs"
    shutil.copytree(docs, root)
    env = dict(os.environ, PYTHONPATH=str(src), MARKDOWN_MEMORY_DOCS_DIR=str(root),
               MARKDOWN_MEMORY_DB=str(work / "index.db"), MARKDOWN_MEMORY_EMBEDDER=embedder)
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "markdown_memory.cli"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        _send(proc.stdin, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
        _answer(proc.stdout, 1)
        handshake = (time.perf_counter() - started) * 1000
        t = time.perf_counter()
        _send(proc.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(proc.stdin, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        _answer(proc.stdout, 2)
        after = (time.perf_counter() - t) * 1000
        proc.stdin.close()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    return handshake, after


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=Path, default=HERE / "tests" / "fixtures" / "guide")
    ap.add_argument("--src", type=Path, default=HERE / "src", help="the markdown_memory package's parent folder")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--embedder", default="none", help="MARKDOWN_MEMORY_EMBEDDER of the servers (default none)")
    args = ap.parse_args(argv)
    pairs = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="mm-handshake-") as work:
            pairs.append(one_run(args.src.resolve(), args.docs.resolve(), Path(work), args.embedder))

    def fig(values: list[float]) -> str:
        values = sorted(values)
        return f"p50 {statistics.median(values):.0f} ms, p95 {values[min(len(values) - 1, int(0.95 * len(values)))]:.0f} ms"

    print(f"{args.src}: initialize answered {fig([h for h, _ in pairs])}; tools/list after initialized "
          f"{fig([a for _, a in pairs])} ({args.runs} servers, load average {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
