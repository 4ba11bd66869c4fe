"""The search filters a caller passes (``search_docs``, CLI ``search``), checked and turned into
a ``store.scope.Scope``: tags without ``#`` and empty entries, ``tags_mode`` ``any``/``all``,
``kind`` one of ``store.scope.KINDS``, ``lang`` lowercased, ``heading`` spelled as a breadcrumb."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .. import messages
from ..errors import QueryError
from ..store.scope import KINDS, TAG_MODES, Scope

if TYPE_CHECKING:  # pragma: no cover
    from ..request import SearchRequest

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


def clean_heading(heading: str | None) -> str | None:
    """A heading filter as the store matches it: spaces around each ``>`` made one
    (``Guide>Install`` is ``Guide > Install``, the breadcrumb's spelling), runs of white space
    one space, the ends stripped; None when nothing is left."""
    if heading is None:
        return None
    parts = [" ".join(part.split()) for part in heading.split(">")]
    text = " > ".join(parts).strip(" >") if any(parts) else ""
    return text or None


def make_scope(request: SearchRequest, path_prefix: str | None = None) -> Scope:
    """The Scope of ``request``'s filters, with ``path_prefix`` (the request's, already resolved
    against the docs root by the caller). Raises QueryError for a ``tags_mode`` or ``kind``
    outside its choices, or ``lang`` with a kind other than code."""
    mode = (request.tags_mode or "any").strip().lower()
    if mode not in TAG_MODES:
        raise QueryError(messages.bad_filter("tags_mode", request.tags_mode, TAG_MODES))
    block = (request.kind or "").strip().lower() or None
    if block is not None and block not in KINDS:
        raise QueryError(messages.bad_filter("kind", str(request.kind), tuple(KINDS)))
    language = (request.lang or "").strip().lower() or None
    if language is not None and block not in (None, "code"):
        raise QueryError(messages.lang_needs_code(block))
    return Scope(path_prefix or None, clean_tags(request.tags), mode, block, language,
                 heading=clean_heading(request.heading))
