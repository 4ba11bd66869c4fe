"""Shared onnxruntime plumbing for the presets: session options, length-sorted batching, pooling.

Every preset is "tokenizer.json + one ONNX graph". This module owns the generic parts:

* :func:`create_session` builds a CPU :class:`onnxruntime.InferenceSession` with ``threads``
  intra-op threads, one inter-op thread, spinning disabled (idle threads sleep instead of burning
  a core between requests, which matters for a long-lived MCP server) and log severity 3
  (errors only; onnxruntime logs to stderr, never stdout, which carries the MCP protocol).
* :func:`load_tokenizer` loads a ``tokenizers`` JSON file with padding off and truncation at
  ``max_length`` tokens (special tokens included).
* :func:`embed_batched` tokenises every text once, sorts by token length, runs batches padded
  only to the longest member (so a batch of short passages costs short-passage time), and puts
  the L2-normalised rows back in input order.

Shapes: token arrays are int64 ``[batch, seq]``; graph outputs are float32 ``[batch, dim]``
(pooled) or ``[batch, seq, dim]`` (use :func:`mean_pool`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EmbedderUnavailableError

#: Upper bound of the default intra-op thread count. Measured on MiniLM int8 (see minilm.py):
#: beyond 4 threads the per-batch gain is small and the server competes with the agent's tools.
MAX_DEFAULT_THREADS = 4
#: Default texts per onnxruntime call, and the cap on padded tokens per call (batch x longest).
#: Measured on MiniLM (table in minilm.py): on CPU, batches of long passages get *slower* per
#: passage past ~8 x 256 tokens (the attention tensors leave the cache), while batches of short
#: passages still gain from amortising the per-call overhead; so both limits apply.
DEFAULT_BATCH_SIZE = 32
DEFAULT_MAX_BATCH_TOKENS = 2048


#: onnxruntime calls the indexer keeps in flight (``index.embedding.EMBED_WORKERS`` is this value).
CALLS_IN_FLIGHT = 2


def default_threads() -> int:
    """Intra-op threads per call when none are configured: ``min(os.cpu_count(), 4) //
    CALLS_IN_FLIGHT``, at least 1 (the calls in flight share the cores). Measured on 2 cores,
    2,560 eval-corpus texts, MiniLM, two calls in flight: 1 thread per call 13.2k tokens/s vs
    12.1k with 2 (shipped graph, batches of 8); int8 graph, one text per call: 21.8k vs 18.7k."""
    return max(1, min(os.cpu_count() or 1, MAX_DEFAULT_THREADS) // CALLS_IN_FLIGHT)


def session_options(threads: int | None = None) -> Any:
    """onnxruntime SessionOptions: ``threads`` intra-op (default :func:`default_threads`), 1 inter-op,
    no spinning, sequential execution, log severity 3 (errors only)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = int(threads) if threads else default_threads()
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.log_severity_level = 3
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return opts


def create_session(model_path: Path, threads: int | None, what: str) -> Any:
    """Open ``model_path`` on the CPU provider.

    Raises EmbedderUnavailableError naming ``what`` and the underlying error when onnxruntime
    cannot load the graph (corrupt protobuf, missing external data, out of memory, permissions).
    The files were verified before this call, so the message says it is a load failure, not a
    download problem.
    """
    import onnxruntime as ort

    try:
        return ort.InferenceSession(
            str(model_path), sess_options=session_options(threads), providers=["CPUExecutionProvider"]
        )
    except Exception as exc:  # onnxruntime raises several unrelated types
        raise EmbedderUnavailableError(
            f"{what}: onnxruntime could not load verified model file {str(model_path)!r} "
            f"({type(exc).__name__}: {exc}); check free memory and file permissions"
        ) from exc


def load_tokenizer(path: Path, max_length: int, what: str) -> Any:
    """``tokenizers.Tokenizer`` from ``path`` with padding disabled and truncation at ``max_length``
    tokens (special tokens included). Raises EmbedderUnavailableError when the file is unreadable."""
    from tokenizers import Tokenizer

    try:
        tok = Tokenizer.from_file(str(path))
    except Exception as exc:
        raise EmbedderUnavailableError(
            f"{what}: could not load tokenizer {str(path)!r} ({type(exc).__name__}: {exc})"
        ) from exc
    tok.no_padding()
    tok.enable_truncation(max_length=max_length)
    return tok


@dataclass
class TokenBatch:
    """One padded batch: ``input_ids``, ``attention_mask``, ``token_type_ids``, all int64 ``[b, seq]``."""

    input_ids: np.ndarray
    attention_mask: np.ndarray
    token_type_ids: np.ndarray


def l2_normalise(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` scaled to unit L2 norm, as float32 (all-zero rows stay zero)."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    unit: np.ndarray = (x / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
    return unit


def mean_pool(hidden: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """Mean of ``hidden`` float ``[b, seq, dim]`` over positions where ``attention_mask`` ``[b, seq]`` is 1."""
    mask = attention_mask.astype(np.float32)[..., None]
    summed = (hidden * mask).sum(axis=1)
    mean: np.ndarray = summed / np.maximum(mask.sum(axis=1), 1e-9)
    return mean


def length_sorted_batches(
    lengths: Sequence[int], batch_size: int, max_tokens: int = DEFAULT_MAX_BATCH_TOKENS
) -> list[list[int]]:
    """Indices in order of increasing length, grouped into batches of at most ``batch_size``
    items and at most ``max_tokens`` padded tokens (items x longest; a single item always fits)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        # sorted ascending, so lengths[i] is the longest of the batch if i joins it
        if current and (len(current) >= batch_size or (len(current) + 1) * lengths[i] > max_tokens):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def token_lengths(tokenizer: Any, texts: Sequence[str], slice_size: int = 256) -> list[int]:
    """Token count of each text as ``embed_batched`` will feed it (special tokens included,
    truncation as configured), tokenised ``slice_size`` texts at a time (an encoding keeps its
    token strings and offsets: a whole corpus at once would hold hundreds of MB)."""
    out: list[int] = []
    for start in range(0, len(texts), slice_size):
        out.extend(len(e.ids) for e in tokenizer.encode_batch(list(texts[start:start + slice_size]),
                                                              add_special_tokens=True))
    return out


def embed_batched(
    texts: Sequence[str],
    tokenizer: Any,
    run: Callable[[TokenBatch], np.ndarray],
    dimension: int,
    batch_size: int = DEFAULT_BATCH_SIZE,
    pad_id: int = 0,
    max_tokens: int = DEFAULT_MAX_BATCH_TOKENS,
) -> np.ndarray:
    """Embed ``texts`` -> float32 ``[len(texts), dimension]``, L2-normalised, in input order.

    ``run`` receives one padded :class:`TokenBatch` and returns float ``[b, dimension]``.
    Texts are tokenised once (``encode_batch``, truncation as configured on ``tokenizer``),
    sorted by token count and cut into batches of at most ``batch_size`` texts and ``max_tokens``
    padded tokens, each padded to its longest member.
    """
    if len(texts) == 0:
        return np.zeros((0, dimension), dtype=np.float32)
    encodings = tokenizer.encode_batch(list(texts), add_special_tokens=True)
    lengths = [len(e.ids) for e in encodings]
    out = np.zeros((len(texts), dimension), dtype=np.float32)
    for idx in length_sorted_batches(lengths, max(1, batch_size), max_tokens):
        seq = max(1, max(lengths[i] for i in idx))
        ids = np.full((len(idx), seq), pad_id, dtype=np.int64)
        mask = np.zeros((len(idx), seq), dtype=np.int64)
        types = np.zeros((len(idx), seq), dtype=np.int64)
        for row, i in enumerate(idx):
            enc = encodings[i]
            n = lengths[i]
            ids[row, :n] = enc.ids
            mask[row, :n] = 1
            types[row, :n] = enc.type_ids
        vectors = np.asarray(run(TokenBatch(ids, mask, types)), dtype=np.float32)
        if vectors.shape != (len(idx), dimension):
            raise EmbedderUnavailableError(
                f"model returned shape {vectors.shape}, expected {(len(idx), dimension)}"
            )
        out[idx] = l2_normalise(vectors)
    return out
