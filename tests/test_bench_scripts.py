"""The benchmark script runs end to end and prints every figure the performance issue asks for
(keyword-only preset on a small fixture folder, so it takes seconds, not minutes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURES = (
    "files", "sections", "passages", "vectors_embedded", "index_seconds", "vectors_per_second", "peak_rss_mb",
    "noop_reindex_ms", "one_file_edit_reindex_ms", "query_keyword_p50_ms", "query_keyword_p95_ms",
    "query_hybrid_p50_ms", "query_hybrid_p95_ms", "mcp_handshake_ms", "db_mb",
)


def test_bench_prints_and_writes_every_figure(tmp_path):
    # regression: a local variable named like the report printer made main() crash at the end
    queries = tmp_path / "queries.jsonl"
    queries.write_text("\n".join(json.dumps({"query": q}) for q in ("install on linux", "configure the server")) + "\n")
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench.py"), "--embedder", "none", "--corpus",
         str(ROOT / "tests" / "fixtures" / "guide"), "--queries", str(queries), "--json-out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(out.read_text())
    for key in FIGURES:
        assert key in results, key
        assert key in proc.stdout
    assert results["files"] >= 1 and results["sections"] >= 1
