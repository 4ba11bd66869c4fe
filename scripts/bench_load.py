#!/usr/bin/env python3
"""Query latency through MCP, ours and the reference alternating, on a quiet and on a loaded machine.

Both stdio servers (ours: ``python -m markdown_memory.cli`` from this checkout; the reference:
``markdown-memory==0.7.13`` in its own venv with our MiniLM embedder injected, exactly as
scripts/bench_reference.py runs it) serve copies of the same corpus, each from an index it built
itself. For each phase (``quiet``, then ``loaded``: ``--load`` CPU-bound processes
``python -c 'while True: pass'`` running, killed afterwards) fresh servers are started, warmed
up with three calls of a query outside the timed list, and every dev query is sent to both, the
two alternating query by query (who goes first alternates too). Printed per phase: p50 / p95
round-trip ms of each and the ratios ours / reference.

Our calls pass ``resend: true`` (session memory off) so every answer carries the same text an
answer without session memory carries; each query is sent once per server per phase, so no
answer comes from a cache of a repeated query.

The indexes are built once into ``--work DIR`` (kept, reused by the next run when present:
``--rebuild`` builds again). Usage::

    python scripts/bench_load.py [--work /tmp/mm-bench-load] [--load 2] [--phases quiet,loaded]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402
import bench_reference  # noqa: E402

WARM_UP_QUERY = "how do I configure this"


def prepare(work: Path, corpus_src: Path, rebuild: bool) -> tuple[dict[str, str], dict[str, str], Path]:
    """(our server env, the reference server env, reference python), indexes built when missing."""
    work.mkdir(parents=True, exist_ok=True)
    ours_root, ref_root = work / "corpus-ours", work / "corpus-ref"
    ours_db, ref_db = work / "ours.db", work / "reference.db"
    if rebuild:
        for p in (ours_root, ref_root):
            shutil.rmtree(p, ignore_errors=True)
        for db in (ours_db, ref_db):
            for f in db.parent.glob(db.name + "*"):
                f.unlink()
    for root in (ours_root, ref_root):
        if not root.exists():
            shutil.copytree(corpus_src, root, symlinks=True)
    py = bench_reference.ensure_venv(bench_reference.DEFAULT_VENV)
    models = work / "minilm"
    if not models.exists():
        bench_reference.model_dir(work)
    src = str(HERE.parent / "src")
    ours_env = dict(os.environ, MARKDOWN_MEMORY_DB=str(ours_db), MARKDOWN_MEMORY_DOCS_DIR=str(ours_root),
                    MARKDOWN_MEMORY_EMBEDDER="minilm", PYTHONPATH=src)
    ref_env = dict(os.environ, MARKDOWN_MEMORY_MINILM_DIR=str(models), **{bench_reference.ENV_SRC: src},
                   MARKDOWN_MEMORY_DB=str(ref_db), MARKDOWN_MEMORY_DOCS_DIR=str(ref_root),
                   MARKDOWN_MEMORY_EMBEDDER="minilm", MARKDOWN_MEMORY_MODEL_CACHE=str(work / "cache"),
                   XDG_CACHE_HOME=str(work / "xdg-cache"), XDG_DATA_HOME=str(work / "xdg-data"),
                   HF_HUB_OFFLINE="1", MARKDOWN_MEMORY_INT8_COMPUTE="0")
    ref_env.pop("PYTHONPATH", None)
    if not ours_db.exists():
        print("indexing (ours) ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "markdown_memory.cli", "--embedder", "minilm", "index", str(ours_root),
                        "--json"], env=ours_env, check=True, capture_output=True)
    if not ref_db.exists():
        print("indexing (reference) ...", file=sys.stderr)
        bench_reference.run_child(py, ref_env, "index", str(ref_root), str(ref_db))
    return ours_env, ref_env, py


class Server:
    """One stdio MCP server, initialised, for timed ``search_docs`` round trips."""

    def __init__(self, cmd: list[str], env: dict[str, str], extra: dict[str, object]) -> None:
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=env, text=True)
        self.next_id = 10
        if bench._rpc_line(self.proc, bench._INITIALIZE) is None:
            raise SystemExit(f"server did not initialise: {cmd}")
        assert self.proc.stdin
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        self.proc.stdin.flush()
        listed = bench._rpc_line(self.proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}) or {}
        schema = next((t.get("inputSchema", {}) for t in listed.get("result", {}).get("tools", [])
                       if t.get("name") == "search_docs"), {})
        # arguments the server's search_docs does not know (an older build) are left out
        self.extra = {k: v for k, v in extra.items() if k in schema.get("properties", {})}

    def search(self, query: str) -> float:
        """ms of one ``search_docs`` round trip. Raises SystemExit when the call fails."""
        self.next_id += 1
        call = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                "params": {"name": "search_docs", "arguments": {"query": query, **self.extra}}}
        t = time.perf_counter()
        reply = bench._rpc_line(self.proc, call)
        ms = (time.perf_counter() - t) * 1000
        if reply is None or "result" not in reply or reply["result"].get("isError"):
            raise SystemExit(f"search_docs failed: {str(reply)[:300]}")
        return ms

    def stop(self) -> None:
        bench._stop(self.proc)


def phase(queries: list[str], ours_env: dict[str, str], ref_env: dict[str, str], py: Path) -> dict[str, list[float]]:
    """Fresh servers, warm-up, then every query to both, alternating. Returns ms lists."""
    ours = Server([sys.executable, "-m", "markdown_memory.cli"], ours_env, {"resend": True})
    ref = Server([str(py), str(HERE / "bench_reference.py"), "--child", "serve"], ref_env, {})
    try:
        for _ in range(3):
            ours.search(WARM_UP_QUERY)
            ref.search(WARM_UP_QUERY)
        time.sleep(1.0)  # let catch-up work that the first call started settle
        lat: dict[str, list[float]] = {"ours": [], "reference": []}
        for n, q in enumerate(queries):
            pair = [("ours", ours), ("reference", ref)]
            for name, server in pair if n % 2 == 0 else pair[::-1]:
                lat[name].append(server.search(q))
        return lat
    finally:
        ours.stop()
        ref.stop()


def summarise(lat: dict[str, list[float]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, values in lat.items():
        out[f"{name}_p50_ms"] = round(statistics.median(values), 1)
        out[f"{name}_p95_ms"] = round(bench._percentile(values, 95), 1)
    out["ratio_p50"] = round(out["ours_p50_ms"] / out["reference_p50_ms"], 2)
    out["ratio_p95"] = round(out["ours_p95_ms"] / out["reference_p95_ms"], 2)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=bench.SHARED / "eval-corpus")
    parser.add_argument("--queries", type=Path, default=bench.SHARED / "eval-queries-dev.jsonl")
    parser.add_argument("--work", type=Path, default=Path("/tmp/mm-bench-load"))
    parser.add_argument("--rebuild", action="store_true", help="build both indexes again")
    parser.add_argument("--load", type=int, default=2, help="CPU-bound processes in the loaded phase")
    parser.add_argument("--phases", default="quiet,loaded")
    parser.add_argument("--ours-src", type=Path, default=HERE.parent / "src",
                        help="source tree our server runs from (e.g. an exported older commit, for before/after)")
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    ours_env, ref_env, py = prepare(args.work, args.corpus, args.rebuild)
    ours_env["PYTHONPATH"] = str(args.ours_src.resolve())
    queries = bench.load_queries(args.queries)
    results: dict[str, object] = {"queries": len(queries), "cores": os.cpu_count()}
    for name in args.phases.split(","):
        burners: list[subprocess.Popen] = []
        if name == "loaded":
            burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
        try:
            summary = summarise(phase(queries, ours_env, ref_env, py))
        finally:
            for p in burners:
                p.kill()
                p.wait()
        for key, value in summary.items():
            results[f"{name}_{key}"] = value
    bench.report(results, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
