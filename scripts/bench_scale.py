#!/usr/bin/env python3
"""Scale curve: the same figures at 1x, 4x and 16x the eval corpus (issue 18).

Builds docs roots of N copies of ``--corpus`` (scripts/scale_corpus.py: renamed top folders,
words perturbed per copy) under ``--work`` and prints for each size: files, sections,
passages; keyword-only index wall time, peak RSS, ms per file and database size; no-change
re-index (in process, median of 3); ``minilm`` index wall time, peak RSS and database size
(measured at the sizes in ``--minilm-sizes``, larger sizes extrapolated from the largest
measured size's seconds per passage); query p50/p95 keyword-only and hybrid, in process
(``Engine.search``, sqlite-vec's exact scan) and through the stdio MCP server (100 calls, one
session; the server keeps quantized vectors in memory); the MCP server's RSS after those 100
searches; the vector side's recall@10 against exact float KNN and its KNN time; first answer
on a cold root (MCP server spawned on a never-indexed root, until its first ``search_docs``
result).

At sizes without a measured ``minilm`` index, the hybrid figures run on a stand-in database:
the keyword-only index of that root with every passage and section given the vector of the
same passage of copy 0 (measured) plus Gaussian noise (sigma 0.02 per coordinate, cosine ~0.93
to the original), renormalised; the vectors are as many and as near-duplicate as a real index
of that root has, so memory, KNN time and recall are those of the real size.

Writes ``--json-out`` (every figure), ``--markdown-out`` (the table for docs/performance.md) and
``--svg-out`` (the curve, log-log). Absolute times vary with the machine and its load.

``--markdown-out docs/performance.md`` replaces the table between its ``scale-table`` markers;
``--from-json`` renders a saved run again without measuring.

Usage: nice -n 10 python scripts/bench_scale.py --sizes 1,4,16 --minilm-sizes 1,4 \\
    --markdown-out docs/performance.md --svg-out docs/scale-curve.svg --json-out /tmp/scale.json
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
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from bench import _INITIALIZE, _db_size, _percentile, _rpc_line, _stop, load_queries  # noqa: E402
from scale_corpus import build_root  # noqa: E402

SHARED = HERE.parent.parent / "shared"
NOISE = 0.02
SEARCHES = 100


#: Runs the CLI in the child and writes its own peak RSS (VmHWM, kB) to $MM_HWM_OUT at exit: the
#: child's ru_maxrss from wait4 would include the parent's RSS at fork (Linux keeps it over exec).
_CHILD = ("import atexit, os, runpy, sys\n"
          "def hwm():\n"
          "    for line in open('/proc/self/status'):\n"
          "        if line.startswith('VmHWM:'):\n"
          "            open(os.environ['MM_HWM_OUT'], 'w').write(line.split()[1])\n"
          "atexit.register(hwm)\n"
          "sys.argv = ['markdown-memory'] + sys.argv[1:]\n"
          "runpy.run_module('markdown_memory.cli', run_name='__main__')\n")


def run_index(root: Path, db: Path, embedder: str) -> dict[str, Any]:
    """``markdown-memory index`` in a child process: its report, wall seconds, peak RSS MB."""
    for old in db.parent.glob(db.name + "*"):
        old.unlink()
    hwm = db.with_name(db.name + ".hwm")
    env = dict(os.environ, MARKDOWN_MEMORY_DB=str(db), PYTHONPATH=str(HERE.parent / "src"), MM_HWM_OUT=str(hwm))
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _CHILD, "--embedder", embedder, "index", str(root), "--json"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    wall = time.perf_counter() - started
    if proc.returncode:
        raise SystemExit(f"index of {root} with {embedder} failed ({proc.returncode})")
    peak_mb = int(hwm.read_text()) / 1024
    hwm.unlink()
    return {"report": json.loads(proc.stdout), "seconds": wall, "peak_rss_mb": peak_mb, "db_mb": _db_size(db) / 1e6}


def graft_vectors(keyword_db: Path, measured_db: Path, out_db: Path, seed: int = 0) -> None:
    """``out_db`` = ``keyword_db`` with vectors: each passage / section gets the vector of the same
    passage / section (document path with the copy suffix removed, ordinal) in ``measured_db``,
    plus noise for copies other than 0 (see the module docstring)."""
    import numpy as np

    from markdown_memory.store import driver as store_driver
    from markdown_memory.store.vectors import vector_blob

    for old in out_db.parent.glob(out_db.name + "*"):
        old.unlink()
    shutil.copyfile(keyword_db, out_db)
    module = store_driver.pick_driver().module
    src = module.connect(str(measured_db))
    store_driver.load_vec(src)
    meta = dict(src.execute("SELECT key, value FROM meta WHERE key IN ('weights_id', 'dimension')").fetchall())
    dim = int(meta["dimension"])
    # key: (document path, section ordinal, passage ordinal within the section or -1 for the section)
    queries = {
        "passages": "SELECT d.path, s.ordinal, p.ordinal, v.embedding FROM passages p JOIN sections s ON s.id = p.section_id "
                    "JOIN documents d ON d.id = p.doc_id LEFT JOIN vec_passages v ON v.rowid = p.id",
        "sections": "SELECT d.path, s.ordinal, -1, v.embedding FROM sections s JOIN documents d ON d.id = s.doc_id "
                    "LEFT JOIN vec_sections v ON v.rowid = s.id",
    }
    vectors: dict[str, dict[tuple[str, int, int], bytes | None]] = {
        table: {(r[0], r[1], r[2]): r[3] for r in src.execute(sql)} for table, sql in queries.items()}
    src.close()
    dst = module.connect(str(out_db))
    store_driver.load_vec(dst)
    rng = np.random.default_rng(seed)
    unmatched = 0
    with dst:
        for key, value in meta.items():
            dst.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
        for table in ("vec_passages", "vec_sections"):
            dst.execute(f"DROP TABLE IF EXISTS {table}")
            dst.execute(f"CREATE VIRTUAL TABLE {table} USING vec0(embedding float[{dim}] distance_metric=cosine)")
        targets = {
            "passages": "SELECT p.id, d.path, s.ordinal, p.ordinal FROM passages p JOIN sections s ON s.id = p.section_id "
                        "JOIN documents d ON d.id = p.doc_id",
            "sections": "SELECT s.id, d.path, s.ordinal, -1 FROM sections s JOIN documents d ON d.id = s.doc_id",
        }
        for table, kind in (("passages", "vec_passages"), ("sections", "vec_sections")):
            batch: list[tuple[int, bytes]] = []
            pool = [b for b in vectors[table].values() if b is not None]
            for rowid, path, section, ordinal in dst.execute(targets[table]).fetchall():
                head, sep, rest = path.partition("/")
                base, dash, copy = head.rpartition("-c")
                original = f"{base}{sep}{rest}" if dash and copy.isdigit() else path
                key = (original, section, ordinal)
                if key in vectors[table]:
                    blob = vectors[table][key]
                    if blob is None:  # not embedded in the measured index either
                        continue
                else:  # a perturbed word changed the structure here: any measured vector
                    unmatched += 1
                    blob = pool[int(rng.integers(len(pool)))]
                vec = np.frombuffer(blob, dtype="<f4")
                if original != path:
                    vec = vec + rng.normal(0, NOISE, dim).astype(np.float32)
                    vec = vec / np.linalg.norm(vec)
                batch.append((rowid, vector_blob(vec)))
                if len(batch) >= 4096:
                    dst.executemany(f"INSERT INTO {kind}(rowid, embedding) VALUES (?, ?)", batch)
                    batch.clear()
            dst.executemany(f"INSERT INTO {kind}(rowid, embedding) VALUES (?, ?)", batch)
        dst.execute("UPDATE passages SET has_vector = 1 WHERE id IN (SELECT rowid FROM vec_passages)")
    dst.close()
    print(f"stand-in {out_db.name}: {unmatched} passages/sections without a same-place measured vector", file=sys.stderr)


def in_process(root: Path, kw_db: Path, hyb_db: Path | None, queries: list[str]) -> dict[str, Any]:
    """No-change re-index (keyword engine), query p50/p95 keyword and hybrid (``Engine.search``),
    and the vector side: recall@10 of the quantized cache against vec0's exact KNN, KNN ms."""
    import numpy as np

    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine
    from markdown_memory.models import SearchRequest
    from markdown_memory.store import VectorCache, knn

    out: dict[str, Any] = {}
    engine = Engine(Settings.load(root, kw_db, "none"))
    engine.index()
    noop = []
    for _ in range(3):
        t = time.perf_counter()
        engine.index()
        noop.append((time.perf_counter() - t) * 1000)
    out["noop_reindex_ms"] = round(statistics.median(noop), 1)
    engines = [("keyword", engine)]
    if hyb_db is not None:
        engines.append(("hybrid", Engine(Settings.load(root, hyb_db, "minilm"))))
    for label, eng in engines:
        eng.search(SearchRequest(queries[0]))
        lat = []
        for q in queries:
            t = time.perf_counter()
            eng.search(SearchRequest(q))
            lat.append((time.perf_counter() - t) * 1000)
        out[f"query_{label}_p50_ms"] = round(statistics.median(lat), 1)
        out[f"query_{label}_p95_ms"] = round(_percentile(lat, 95), 1)
    if hyb_db is not None:
        hyb = engines[1][1]
        embedder = hyb.load_model()
        cache = VectorCache()
        t = time.perf_counter()
        matrix = cache.matrix(hyb.store)
        out["vector_cache_load_s"] = round(time.perf_counter() - t, 2)
        out["vector_cache_mb"] = round(matrix.vectors.nbytes / 1e6, 1) if matrix else None
        recall, near, exact_ms, cached_ms = [], [], [], []
        for q in queries:
            qvec = embedder.embed_query(q)
            t = time.perf_counter()
            exact = knn(hyb.store, qvec, 10)
            exact_ms.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            found = knn(hyb.store, qvec, 180, cache)  # what rank.vector_candidates asks for
            cached_ms.append((time.perf_counter() - t) * 1000)
            # a found neighbour agrees when its exact distance reaches the exact 10th's (exact ties
            # agree; ``near``: also those within the int8 codes' rounding, 0.002)
            kth = exact[-1][1]
            true = {pid: d for pid, d in knn(hyb.store, qvec, 400)}
            recall.append(sum(1 for pid, _ in found[:10] if true.get(pid, 2.0) <= kth + 1e-6) / 10)
            near.append(sum(1 for pid, _ in found[:10] if true.get(pid, 2.0) <= kth + 2e-3) / 10)
        out["vector_recall_at_10"] = round(float(np.mean(recall)), 4)
        out["vector_recall_at_10_min"] = round(float(np.min(recall)), 2)
        out["vector_recall_at_10_near"] = round(float(np.mean(near)), 4)
        out["knn_exact_vec0_p50_ms"] = round(statistics.median(exact_ms), 1)
        out["knn_quantized_p50_ms"] = round(statistics.median(cached_ms), 1)
        hyb.close()
    engine.close()
    return out


def _server(root: Path, db: Path, embedder: str) -> subprocess.Popen:
    env = dict(os.environ, MARKDOWN_MEMORY_DB=str(db), MARKDOWN_MEMORY_DOCS_DIR=str(root),
               MARKDOWN_MEMORY_EMBEDDER=embedder, PYTHONPATH=str(HERE.parent / "src"))
    proc = subprocess.Popen([sys.executable, "-m", "markdown_memory.cli"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    if _rpc_line(proc, _INITIALIZE) is None:
        raise SystemExit("MCP server did not answer initialize")
    assert proc.stdin
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    proc.stdin.flush()
    return proc


def _call(proc: subprocess.Popen, n: int, query: str) -> dict[str, Any]:
    reply = _rpc_line(proc, {"jsonrpc": "2.0", "id": 100 + n, "method": "tools/call",
                             "params": {"name": "search_docs", "arguments": {"query": query}}})
    if reply is None or "result" not in reply or reply["result"].get("isError"):
        raise SystemExit(f"search_docs failed: {str(reply)[:300]}")
    return reply["result"]


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def through_mcp(root: Path, db: Path, embedder: str, queries: list[str]) -> dict[str, Any]:
    """``SEARCHES`` ``search_docs`` round trips (queries cycled) after one untimed warm-up
    call that waits for the model: p50/p95 ms and the server's RSS after them."""
    proc = _server(root, db, embedder)
    try:
        for n in range(60):  # warm-up: until the answer is hybrid (model loaded) or 60 calls
            status = json.loads(_call(proc, n, queries[0])["content"][0]["text"]).get("index_status", {})
            if embedder == "none" or not status.get("keyword_only", True):
                break
            time.sleep(1.0)
        lat = []
        for n in range(SEARCHES):
            t = time.perf_counter()
            _call(proc, 1000 + n, queries[n % len(queries)])
            lat.append((time.perf_counter() - t) * 1000)
        rss = _rss_mb(proc.pid)
    finally:
        _stop(proc)
    return {"p50": round(statistics.median(lat), 1), "p95": round(_percentile(lat, 95), 1), "rss_mb": round(rss, 1)}


def first_answer_ms(root: Path, db: Path, embedder: str, query: str) -> float:
    """Ms from spawning the MCP server on ``root`` with an empty database to its first
    ``search_docs`` result (the catch-up run goes on in the background; the server is stopped)."""
    for old in db.parent.glob(db.name + "*"):
        old.unlink()
    started = time.perf_counter()
    proc = _server(root, db, embedder)
    try:
        _call(proc, 0, query)
        return round((time.perf_counter() - started) * 1000, 1)
    finally:
        proc.kill()
        proc.wait()


def measure(copies: int, args: argparse.Namespace, queries: list[str], measured: dict[int, dict[str, Any]]) -> dict[str, Any]:
    root = build_root(args.corpus, args.work / f"root-x{copies}", copies)
    kw_db, ml_db, hyb_db = (args.work / f"x{copies}-{name}.db" for name in ("keyword", "minilm", "standin"))
    row: dict[str, Any] = {"copies": copies}
    kw = run_index(root, kw_db, "none")
    rep = kw["report"]
    row.update(files=rep["scanned"], sections=rep["sections"], passages=rep["passages"],
               keyword_index_s=round(kw["seconds"], 2), keyword_peak_rss_mb=round(kw["peak_rss_mb"], 1),
               keyword_ms_per_file=round(kw["seconds"] / rep["scanned"] * 1000, 2), keyword_db_mb=round(kw["db_mb"], 1))
    if copies in args.minilm_sizes:
        ml = run_index(root, ml_db, "minilm")
        measured[copies] = ml
        row.update(minilm_index_s=round(ml["seconds"], 1), minilm_peak_rss_mb=round(ml["peak_rss_mb"], 1),
                   minilm_db_mb=round(ml["db_mb"], 1), minilm_measured=True)
        hybrid = ml_db
    else:
        base = measured[max(measured)]
        per_passage = base["seconds"] / base["report"]["passages"]
        row.update(minilm_index_s=round(per_passage * rep["passages"], 1), minilm_measured=False)
        graft_vectors(kw_db, args.work / f"x{min(measured)}-minilm.db", hyb_db)
        row["standin_db_mb"] = round(_db_size(hyb_db) / 1e6, 1)
        hybrid = hyb_db
    row.update(in_process(root, kw_db, hybrid, queries))
    for label, db, embedder in (("keyword", kw_db, "none"), ("hybrid", hybrid, "minilm")):
        mcp = through_mcp(root, db, embedder, queries)
        row[f"mcp_{label}_p50_ms"], row[f"mcp_{label}_p95_ms"] = mcp["p50"], mcp["p95"]
        row[f"server_rss_{label}_mb"] = mcp["rss_mb"]
    row["first_answer_cold_ms"] = first_answer_ms(root, args.work / f"x{copies}-cold.db", "minilm", queries[0])
    print(json.dumps(row), flush=True)
    return row


COLUMNS = [
    ("files", "files", "{:,}"), ("sections", "sections", "{:,}"), ("passages", "passages", "{:,}"),
    ("keyword_index_s", "index, keyword-only (s)", "{:.1f}"), ("keyword_ms_per_file", "ms per file", "{:.2f}"),
    ("keyword_peak_rss_mb", "peak RSS, keyword-only (MB)", "{:.0f}"),
    ("minilm_index_s", "index, minilm (s)", "{:.0f}"), ("minilm_peak_rss_mb", "peak RSS, minilm (MB)", "{:.0f}"),
    ("keyword_db_mb", "database, keyword-only (MB)", "{:.0f}"), ("minilm_db_mb", "database with vectors (MB)", "{:.0f}"),
    ("noop_reindex_ms", "no-change re-index (ms)", "{:.0f}"),
    ("query_keyword_p50_ms", "keyword query p50 / p95, in process (ms)", None),
    ("query_hybrid_p50_ms", "hybrid query p50 / p95, in process (ms)", None),
    ("mcp_keyword_p50_ms", "keyword query p50 / p95, MCP (ms)", None),
    ("mcp_hybrid_p50_ms", "hybrid query p50 / p95, MCP (ms)", None),
    ("server_rss_hybrid_mb", f"server RSS after {SEARCHES} hybrid searches (MB)", "{:.0f}"),
    ("server_rss_keyword_mb", f"server RSS after {SEARCHES} keyword searches (MB)", "{:.0f}"),
    ("vector_cache_mb", "vectors held in memory (MB)", "{:.0f}"),
    ("vector_recall_at_10", "vector recall@10 vs exact KNN", "{:.3f}"),
    ("vector_recall_at_10_near", "same, ties within 0.002 counted", "{:.3f}"),
    ("knn_quantized_p50_ms", "KNN p50, quantized in memory (ms)", "{:.1f}"),
    ("knn_exact_vec0_p50_ms", "KNN p50, exact sqlite-vec scan (ms)", "{:.1f}"),
    ("first_answer_cold_ms", "first answer on a cold root, MCP (ms)", "{:,.0f}"),
]


def _cell(row: dict[str, Any], key: str, fmt: str | None) -> str:
    if fmt is None:  # a p50 / p95 pair
        p95 = row.get(key.replace("p50", "p95"))
        return f"{row[key]:.0f} / {p95:.0f}" if row.get(key) is not None and p95 is not None else "-"
    value = row.get(key)
    if value is None and key == "minilm_db_mb" and row.get("standin_db_mb") is not None:
        return "{:.0f} (stand-in)".format(row["standin_db_mb"])
    if value is None:
        return "-"
    text = fmt.format(value)
    if key.startswith("minilm_index") and not row.get("minilm_measured", True):
        text += " (extrapolated)"
    return text


def markdown_table(rows: list[dict[str, Any]]) -> str:
    head = "| figure | " + " | ".join(f"{r['copies']}x" for r in rows) + " |"
    lines = [head, "| --- |" + " ---: |" * len(rows)]
    for key, label, fmt in COLUMNS:
        lines.append(f"| {label} | " + " | ".join(_cell(r, key, fmt) for r in rows) + " |")
    return "\n".join(lines) + "\n"


TABLE_START, TABLE_END = "<!-- scale-table:start -->", "<!-- scale-table:end -->"


def write_table(path: Path, table: str) -> None:
    """Put ``table`` between the scale-table markers of ``path`` (docs/performance.md), or write
    it as the whole file when ``path`` has no markers."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if TABLE_START in text and TABLE_END in text:
        head, rest = text.split(TABLE_START, 1)
        text = f"{head}{TABLE_START}\n{table}{TABLE_END}{rest.split(TABLE_END, 1)[1]}"
    else:
        text = table
    path.write_text(text, encoding="utf-8")


PANELS = [
    ("index wall time (s)", [("keyword_index_s", "keyword-only"), ("minilm_index_s", "minilm")]),
    ("query p50 (ms)", [("query_keyword_p50_ms", "keyword, in process"), ("query_hybrid_p50_ms", "hybrid, in process"),
                        ("mcp_keyword_p50_ms", "keyword, MCP"), ("mcp_hybrid_p50_ms", "hybrid, MCP")]),
    ("memory and disk (MB)", [("server_rss_hybrid_mb", "server RSS (hybrid)"), ("minilm_peak_rss_mb", "index peak RSS (minilm)"),
                              ("vector_cache_mb", "vectors in memory"), ("keyword_db_mb", "database (keyword-only)")]),
]
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]


def svg_curve(rows: list[dict[str, Any]]) -> str:
    """Three log-log panels (x: copies of the corpus) as a standalone SVG document."""
    import math

    w, h, pad = 300, 240, 46
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{3 * w}" height="{h + 90}" font-family="sans-serif" font-size="11">',
             f'<rect width="{3 * w}" height="{h + 90}" fill="white"/>']
    xs = [r["copies"] for r in rows]
    for p, (title, series) in enumerate(PANELS):
        x0 = p * w
        values = [r[k] for k, _ in series for r in rows if r.get(k)]
        lo, hi = math.log10(min(values)) - 0.1, math.log10(max(values)) + 0.1
        xlo, xhi = math.log10(min(xs)), math.log10(max(xs)) or 1.0

        def px(x: float, x0: int = x0, xlo: float = xlo, xhi: float = xhi) -> float:
            return x0 + pad + (math.log10(x) - xlo) / ((xhi - xlo) or 1) * (w - pad - 14)

        def py(y: float, lo: float = lo, hi: float = hi) -> float:
            return 24 + (hi - math.log10(y)) / (hi - lo) * (h - 50)

        parts.append(f'<text x="{x0 + w / 2}" y="14" text-anchor="middle" font-weight="bold">{title}</text>')
        parts.append(f'<rect x="{x0 + pad}" y="24" width="{w - pad - 14}" height="{h - 50}" fill="none" stroke="#999"/>')
        for x in xs:
            parts.append(f'<text x="{px(x):.1f}" y="{h - 12}" text-anchor="middle">{x}x</text>')
        for e in range(math.floor(lo), math.ceil(hi) + 1):
            for m in (1, 2, 5):
                y = m * 10 ** e
                if lo <= math.log10(y) <= hi:
                    parts.append(f'<line x1="{x0 + pad}" x2="{x0 + w - 14}" y1="{py(y):.1f}" y2="{py(y):.1f}" stroke="#eee"/>')
                    parts.append(f'<text x="{x0 + pad - 4}" y="{py(y) + 4:.1f}" text-anchor="end">{y:g}</text>')
        for s, (key, label) in enumerate(series):
            pts = [(px(r["copies"]), py(r[key]), r) for r in rows if r.get(key)]
            colour = COLOURS[s % len(COLOURS)]
            parts.append('<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>'.format(
                colour, " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in pts)))
            for x, y, r in pts:
                hollow = key.startswith("minilm_index") and not r.get("minilm_measured", True)
                parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" stroke="{colour}" '
                             f'fill="{"white" if hollow else colour}"/>')
            parts.append(f'<rect x="{x0 + pad}" y="{h + 4 + 16 * s}" width="10" height="10" fill="{colour}"/>')
            parts.append(f'<text x="{x0 + pad + 14}" y="{h + 13 + 16 * s}">{label}</text>')
    parts.append(f'<text x="{3 * w - 8}" y="{h + 86}" text-anchor="end" fill="#666">x: copies of the eval corpus; '
                 'log scales; hollow: extrapolated (scripts/bench_scale.py)</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=SHARED / "eval-corpus")
    parser.add_argument("--queries", type=Path, default=SHARED / "eval-queries-dev.jsonl")
    parser.add_argument("--work", type=Path, default=Path("/tmp/mm-scale"), help="roots and databases (kept)")
    parser.add_argument("--sizes", default="1,4,16", help="copies of the corpus, comma-separated")
    parser.add_argument("--minilm-sizes", default="1,4", help="sizes indexed with minilm (others extrapolated)")
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--markdown-out", type=Path)
    parser.add_argument("--svg-out", type=Path)
    parser.add_argument("--from-json", type=Path, help="render the table and curve of a saved --json-out, measure nothing")
    parser.add_argument("--prior", type=Path, help="rows (JSON lines as printed) of sizes measured by an earlier run "
                        "in the same --work: kept, not measured again; a minilm-measured one is the extrapolation base")
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",")]
    args.minilm_sizes = {int(s) for s in args.minilm_sizes.split(",") if s}
    if not args.corpus.is_dir():
        print(f"corpus not found: {args.corpus}", file=sys.stderr)
        return 2
    prior: list[dict[str, Any]] = []
    if args.prior:
        prior = [json.loads(line) for line in args.prior.read_text(encoding="utf-8").splitlines() if line.startswith("{")]
    if not args.from_json and not any(r.get("minilm_measured") for r in prior) and min(args.sizes) not in args.minilm_sizes:
        print("--minilm-sizes must include the smallest size", file=sys.stderr)
        return 2
    if args.from_json:
        rows = json.loads(args.from_json.read_text(encoding="utf-8"))
    else:
        args.work.mkdir(parents=True, exist_ok=True)
        queries = load_queries(args.queries)
        measured: dict[int, dict[str, Any]] = {
            r["copies"]: {"seconds": r["minilm_index_s"], "report": {"passages": r["passages"]}}
            for r in prior if r.get("minilm_measured")}
        done = {r["copies"] for r in prior}
        rows = prior + [measure(n, args, queries, measured) for n in sorted(args.sizes) if n not in done]
    table = markdown_table(rows)
    print(table)
    if args.json_out and not args.from_json:
        args.json_out.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    if args.markdown_out:
        write_table(args.markdown_out, table)
    if args.svg_out:
        args.svg_out.write_text(svg_curve(rows), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
