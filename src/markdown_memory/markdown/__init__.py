"""Markdown -> sections and passages (markdown-it-py tokens, source line ranges)."""

from __future__ import annotations

from .parse import ParsedDocument, Passage, Section, parse_document

__all__ = ["ParsedDocument", "Passage", "Section", "parse_document"]
