"""Embedders: a small protocol, onnxruntime presets, model files.

``get_embedder(name, threads)`` returns a loaded :class:`Embedder` or raises
:class:`~markdown_memory.errors.EmbedderUnavailableError` whose message says how to fix it.
Both are imported on first use (PEP 562): ``config`` reads the preset registry
(``embed/presets.py``) on the MCP handshake path, which must not load more than that.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .base import Embedder, get_embedder

__all__ = ["Embedder", "get_embedder"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
