"""The benchmark script runs end to end and prints every figure the performance issue asks for
(keyword-only preset on a small fixture folder, so it takes seconds, not minutes)."""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURES = (
    "files", "sections", "passages", "vectors_embedded", "index_seconds", "vectors_per_second", "peak_rss_mb",
    "noop_reindex_ms", "one_file_edit_reindex_ms", "query_keyword_p50_ms", "query_keyword_p95_ms",
    "query_hybrid_p50_ms", "query_hybrid_p95_ms", "mcp_handshake_ms", "db_mb",
)


def _bench_module():
    """scripts/bench.py loaded as a module of its own name (its ``main`` reads ``sys.argv``)."""
    spec = importlib.util.spec_from_file_location("markdown_memory_bench_script", ROOT / "scripts" / "bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_prints_and_writes_every_figure(tmp_path, monkeypatch, capsys):
    # regression: a local variable named like the report printer made main() crash at the end.
    # main() runs in this process (it still starts the index run and the MCP servers it measures
    # as subprocesses); the handshake is timed once instead of five times, which only the median
    # depends on
    bench = _bench_module()
    monkeypatch.setattr(bench, "mcp_handshake_ms", functools.partial(bench.mcp_handshake_ms, runs=1))
    queries = tmp_path / "queries.jsonl"
    queries.write_text("\n".join(json.dumps({"query": q}) for q in ("install on linux", "configure the server")) + "\n")
    out = tmp_path / "bench.json"
    monkeypatch.setattr(sys, "argv", ["bench.py", "--embedder", "none", "--corpus", str(ROOT / "tests" / "fixtures" / "guide"),
                                      "--queries", str(queries), "--json-out", str(out)])
    monkeypatch.setattr(sys, "path", list(sys.path))  # main() puts src/ first
    assert bench.main() == 0
    stdout = capsys.readouterr().out
    results = json.loads(out.read_text())
    for key in FIGURES:
        assert key in results, key
        assert key in stdout
        assert results[key] is not None, key  # every measurement succeeded (the handshake answered)
    assert results["files"] >= 1 and results["sections"] >= 1
