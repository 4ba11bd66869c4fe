#!/usr/bin/env python3
"""Benchmark the reference implementation (PyPI ``markdown-memory==0.7.13``) like scripts/bench.py.

What it does, from one run:

1. Creates (once) a virtual environment for the reference from ``/usr/bin/python3`` (Debian's
   sqlite3 can load extensions; the reference loads sqlite-vec that way and cannot run without
   it) and ``pip install markdown-memory==0.7.13`` into it. The reference's code is used as
   installed, never copied or edited.
2. Runs the reference in child processes of that venv (this same file, ``--child ...``). At
   import time the child replaces the reference's embedder factory (``create_embedder`` in its
   ``embedders`` and ``server`` modules) so that the preset ``minilm`` returns *our* MiniLM
   embedder (``src/markdown_memory/embed/minilm.py``, imported from this checkout under the
   alias package ``mm_ours`` because both projects are called ``markdown_memory``), wrapped
   in the reference's embedder protocol: ``model_name``, ``dimension``, ``weights_revision``,
   ``warm_up()``, ``embed_documents(texts)``, ``embed_query(text)``. Same model files (the
   driver verifies ours and links them into a folder), same tokenizer, same batching.
3. Copies the corpus (default ``../shared/eval-corpus``), indexes it with the reference, and
   prints the figures scripts/bench.py prints: files, sections, passages, vectors embedded,
   index wall seconds (child process start to exit, model load included, as for ours), vectors/s,
   peak RSS, no-change re-index ms (in process, median of 5), one-file-edited re-index ms,
   query p50/p95 keyword-only and hybrid over the dev queries (in process), hybrid query
   p50/p95 through the MCP server (``search_docs`` over stdio), MCP handshake ms, database MB.
4. With ``--ours FILE`` (the ``--json-out`` of scripts/bench.py from the same session) it also
   prints the ratios ours / reference. Run the two scripts back to back: on a shared 2-core
   machine absolute times move with load; ratios from one run are what to compare.

Keyword-only in the reference: a second service whose embedder raises on ``embed_query``; the
reference then ranks by BM25 alone (it logs a warning per query, which the child silences).

Usage::

    python scripts/bench.py --json-out /tmp/ours.json
    python scripts/bench_reference.py --ours /tmp/ours.json [--venv DIR] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
SHARED = HERE.parent.parent / "shared"
REFERENCE = "markdown-memory==0.7.13"
REFERENCE_PYTHON = "/usr/bin/python3"
DEFAULT_VENV = Path(tempfile.gettempdir()) / "mm-reference-venv"
ENV_SRC = "MM_BENCH_OURS_SRC"
#: Figures where lower is better (ratios ours / reference < 1 mean we are faster / smaller).
RATIO_KEYS = (
    "index_seconds", "peak_rss_mb", "noop_reindex_ms", "one_file_edit_reindex_ms",
    "query_keyword_p50_ms", "query_hybrid_p50_ms", "mcp_query_p50_ms", "mcp_handshake_ms", "db_mb",
    "vectors_embedded", "texts_embedded",
)


# ------------------------------------------------------------------------------- driver side


def ensure_venv(venv: Path) -> Path:
    """Python of a venv holding the reference; created from /usr/bin/python3 when missing."""
    py = venv / "bin" / "python"
    if py.exists() and subprocess.run([str(py), "-c", "import markdown_memory.server"],
                                      capture_output=True).returncode == 0:
        return py
    subprocess.run([REFERENCE_PYTHON, "-c", "import sqlite3; sqlite3.connect(':memory:').enable_load_extension"],
                   check=True)
    subprocess.run([REFERENCE_PYTHON, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", REFERENCE], check=True)
    return py


def model_dir(work: Path) -> Path:
    """A folder with our verified MiniLM ``model.onnx`` and ``tokenizer.json`` (symlinks)."""
    sys.path.insert(0, str(SRC))
    from markdown_memory.embed.minilm import verify_minilm_files

    model, tok = verify_minilm_files()
    folder = work / "minilm"
    folder.mkdir()
    (folder / "model.onnx").symlink_to(model)
    (folder / "tokenizer.json").symlink_to(tok)
    return folder


def run_child(py: Path, env: dict[str, str], *args: str) -> dict:
    """Run ``--child ARGS`` in the reference venv; returns its JSON (last stdout line)."""
    proc = subprocess.run([str(py), str(Path(__file__).resolve()), "--child", *args], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
        raise SystemExit(f"reference child {args[0]} failed (exit {proc.returncode})")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def driver(args: argparse.Namespace) -> int:
    sys.path.insert(0, str(HERE))
    import bench

    if not args.corpus.is_dir():
        print(f"corpus not found: {args.corpus}", file=sys.stderr)
        return 2
    py = ensure_venv(args.venv)
    work = Path(tempfile.mkdtemp(prefix="mm-bench-ref-"))
    try:
        corpus = work / "corpus"
        shutil.copytree(args.corpus, corpus, symlinks=True)
        db = work / "reference.db"
        env = dict(os.environ, MARKDOWN_MEMORY_MINILM_DIR=str(model_dir(work)), **{ENV_SRC: str(SRC)},
                   MARKDOWN_MEMORY_DB=str(db), MARKDOWN_MEMORY_DOCS_DIR=str(corpus),
                   MARKDOWN_MEMORY_EMBEDDER="minilm", MARKDOWN_MEMORY_MODEL_CACHE=str(work / "cache"),
                   XDG_CACHE_HOME=str(work / "xdg-cache"), XDG_DATA_HOME=str(work / "xdg-data"),
                   HF_HUB_OFFLINE="1")
        env.pop("PYTHONPATH", None)
        if args.arithmetic == "int8":
            # the derivation needs the onnx package; build the int8 graph before the clock starts,
            # as our own bench finds it already in the model cache
            subprocess.run([str(py), "-m", "pip", "install", "-q", "onnx"], check=True)
            env["MARKDOWN_MEMORY_MODEL_CACHE"] = str(DEFAULT_VENV.parent / "mm-bench-ref-model-cache")
            run_child(py, env, "prepare")
        else:
            env["MARKDOWN_MEMORY_INT8_COMPUTE"] = "0"
        started = time.perf_counter()
        indexed = run_child(py, env, "index", str(corpus), str(db))
        wall = time.perf_counter() - started
        results: dict[str, object] = {
            "implementation": REFERENCE,
            "embedder": f"minilm (ours, injected, {args.arithmetic} arithmetic)",
            "cores": os.cpu_count(),
            "files": indexed["files"],
            "sections": indexed["sections"],
            "passages": indexed["passages"],
            "vectors_embedded": indexed["vectors_embedded"],
            "texts_embedded": indexed["vectors_embedded"],  # one model input per passage
            "tokens_embedded": indexed["tokens_embedded"],
            "index_seconds": round(wall, 2),
            "vectors_per_second": round(indexed["vectors_embedded"] / wall, 1) if wall else None,
            "peak_rss_mb": indexed["peak_rss_mb"],
        }
        measured = run_child(py, env, "measure", str(corpus), str(db), str(args.queries))
        results.update(measured)
        queries = bench.load_queries(args.queries)
        serve = [str(py), str(Path(__file__).resolve()), "--child", "serve"]
        mcp = bench.mcp_query_latency(queries, cmd=serve, env=env)
        results["mcp_query_p50_ms"] = mcp["p50"] if mcp else None
        results["mcp_query_p95_ms"] = mcp["p95"] if mcp else None
        handshake = bench.mcp_handshake_ms(cmd=serve, env=env)
        results["mcp_handshake_ms"] = round(handshake, 1) if handshake else None
        results["db_mb"] = round(bench._db_size(db) / 1e6, 1)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.ours:
        ours = json.loads(args.ours.read_text(encoding="utf-8"))
        for key in RATIO_KEYS:
            a, b = ours.get(key), results.get(key)
            if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b:
                results[f"ratio_{key}"] = round(a / b, 2)
    bench.report(results, args.json_out)
    return 0


# -------------------------------------------------------------------------------- child side


def _import_ours_minilm():
    """Our ``embed.minilm`` module, imported from the checkout as ``mm_ours.embed.minilm``."""
    import importlib
    import types

    if "mm_ours" not in sys.modules:
        pkg = types.ModuleType("mm_ours")
        pkg.__path__ = [str(Path(os.environ[ENV_SRC]) / "markdown_memory")]
        sys.modules["mm_ours"] = pkg
    return importlib.import_module("mm_ours.embed.minilm")


class InjectedMiniLM:
    """Our MiniLM embedder behind the reference's Embedder protocol (thread-safe, lazy load)."""

    def __init__(self, fail_queries: bool = False) -> None:
        import threading

        self._lock = threading.Lock()
        self._inner = None
        self._fail = fail_queries
        self.texts_embedded = 0
        self.tokens_embedded = 0

    @property
    def model_name(self) -> str:
        return "sentence-transformers/all-MiniLM-L6-v2 (int8 ONNX, markdown-memory bench)"

    @property
    def dimension(self) -> int:
        return 384

    @property
    def weights_revision(self) -> str | None:
        return self._load().weights_id

    def _load(self):
        with self._lock:
            if self._inner is None:
                self._inner = _import_ours_minilm().load_minilm()
            return self._inner

    def warm_up(self) -> None:
        self._load()

    def embed_documents(self, texts):
        inner = self._load()
        texts = list(texts)
        vectors = inner.embed_texts(texts)
        tokens = sum(len(e.ids) for e in inner.tokenizer.encode_batch(texts))
        with self._lock:
            self.texts_embedded += len(texts)
            self.tokens_embedded += tokens
        return vectors.tolist()

    def embed_query(self, text: str):
        if self._fail:
            from markdown_memory.exceptions import EmbeddingError

            raise EmbeddingError("keyword-only benchmark: vector side disabled")
        return self._load().embed_query(text).tolist()


def _patch_reference():
    """Make the reference's factory build :class:`InjectedMiniLM` for the preset ``minilm``."""
    import markdown_memory.embedders as mm_embedders
    import markdown_memory.server as mm_server

    original = mm_embedders.create_embedder

    def create_embedder(preset=mm_embedders.DEFAULT_EMBEDDER, *, cache_dir=None):
        return InjectedMiniLM() if preset == "minilm" else original(preset, cache_dir=cache_dir)

    mm_embedders.create_embedder = create_embedder
    mm_server.create_embedder = create_embedder
    return mm_server


def _service(mm_server, corpus: str, db: str, embedder):
    from markdown_memory.config import resolve_config

    config = resolve_config(db=Path(db), docs_dir=Path(corpus), embedder="minilm", auto_index=False)
    return mm_server.MarkdownMemoryService(config, embedder)


def child(argv: list[str]) -> int:
    import logging
    import resource
    import statistics

    sys.path.insert(0, str(HERE))
    import bench

    mode = argv[0]
    if mode == "prepare":  # build (or find) the int8 graph in the model cache, untimed
        print(json.dumps({"weights_id": _import_ours_minilm().load_minilm().weights_id}))
        return 0
    mm_server = _patch_reference()
    if mode == "serve":
        os.environ["MARKDOWN_MEMORY_EMBEDDER"] = "minilm"
        mm_server.main([])
        return 0
    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
    corpus, db = argv[1], argv[2]
    if mode == "index":
        for suffix in ("", "-wal", "-shm", ".lock"):
            Path(db + suffix).unlink(missing_ok=True)
        embedder = InjectedMiniLM()
        service = _service(mm_server, corpus, db, embedder)
        try:
            report = service.index_directory(None)
            out = {
                "files": report.files_scanned,
                "sections": report.sections_indexed,
                "passages": report.passages_indexed,
                "vectors_embedded": embedder.texts_embedded,
                "tokens_embedded": embedder.tokens_embedded,
                "errors": len(report.errors),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            }
        finally:
            service.close()
        print(json.dumps(out))
        return 0
    # mode == "measure": in-process re-index and query figures
    queries = bench.load_queries(Path(argv[3]))
    embedder = InjectedMiniLM()
    service = _service(mm_server, corpus, db, embedder)
    embedder.warm_up()
    out: dict[str, object] = {}
    noop = []
    for _ in range(5):
        t = time.perf_counter()
        service.index_directory(None)
        noop.append((time.perf_counter() - t) * 1000)
    out["noop_reindex_ms"] = round(statistics.median(noop), 1)
    files = sorted(Path(corpus).rglob("*.md"))
    victim = files[len(files) // 2]
    victim.write_text(victim.read_text(encoding="utf-8", errors="replace") + "\n\nAn added closing paragraph.\n",
                      encoding="utf-8")
    t = time.perf_counter()
    service.index_directory(None)
    out["one_file_edit_reindex_ms"] = round((time.perf_counter() - t) * 1000, 1)
    keyword = _service(mm_server, corpus, db, InjectedMiniLM(fail_queries=True))
    logging.getLogger("markdown_memory").setLevel(logging.CRITICAL)  # per-query fallback warnings
    for label, svc in (("keyword", keyword), ("hybrid", service)):
        svc.search_page(queries[0], 5)  # warm-up
        lat = []
        for q in queries:
            t = time.perf_counter()
            svc.search_page(q, 5)
            lat.append((time.perf_counter() - t) * 1000)
        out[f"query_{label}_p50_ms"] = round(statistics.median(lat), 1)
        out[f"query_{label}_p95_ms"] = round(bench._percentile(lat, 95), 1)
    keyword.close()
    service.close()
    print(json.dumps(out))
    return 0


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return child(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=SHARED / "eval-corpus")
    parser.add_argument("--queries", type=Path, default=SHARED / "eval-queries-dev.jsonl")
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV, help="reference venv (created when missing)")
    parser.add_argument("--ours", type=Path, help="JSON written by scripts/bench.py --json-out, for ratios")
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--arithmetic", choices=("float32", "int8"), default="float32",
                        help="arithmetic of the MiniLM graph injected into the reference: float32 = the "
                        "shipped graph as is (what ../shared/bench runs; default), int8 = the int8 "
                        "graph our indexer runs by default (embed/int8.py)")
    return driver(parser.parse_args())


if __name__ == "__main__":
    raise SystemExit(main())
