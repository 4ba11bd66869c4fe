"""markdown-memory: heading-addressed hybrid search over Markdown documentation.

The public API is :class:`Engine` (one docs root: ``index``, ``search`` of a
:class:`SearchRequest`, ``outline``, ``read``, ``list_documents``, ``status``), configured by
:class:`Settings`, returning the typed models of :mod:`markdown_memory.models` and raising the
errors of :mod:`markdown_memory.errors`. The CLI (``cli/``) and the MCP server (``mcp/``) are thin
adapters over it.

Names are imported on first use (PEP 562), so ``import markdown_memory`` stays cheap for the
MCP handshake.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> the module that defines it
_EXPORTS = {
    "Engine": "engine",
    "Settings": "config",
    "Freshness": "models",
    "SearchRequest": "models",
    "SearchAnswer": "models",
    "Hit": "models",
    "Outline": "models",
    "OutlineHeading": "models",
    "SectionText": "models",
    "DocumentList": "models",
    "DocumentEntry": "models",
    "IndexStatus": "models",
    "IndexReport": "models",
    "MarkdownMemoryError": "errors",
    "ConfigError": "errors",
    "DocumentNotFoundError": "errors",
    "SectionNotFoundError": "errors",
    "PathOutsideRootError": "errors",
    "QueryError": "errors",
    "InvalidRequestError": "errors",
    "IndexBusyError": "errors",
    "EmbedderUnavailableError": "errors",
    "RootMismatchError": "errors",
    "DocsRootMissingError": "errors",
    "DatabaseReadOnlyError": "errors",
}

__all__ = ["__version__", *sorted(_EXPORTS)]

if TYPE_CHECKING:  # pragma: no cover
    from .config import Settings
    from .engine import Engine
    from .errors import (
        ConfigError,
        DatabaseReadOnlyError,
        DocsRootMissingError,
        DocumentNotFoundError,
        EmbedderUnavailableError,
        IndexBusyError,
        InvalidRequestError,
        MarkdownMemoryError,
        PathOutsideRootError,
        QueryError,
        RootMismatchError,
        SectionNotFoundError,
    )
    from .models import (
        DocumentEntry,
        DocumentList,
        Freshness,
        Hit,
        IndexReport,
        IndexStatus,
        Outline,
        OutlineHeading,
        SearchAnswer,
        SearchRequest,
        SectionText,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'markdown_memory' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
