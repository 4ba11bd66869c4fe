"""Embedders: a small protocol, onnxruntime presets, model files.

``get_embedder(name, threads)`` returns a loaded :class:`Embedder` or raises
:class:`~markdown_memory.errors.EmbedderUnavailableError` whose message says how to fix it.
"""

from __future__ import annotations

from .base import Embedder, get_embedder

__all__ = ["Embedder", "get_embedder"]
