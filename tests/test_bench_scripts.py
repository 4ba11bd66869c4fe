"""The benchmark script runs end to end and prints every figure the performance issue asks for
(keyword-only preset on a small fixture folder, so it takes seconds, not minutes)."""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from pathlib import Path

import pytest

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


@pytest.mark.slow  # CI only (README's fast suite deselects it): runs the benchmark script end to end, ~12 s
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


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"markdown_memory_{name}_script", ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_scale_root_copies_differ_but_keep_their_structure(tmp_path):
    scale = _script("scale_corpus")
    guide = ROOT / "tests" / "fixtures" / "guide"
    root = scale.build_root(guide, tmp_path / "x3", 3)
    originals = sorted(p.relative_to(guide) for p in guide.rglob("*.md"))
    nested = [p for p in originals if len(p.parts) > 1]
    assert len(list(root.rglob("*.md"))) == len(originals) + 2 * len(nested)  # top-level files once
    for rel in nested:
        texts = [(root / (rel.parts[0] + suffix) / Path(*rel.parts[1:])).read_text() for suffix in ("", "-c01", "-c02")]
        assert texts[0] == (guide / rel).read_text()  # copy 0 is the corpus as is
        assert len(set(texts)) == 3  # no two copies byte-identical
        heads = [[line for line in t.splitlines() if line.startswith("#")] for t in texts]
        assert [len(t.splitlines()) for t in texts] == [len(texts[0].splitlines())] * 3
        assert [len(h) for h in heads] == [len(heads[0])] * 3  # same headings, perturbed words
    assert scale.perturb("configuration reference", 1) == scale.perturb("configuration reference", 1)


def test_scale_table_and_curve_show_every_size(tmp_path, monkeypatch):
    import xml.etree.ElementTree as ET

    monkeypatch.setattr(sys, "path", list(sys.path))  # the script puts scripts/ and src/ first
    bench_scale = _script("bench_scale")
    rows = [{"copies": n, "files": 700 * n, "sections": 8000 * n, "passages": 38000 * n, "keyword_index_s": 10.0 * n,
             "keyword_ms_per_file": 14.0, "minilm_index_s": 60.0 * n, "minilm_measured": n < 16,
             "query_keyword_p50_ms": 5.0, "query_keyword_p95_ms": 9.0, "mcp_hybrid_p50_ms": 20.0 + n,
             "mcp_hybrid_p95_ms": 40.0, "server_rss_hybrid_mb": 200.0 + 10 * n, "vector_recall_at_10": 1.0}
            for n in (1, 4, 16)]
    table = bench_scale.markdown_table(rows)
    assert "| figure | 1x | 4x | 16x |" in table
    assert "960 (extrapolated)" in table and "| hybrid query p50 / p95, MCP (ms) | 21 / 40 | 24 / 40 | 36 / 40 |" in table
    svg = ET.fromstring(bench_scale.svg_curve(rows))
    assert svg.tag.endswith("svg") and len(svg.findall("{http://www.w3.org/2000/svg}polyline")) >= 4
