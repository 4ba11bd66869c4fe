"""The Embedder protocol every preset implements.

Vectors are float32, L2-normalised, shape ``[n, dimension]``. ``weights_id`` identifies the exact
weights (preset name + file hashes); vectors of different ``weights_id`` are never compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


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


def get_embedder(name: str, threads: int | None = None) -> Embedder:
    """Load preset ``name`` ("minilm", "embeddinggemma" or "multilingual-e5").

    Raises EmbedderUnavailableError (with the fix in the message) when files are missing,
    fail verification, or cannot be loaded; ValueError for an unknown name.
    """
    if name == "minilm":
        from .minilm import load_minilm

        return load_minilm(threads=threads)
    if name == "embeddinggemma":
        from .gemma import load_gemma

        return load_gemma(threads=threads)
    if name == "multilingual-e5":
        from .e5 import load_e5

        return load_e5(threads=threads)
    raise ValueError(f"unknown embedder preset {name!r}")


def expected_weights_id(name: str) -> str | None:
    """The ``weights_id`` preset ``name`` would load, when that is known without loading the
    model (a few stats and a small JSON read, no onnxruntime session); None when it is not known
    (the preset must be loaded to find out) or for an unknown preset.

    The indexer compares it with the stored vectors' id: a run with nothing pending may skip
    loading the model only when they match, so vectors of another build (the other MiniLM
    arithmetic, other weights) are never kept under a model that did not make them.
    """
    if name == "minilm":
        from .minilm import expected_minilm_weights_id

        return expected_minilm_weights_id()
    if name == "embeddinggemma":
        from .download import GEMMA_MANIFEST
        from .gemma import gemma_weights_id

        return gemma_weights_id(GEMMA_MANIFEST)
    if name == "multilingual-e5":
        from .e5 import WEIGHTS_ID

        return WEIGHTS_ID
    return None


def preset_of_weights_id(weights_id: str) -> str | None:
    """The preset ("minilm", "embeddinggemma" or "multilingual-e5") whose vectors carry
    ``weights_id``, from its prefix; None for an id no preset writes."""
    for prefix, name in (("minilm-", "minilm"), ("embeddinggemma-", "embeddinggemma"),
                         ("multilingual-e5-", "multilingual-e5")):
        if weights_id.startswith(prefix):
            return name
    return None


def model_problem(name: str) -> str | None:
    """Why preset ``name`` cannot be loaded, judged from its files' presence only (no hashing,
    no onnxruntime session; a few stats), with the fix; None when its files are in place (a
    load may still fail verification) or for an unknown preset. For ``status``: it must not
    send a MiniLM user to ``--download-model``, which fetches EmbeddingGemma."""
    from ..errors import EmbedderUnavailableError

    if name == "minilm":
        from .minilm import INSTALL_FIX, minilm_files

        try:
            files = minilm_files()
        except EmbedderUnavailableError as exc:
            return str(exc)
        missing = [str(f) for f in files if not f.is_file()]
        return f"the minilm model files are missing ({', '.join(missing)}); {INSTALL_FIX}" if missing else None
    if name == "embeddinggemma":
        from .download import GEMMA_MANIFEST, _local_specs, _override_dir, model_dir, offline_hint

        folder = model_dir(GEMMA_MANIFEST)
        specs = _local_specs(folder, GEMMA_MANIFEST, _override_dir() is not None)
        if all((folder / s.path).is_file() for s in specs):
            return None
        return (f"the embeddinggemma model is not installed in {folder}; run `markdown-memory --download-model`; "
                f"{offline_hint(GEMMA_MANIFEST)}")
    if name == "multilingual-e5":
        from .e5 import e5_problem

        return e5_problem()
    return None
