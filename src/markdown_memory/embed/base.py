"""The Embedder protocol every preset implements, and the preset operations by name.

Vectors are float32, L2-normalised, shape ``[n, dimension]``. ``weights_id`` identifies the exact
weights (preset name + file hashes); vectors of different ``weights_id`` are never compared.
Which presets exist, and what each can do, is the registry in ``embed/presets.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .presets import PRESETS, preset, preset_of_weights_id

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

__all__ = ["Embedder", "expected_weights_id", "get_embedder", "model_problem", "preset_of_weights_id"]


@runtime_checkable
class Embedder(Protocol):
    """Turns passages and queries into comparable unit vectors."""

    name: str
    dimension: int
    weights_id: str

    def document_text(self, title: str, text: str) -> str:
        """The exact string embedded for a passage of section ``title`` (breadcrumb)."""
        ...

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Embed already formatted document strings -> float32 ``[len(texts), dimension]``."""
        ...

    def embed_query(self, query: str) -> np.ndarray:
        """Embed one search query -> float32 ``[dimension]``."""
        ...


@runtime_checkable
class SortsByTokens(Protocol):
    """An embedder that pads each batch to its longest text: the indexer orders texts by
    :meth:`sort_lengths` (token counts) so a batch holds texts of like length."""

    def sort_lengths(self, texts: Sequence[str]) -> list[int]:
        """Token counts of ``texts``, in order."""
        ...


def batch_order_lengths(embedder: Embedder, texts: Sequence[str]) -> list[int]:
    """The lengths the indexer sorts ``texts`` by before batching them for ``embedder``: token
    counts for an embedder that pads batches (:class:`SortsByTokens`), else characters."""
    if isinstance(embedder, SortsByTokens):
        return embedder.sort_lengths(texts)
    return [len(t) for t in texts]


def get_embedder(name: str, threads: int | None = None) -> Embedder:
    """Load preset ``name`` (a key of ``presets.PRESETS``).

    Raises EmbedderUnavailableError (with the fix in the message) when files are missing,
    fail verification, or cannot be loaded; ValueError for an unknown name.
    """
    return preset(name).implementation().load(threads)


def expected_weights_id(name: str) -> str | None:
    """The ``weights_id`` preset ``name`` would load, when that is known without loading the
    model (a few stats and a small JSON read, no onnxruntime session); None when it is not known
    (the preset must be loaded to find out) or for an unknown preset.

    The indexer compares it with the stored vectors' id: a run with nothing pending may skip
    loading the model only when they match, so vectors of another build (the other MiniLM
    arithmetic, other weights) are never kept under a model that did not make them.
    """
    found = PRESETS.get(name)
    return found.implementation().expected_weights_id() if found else None


def model_problem(name: str) -> str | None:
    """Why preset ``name`` cannot be loaded, judged from its files' presence only (no hashing,
    no onnxruntime session; a few stats), with the fix; None when its files are in place (a
    load may still fail verification) or for an unknown preset. For ``status``: it must not
    send a MiniLM user to ``--download-model``, which fetches EmbeddingGemma."""
    found = PRESETS.get(name)
    return found.implementation().problem() if found else None
