#!/usr/bin/env python3
"""A stand-in for EmbeddingGemma-300m (the default preset) with random weights, to time the
default model's cost where its weights cannot be downloaded.

Not shipped in the package; needs the ``onnx`` package (the ``minilm`` extra has it) to build.

Shape (the published architecture; sources in docs/performance.md, "The default model's cost"):

* Gemma 3 text encoder, 24 layers, hidden 768, feed-forward 1152 (gated GELU-tanh: gate and up
  768->1152, down 1152->768), 3 query heads and 1 key/value head of 256 dims (q 768->768, k and
  v 768->256, o 768->768), RMSNorm before and after attention and feed-forward, q/k RMSNorm,
  rotary positions, bidirectional attention over the padding mask, query scale 256^-0.5;
  vocabulary 262,144 x 768, embeddings scaled by sqrt(768); sequences up to 2048 tokens (the
  preset truncates at 512, where the sliding window of 512 covers every layer anyway).
* Sentence-transformers head: mean pooling over the mask, Dense 768->3072, Dense 3072->768
  (no bias), as in the published ONNX export's ``sentence_embedding`` output.
* Operators as in the q4 export: every weight MatMul is ``com.microsoft.MatMulNBits`` (4 bits,
  block 32, symmetric, no zero points), the embedding table ``com.microsoft.GatherBlockQuantized``
  (4 bits, block 32). ``--accuracy-level 4`` sets MatMulNBits' int8-compute level instead of the
  default (0: dequantise to float32), to show what that attribute is worth.
* Inputs ``input_ids``, ``attention_mask`` (int64 ``[b, seq]``); output ``sentence_embedding``
  float32 ``[b, 768]``: what ``embed/gemma.py`` checks and feeds.

The weights are random (values do not change the arithmetic's cost). The tokenizer is the
MiniLM ``tokenizer.json`` shipped in the package (WordPiece, 30,522 ids, all valid rows of the
262,144-row table): Gemma's own tokenizer is not reachable here, so token counts are MiniLM's.

Usage::

    python scripts/embeddinggemma_standin.py build  /tmp/gemma-standin
    python scripts/embeddinggemma_standin.py query  /tmp/gemma-standin          # query p50/p95
    python scripts/embeddinggemma_standin.py index  /tmp/gemma-standin --corpus DIR [--limit N]
    python scripts/embeddinggemma_standin.py padding /tmp/gemma-standin --corpus DIR

``query`` and ``index`` run the real preset class (``embed.gemma.GemmaEmbedder``: prompts,
truncation at 512, length-sorted batches of <= 32 texts / 2048 padded tokens) on ``--threads``
(default 2) intra-op threads; ``index`` runs the real indexer (``Engine.index``) over a docs
root with the stand-in as its model. Figures: see docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
SHARED = HERE.parent.parent / "shared"
sys.path.insert(0, str(SRC))

LAYERS = 24
HIDDEN = 768
FFN = 1152
HEADS = 3
KV_HEADS = 1
HEAD_DIM = 256
VOCAB = 262_144
DENSE = 3072
BLOCK = 32
ROPE_GLOBAL, ROPE_LOCAL = 1_000_000.0, 10_000.0
SLIDING_PATTERN = 6  # every 6th layer is global attention (rope base 1e6), others local (1e4)
MINILM_TOKENIZER = SRC / "markdown_memory" / "embed" / "data" / "all-MiniLM-L6-v2" / "tokenizer.json"


# -- building the graph ------------------------------------------------------------------------
def build(out: Path, *, layers: int = LAYERS, accuracy_level: int = 0, seed: int = 0) -> Path:
    """Write ``out/onnx/model_q4.onnx`` (+ ``.onnx_data``) and ``out/tokenizer.json``."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    inits: list = []
    nodes: list = []
    n = [0]

    def name(prefix: str) -> str:
        n[0] += 1
        return f"{prefix}_{n[0]}"

    def const(arr: np.ndarray, prefix: str = "c") -> str:
        nm = name(prefix)
        inits.append(numpy_helper.from_array(arr, nm))
        return nm

    def op(kind: str, inputs: list[str], domain: str = "", **attrs) -> str:
        out_name = name(kind.lower())
        nodes.append(helper.make_node(kind, inputs, [out_name], name=out_name, domain=domain, **attrs))
        return out_name

    def q4_matmul(x: str, k: int, n_out: int) -> str:
        blocks = k // BLOCK
        packed = rng.integers(0, 256, size=(n_out, blocks, BLOCK // 2), dtype=np.uint8)
        scales = (rng.random(n_out * blocks, dtype=np.float32) * 0.02 + 0.005).astype(np.float32)
        return op("MatMulNBits", [x, const(packed, "w"), const(scales, "s")], domain="com.microsoft",
                  K=k, N=n_out, bits=4, block_size=BLOCK, accuracy_level=accuracy_level)

    def rms(x: str, dim: int) -> str:
        w = (1.0 + rng.normal(0, 0.02, dim)).astype(np.float32)  # Gemma's (1 + weight)
        return op("SimplifiedLayerNormalization", [x, const(w, "g")], axis=-1, epsilon=1e-6)

    ids, mask = "input_ids", "attention_mask"
    # embeddings: 4-bit table, scaled by sqrt(hidden)
    table = rng.integers(0, 256, size=(VOCAB, HIDDEN // 2), dtype=np.uint8)
    tscales = (rng.random((VOCAB, HIDDEN // BLOCK), dtype=np.float32) * 0.02 + 0.005).astype(np.float32)
    x = op("GatherBlockQuantized", [const(table, "emb"), ids, const(tscales, "embs")], domain="com.microsoft",
           gather_axis=0, quantize_axis=1, block_size=BLOCK, bits=4)
    x = op("Mul", [x, const(np.array(math.sqrt(HIDDEN), np.float32))])
    # positions 0..seq-1 and the two rotary tables
    shape = op("Shape", [ids])
    seq = op("Gather", [shape, const(np.array(1, np.int64))], axis=0)
    pos = op("Cast", [op("Range", [const(np.array(0, np.int64)), seq, const(np.array(1, np.int64))])],
             to=TensorProto.FLOAT)
    pos = op("Unsqueeze", [pos, const(np.array([1], np.int64))])  # [s, 1]
    rope = {}
    for base in (ROPE_LOCAL, ROPE_GLOBAL):
        inv = (1.0 / base ** (np.arange(0, HEAD_DIM, 2, dtype=np.float32) / HEAD_DIM)).astype(np.float32)
        freqs = op("Mul", [pos, const(inv[None, :])])  # [s, 128]
        emb = op("Concat", [freqs, freqs], axis=-1)  # [s, 256]
        rope[base] = (op("Cos", [emb]), op("Sin", [emb]))
    # additive padding mask [b, 1, 1, s]
    maskf = op("Cast", [mask], to=TensorProto.FLOAT)
    bias = op("Mul", [op("Sub", [const(np.array(1.0, np.float32)), maskf]), const(np.array(-1e9, np.float32))])
    bias = op("Unsqueeze", [bias, const(np.array([1, 2], np.int64))])
    split_half = const(np.array([HEAD_DIM // 2, HEAD_DIM // 2], np.int64))

    def heads(t: str, h: int) -> str:  # [b, s, h*d] -> [b, h, s, d]
        r = op("Reshape", [t, const(np.array([0, 0, h, HEAD_DIM], np.int64))])
        return op("Transpose", [r], perm=[0, 2, 1, 3])

    def rotary(t: str, cos: str, sin: str) -> str:
        a = name("half_a")
        b = name("half_b")
        nodes.append(helper.make_node("Split", [t, split_half], [a, b], axis=-1, name=name("split")))
        rotated = op("Concat", [op("Neg", [b]), a], axis=-1)
        return op("Add", [op("Mul", [t, cos]), op("Mul", [rotated, sin])])

    for layer in range(layers):
        cos, sin = rope[ROPE_GLOBAL if (layer + 1) % SLIDING_PATTERN == 0 else ROPE_LOCAL]
        h = rms(x, HIDDEN)
        q = heads(q4_matmul(h, HIDDEN, HEADS * HEAD_DIM), HEADS)
        k = heads(q4_matmul(h, HIDDEN, KV_HEADS * HEAD_DIM), KV_HEADS)
        v = heads(q4_matmul(h, HIDDEN, KV_HEADS * HEAD_DIM), KV_HEADS)
        q = rotary(rms(q, HEAD_DIM), cos, sin)
        k = rotary(rms(k, HEAD_DIM), cos, sin)
        scores = op("MatMul", [q, op("Transpose", [k], perm=[0, 1, 3, 2])])  # [b, 3, s, s] (kv broadcast)
        scores = op("Add", [op("Mul", [scores, const(np.array(HEAD_DIM ** -0.5, np.float32))]), bias])
        ctx = op("MatMul", [op("Softmax", [scores], axis=-1), v])  # [b, 3, s, 256]
        ctx = op("Reshape", [op("Transpose", [ctx], perm=[0, 2, 1, 3]),
                             const(np.array([0, 0, HEADS * HEAD_DIM], np.int64))])
        x = op("Add", [x, rms(q4_matmul(ctx, HEADS * HEAD_DIM, HIDDEN), HIDDEN)])
        h = rms(x, HIDDEN)
        gate = op("FastGelu", [q4_matmul(h, HIDDEN, FFN)], domain="com.microsoft")  # GELU-tanh
        up = q4_matmul(h, HIDDEN, FFN)
        x = op("Add", [x, rms(q4_matmul(op("Mul", [gate, up]), FFN, HIDDEN), HIDDEN)])
    x = rms(x, HIDDEN)
    # mean pooling over the mask, then the two Dense layers
    m3 = op("Unsqueeze", [maskf, const(np.array([2], np.int64))])
    summed = op("ReduceSum", [op("Mul", [x, m3]), const(np.array([1], np.int64))], keepdims=0)
    count = op("Max", [op("ReduceSum", [maskf, const(np.array([1], np.int64))], keepdims=1),
                       const(np.array(1e-9, np.float32))])
    pooled = op("Div", [summed, count])
    dense = q4_matmul(q4_matmul(pooled, HIDDEN, DENSE), DENSE, HIDDEN)
    nodes.append(helper.make_node("Identity", [dense], ["sentence_embedding"], name="out"))

    graph = helper.make_graph(
        nodes, "embeddinggemma_standin",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", HIDDEN])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    (out / "onnx").mkdir(parents=True, exist_ok=True)
    path = out / "onnx" / "model_q4.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="model_q4.onnx_data", size_threshold=1024)
    shutil.copyfile(MINILM_TOKENIZER, out / "tokenizer.json")
    return path


# -- the real preset on the stand-in -------------------------------------------------------------
def load(folder: Path, threads: int):
    """``embed.gemma.GemmaEmbedder`` (the real preset class) over the stand-in's files."""
    from markdown_memory.embed.download import GEMMA_MANIFEST, Manifest, ModelInfo
    from markdown_memory.embed.gemma import GemmaEmbedder

    manifest = Manifest(preset="embeddinggemma", repo_id="standin", revision="0" * 40, folder=folder.name,
                        onnx_file=GEMMA_MANIFEST.onnx_file, tokenizer_file=GEMMA_MANIFEST.tokenizer_file,
                        files=(), weights_prefix="embeddinggemma-standin")
    info = ModelInfo(folder, {manifest.onnx_file: folder / manifest.onnx_file,
                              manifest.tokenizer_file: folder / manifest.tokenizer_file})
    return GemmaEmbedder(info, manifest, threads=threads)


def _pct(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))]


def measure_queries(folder: Path, threads: int, queries: Path, repeats: int) -> dict:
    """Query-embedding latency (ms) over the dev queries, by query-token length bucket."""
    emb = load(folder, threads)
    texts = [json.loads(line)["query"] for line in queries.read_text().splitlines() if line.strip()]
    emb.embed_query("warm up")
    times: list[tuple[int, float]] = []
    cpu: list[float] = []
    for _ in range(repeats):
        for t in texts:
            tokens = len(emb.tokenizer.encode("task: search result | query: " + t).ids)
            start, start_cpu = time.perf_counter(), time.process_time()
            emb.embed_query(t)
            times.append((tokens, (time.perf_counter() - start) * 1000))
            cpu.append((time.process_time() - start_cpu) * 1000)
    all_ms = [ms for _, ms in times]
    tokens = [t for t, _ in times]
    return {"queries": len(texts), "repeats": repeats, "threads": threads,
            "tokens_p50": _pct([float(t) for t in tokens], 50), "tokens_max": max(tokens),
            "p50_ms": round(_pct(all_ms, 50), 1), "p95_ms": round(_pct(all_ms, 95), 1),
            "mean_ms": round(statistics.fmean(all_ms), 1), "cpu_p50_ms": round(_pct(cpu, 50), 1),
            "load_average": round(os.getloadavg()[0], 1)}


def _index_with(emb, corpus: Path, limit: int | None, preset: str, stub: bool = False) -> tuple[dict, float, int]:
    """Index ``corpus`` (its first ``limit`` files when given) with the real indexer and ``emb``
    as the model (``stub``: the graph is not run, a constant vector is returned; for counting
    tokens and padding only). Returns (batch statistics, wall seconds, files)."""
    from markdown_memory.config import Settings
    from markdown_memory.embed import onnx_runtime as rt
    from markdown_memory.engine import Engine

    stats = {"calls": 0, "tokens": 0, "padded": 0, "texts": 0, "model_s": 0.0, "cpu_s": 0.0}
    run = emb._run

    def counted(batch: rt.TokenBatch):
        start = time.perf_counter()
        out = np.ones((batch.input_ids.shape[0], emb.dimension), np.float32) if stub else run(batch)
        stats["model_s"] += time.perf_counter() - start
        stats["calls"] += 1
        stats["texts"] += batch.input_ids.shape[0]
        stats["tokens"] += int(batch.attention_mask.sum())
        stats["padded"] += int(batch.input_ids.size)
        return out

    emb._run = counted  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "docs"
        files = sorted(p for p in corpus.rglob("*.md") if p.is_file())
        if limit:
            files = files[:limit]
        for f in files:
            dest = root / f.relative_to(corpus)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dest)
        engine = Engine(Settings.load(root, Path(tmp) / "index.db", preset), embedder=emb)
        start, start_cpu = time.perf_counter(), time.process_time()
        engine.index()
        wall = time.perf_counter() - start
        stats["cpu_s"] = time.process_time() - start_cpu
        engine.close()
    return stats, wall, len(files)


def measure_padding(folder: Path, corpus: Path, limit: int | None) -> dict:
    """Tokens and padded tokens of the batches the real indexer forms (model not run), for the
    stand-in's preset (batches <= 32 texts / 2048 tokens, truncation 512) and for MiniLM's
    (int8 arithmetic: one text per call; float32: <= 8 texts / 256 tokens)."""
    from markdown_memory.embed.minilm import load_minilm

    out = {}
    minilm = load_minilm(int8_arithmetic=False)
    for label, emb, preset in (("standin", load(folder, 1), "embeddinggemma"),
                               ("minilm_float32", minilm, "minilm")):
        stats, wall, files = _index_with(emb, corpus, limit, preset, stub=True)
        out[label] = {"files": files, "texts": stats["texts"], "calls": stats["calls"], "tokens": stats["tokens"],
                      "padded_tokens": stats["padded"],
                      "padding_waste": round(1 - stats["tokens"] / max(1, stats["padded"]), 4)}
    return out


def measure_index(folder: Path, threads: int, corpus: Path, limit: int | None) -> dict:
    """Index ``corpus`` with the real indexer and the stand-in: wall time, texts, tokens, padding."""
    stats, wall, files = _index_with(load(folder, threads), corpus, limit, "embeddinggemma")
    return {"files": files, "threads": threads, "wall_s": round(wall, 1),
            "texts": stats["texts"], "calls": stats["calls"], "tokens": stats["tokens"],
            "padded_tokens": stats["padded"], "padding_waste": round(1 - stats["tokens"] / max(1, stats["padded"]), 4),
            "model_s": round(stats["model_s"], 1), "texts_per_s": round(stats["texts"] / wall, 2),
            "tokens_per_s": round(stats["tokens"] / stats["model_s"], 1),
            "cpu_s": round(stats["cpu_s"], 1), "s_per_1000_files": round(wall / files * 1000, 0),
            "cpu_s_per_1000_files": round(stats["cpu_s"] / files * 1000, 0),
            "texts_per_file": round(stats["texts"] / files, 1), "load_average": round(os.getloadavg()[0], 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("build", "query", "index", "padding"))
    ap.add_argument("folder", type=Path)
    ap.add_argument("--layers", type=int, default=LAYERS)
    ap.add_argument("--accuracy-level", type=int, default=0, choices=(0, 1, 2, 3, 4))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--queries", type=Path, default=SHARED / "eval-queries-dev.jsonl")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--corpus", type=Path, default=SHARED / "eval-corpus")
    ap.add_argument("--limit", type=int, help="index only the first N files (sorted paths)")
    args = ap.parse_args()
    if args.what == "build":
        path = build(args.folder, layers=args.layers, accuracy_level=args.accuracy_level)
        size = sum(p.stat().st_size for p in path.parent.iterdir())
        print(json.dumps({"graph": str(path), "bytes": size}))
    elif args.what == "query":
        print(json.dumps(measure_queries(args.folder, args.threads, args.queries, args.repeats)))
    elif args.what == "padding":
        print(json.dumps(measure_padding(args.folder, args.corpus, args.limit)))
    else:
        print(json.dumps(measure_index(args.folder, args.threads, args.corpus, args.limit)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
