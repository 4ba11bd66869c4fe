"""The ``embeddinggemma`` preset (default): EmbeddingGemma-300m, 4-bit ONNX, 768-d.

Files: see :mod:`.download` (pinned revision, 217.6 MB, sha256-verified, stamp). This module
never downloads: :func:`load_gemma` loads from ``MARKDOWN_MEMORY_MODEL_DIR`` or the cache and
raises EmbedderUnavailableError naming ``markdown-memory --download-model`` and the offline copy
when the files are absent.

Graph: inputs ``input_ids`` and ``attention_mask`` (int64 ``[b, seq]``), output
``sentence_embedding`` (float32 ``[b, 768]``, already pooled); we L2-normalise it.
Prompts (EmbeddingGemma's published retrieval prompts):

* query: ``"task: search result | query: {query}"``
* document: ``"title: {title or 'none'} | text: {text}"`` (the breadcrumb is the title).

Length: at most :data:`MAX_LENGTH` = 512 tokens per input, special tokens included (the model
accepts 2048). Passages are chunked by the indexer well below that, and attention cost grows with
the square of the length, so 512 bounds batch memory and time; the rare longer passage is
truncated (its head, with the title, is embedded). Batches follow onnx_runtime's defaults
(<= 32 texts, <= 2048 padded tokens).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import EmbedderUnavailableError
from ..reader import ProgramSentence
from . import onnx_runtime as rt
from .download import (
    GEMMA_MANIFEST,
    MANIFESTS,
    Manifest,
    ModelInfo,
    ensure_model,
    local_specs,
    model_dir,
    offline_hint,
    override_dir,
)

DIMENSION = 768
MAX_LENGTH = 512
QUERY_PREFIX = "task: search result | query: "
DOCUMENT_TEMPLATE = "title: {title} | text: {text}"


class GemmaEmbedder:
    """EmbeddingGemma from a verified :class:`ModelInfo`. Thread-safe for concurrent ``embed_*``."""

    name = "embeddinggemma"
    dimension = DIMENSION

    def __init__(self, info: ModelInfo, manifest: Manifest = GEMMA_MANIFEST, threads: int | None = None,
                 batch_size: int = rt.DEFAULT_BATCH_SIZE,
                 max_batch_tokens: int = rt.DEFAULT_MAX_BATCH_TOKENS) -> None:
        self.weights_id = gemma_weights_id(manifest)
        self.tokenizer = rt.load_tokenizer(info.files[manifest.tokenizer_file], MAX_LENGTH, self.name)
        self.session = rt.create_session(info.files[manifest.onnx_file], threads, self.name)
        inputs = {i.name for i in self.session.get_inputs()}
        outputs = {o.name for o in self.session.get_outputs()}
        if not {"input_ids", "attention_mask"} <= inputs or "sentence_embedding" not in outputs:
            raise EmbedderUnavailableError(
                f"{self.name}: graph {str(info.files[manifest.onnx_file])!r} has inputs {sorted(inputs)} and "
                f"outputs {sorted(outputs)}; expected input_ids, attention_mask -> sentence_embedding"
            )
        self._feed_types = "token_type_ids" in inputs
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        pad = self.tokenizer.token_to_id("<pad>")
        self._pad_id = pad if pad is not None else 0

    def document_text(self, title: str, text: str) -> str:
        """``"title: {title or 'none'} | text: {text}"``."""
        return DOCUMENT_TEMPLATE.format(title=title or "none", text=text)

    def _run(self, batch: rt.TokenBatch) -> np.ndarray:
        feed = {"input_ids": batch.input_ids, "attention_mask": batch.attention_mask}
        if self._feed_types:
            feed["token_type_ids"] = batch.token_type_ids
        pooled: np.ndarray
        (pooled,) = self.session.run(["sentence_embedding"], feed)
        return pooled

    def sort_lengths(self, texts: Sequence[str]) -> list[int]:
        """Token counts (the indexer orders texts by them, so each padded batch holds texts of
        nearly one length: 11.8% of the fed tokens were padding when ordered by characters)."""
        return rt.token_lengths(self.tokenizer, texts)

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """float32 ``[len(texts), 768]``, unit rows, input order; inputs over 512 tokens are truncated."""
        return rt.embed_batched(
            texts, self.tokenizer, self._run, DIMENSION, self.batch_size, self._pad_id, self.max_batch_tokens
        )

    def embed_query(self, query: str) -> np.ndarray:
        """float32 ``[768]`` unit vector of ``QUERY_PREFIX + query``."""
        row: np.ndarray = self.embed_texts([QUERY_PREFIX + query])[0]
        return row


def gemma_weights_id(manifest: Manifest) -> str:
    """``weights_id`` of the preset: the manifest's prefix and each pinned file's sha256 head."""
    return manifest.weights_prefix + "".join(":" + s.sha256[:12] for s in manifest.files)


def load_gemma(threads: int | None = None, *, manifest: Manifest = GEMMA_MANIFEST) -> GemmaEmbedder:
    """Verify (stamp or sha256) and load EmbeddingGemma; never downloads.

    Raises EmbedderUnavailableError: files missing or failing verification (message names
    ``markdown-memory --download-model`` and the offline copy folder), or onnxruntime/tokenizer
    failing to load verified files (reported as a load failure; nothing is re-downloaded).
    """
    info = ensure_model(manifest.preset, download=False, manifest=manifest)
    return GemmaEmbedder(info, manifest, threads=threads)


# -- the preset's operations (``presets.PresetModule``) ----------------------------------------
def load(threads: int | None) -> GemmaEmbedder:
    """See :func:`load_gemma` (the pinned manifest)."""
    return load_gemma(threads=threads)


def expected_weights_id() -> str | None:
    """The pinned manifest's id (known without loading)."""
    return gemma_weights_id(GEMMA_MANIFEST)


def problem() -> str | None:
    """Why the preset cannot load, from its files' presence (no hashing), with the fix."""
    folder = model_dir(GEMMA_MANIFEST)
    specs = local_specs(folder, GEMMA_MANIFEST, override_dir() is not None)
    if all((folder / s.path).is_file() for s in specs):
        return None
    hint = offline_hint(GEMMA_MANIFEST)
    return ProgramSentence(lambda name: f"the embeddinggemma model is not installed in {folder}; run "
                                        f"`{name} --download-model`; {hint}")


def download_summary(manifest: Manifest | None = None, endpoint: str | None = None) -> str:
    """Fetch the missing or failing files of ``manifest`` (default: ``download.MANIFESTS``) from
    ``endpoint`` (default: the Hub), verify and load them."""
    info = ensure_model(GEMMA_MANIFEST.preset, download=True, manifest=manifest, endpoint=endpoint)
    gemma = GemmaEmbedder(info, manifest or MANIFESTS[GEMMA_MANIFEST.preset])
    gemma.embed_query("test")
    return (
        f"{GEMMA_MANIFEST.preset}: verified (sha256) and loaded {len(info.files)} files, {info.total_bytes / 1e6:.1f} MB, "
        f"in {info.dir}; weights {gemma.weights_id}"
    )
