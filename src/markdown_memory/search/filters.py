"""The search filters a caller passes (``search_docs``, CLI ``search``), checked and turned into
a ``store.scope.Scope``: tags without ``#`` and empty entries, ``tags_mode`` ``any``/``all``,
``kind`` one of ``store.scope.KINDS``, ``lang`` lowercased."""

from __future__ import annotations

from collections.abc import Iterable

from .. import messages
from ..errors import QueryError
from ..store.scope import KINDS, TAG_MODES, Scope

#: At most this many tags per filter (each is one SQL condition).
MAX_TAGS = 32


def clean_tags(tags: Iterable[str] | str | None) -> tuple[str, ...]:
    """Tags as a filter uses them: a comma- or space-separated string or a list, ``#`` and
    ``/`` at the ends dropped, empty ones skipped, at most ``MAX_TAGS``."""
    if tags is None:
        return ()
    items = [tags] if isinstance(tags, str) else list(tags)
    out: list[str] = []
    for item in items:
        for part in str(item).replace(",", " ").split():
            tag = part.strip().lstrip("#").strip("/")
            if tag and tag not in out:
                out.append(tag)
    return tuple(out[:MAX_TAGS])


def make_scope(path_prefix: str | None, tags: Iterable[str] | str | None = None, tags_mode: str = "any",
               kind: str | None = None, lang: str | None = None) -> Scope:
    """A Scope of the given filters. Raises QueryError for a ``tags_mode`` or ``kind`` outside
    its choices."""
    mode = (tags_mode or "any").strip().lower()
    if mode not in TAG_MODES:
        raise QueryError(messages.bad_filter("tags_mode", tags_mode, TAG_MODES))
    block = (kind or "").strip().lower() or None
    if block is not None and block not in KINDS:
        raise QueryError(messages.bad_filter("kind", str(kind), tuple(KINDS)))
    language = (lang or "").strip().lower() or None
    if language is not None and block not in (None, "code"):
        raise QueryError(messages.lang_needs_code(block))
    return Scope(path_prefix or None, clean_tags(tags), mode, block, language)
