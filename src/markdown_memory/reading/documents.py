"""A requested document as it is on disk now: resolved (path, unique suffix, link target, note
name) and re-indexed first when its file changed, so a read never serves old text."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import DocumentNotFoundError
from ..files.walk import stat_signature
from .links import note_path
from .resolve import disk_spelling, normalise_request_path, resolve_document

if TYPE_CHECKING:  # pragma: no cover
    from ..store import Store


def current_document(store_of: Callable[[], Store], root: Path, file_path: str,
                     refresh: Callable[[list[str]], object]) -> tuple[int, str, str, dict[str, object]]:
    """(id, path, title, front matter) of a requested document, re-indexed first when the
    file changed on disk (or is on disk but not yet indexed), so reads never serve old text.
    ``store_of``: this thread's connection, asked again after a refresh (which may have created
    the database: ``Database.connection``)."""
    store = store_of()
    try:
        rel = resolve_document(file_path, root, store.indexed_paths())
    except DocumentNotFoundError:
        rel = disk_spelling(root, normalise_request_path(file_path, root))
        refresh([rel])
        store = store_of()
        try:
            rel = resolve_document(file_path, root, store.indexed_paths())
        except DocumentNotFoundError as exc:
            reason = store.failure_reason(rel)
            if reason:
                raise DocumentNotFoundError(f"{rel!r} is not indexed: {reason}") from exc
            named = note_path(file_path, store)  # a note's name, alias or front-matter title
            if named is None:
                raise
            rel = named
    else:
        try:
            st = os.stat(root / rel)
            current = stat_signature(st) if os.access(root / rel, os.R_OK) else None
        except OSError:
            current = None
        if current != store.document_signature(rel):
            refresh([rel])
    header = store.document_header(rel)
    if header is None:
        why = store.failure_reason(rel) or "it was deleted or moved since it was indexed"
        raise DocumentNotFoundError(f"{rel!r} is no longer indexed: {why}")
    return header.id, header.path, header.title, header.metadata
