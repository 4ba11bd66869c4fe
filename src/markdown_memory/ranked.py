"""One ranked, packed search pass over the index as it is (the engine runs it once, or again
after refreshing the files of stale hits), with the ranking's own notes: nothing matched
confidently, and why search is keyword-only."""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .drift import with_drift
from .embed.choice import other_vectors
from .models import Hit
from .models.notes import NoConfidentMatch, Note, Said, VectorsPending
from .search import analyse, distinct_hits, pack_hits, search_sections
from .search.focus import focus

if TYPE_CHECKING:  # pragma: no cover
    from .embed.loader import ModelLoader
    from .index.activity import IndexActivity
    from .messages import Context
    from .status import StatusReporter
    from .store import Store, VectorCache
    from .store.scope import Scope


@dataclass(frozen=True)
class Ranked:
    """One search over the index as it is, before freshness checks; ``found``: hits the search
    found for the answer (before the budget: see ``fit_answer``)."""

    hits: list[Hit]
    confidence: str
    keyword_only: bool
    notes: tuple[Note, ...]
    found: int
    p_answer: float = 0.0  # search/calibration.py: P(a hit carrying its text answers)


def rank_once(store: Store, loader: ModelLoader, activity: IndexActivity, reporter: StatusReporter, ctx: Context,
              vector_cache: VectorCache | None, query: str, top_k: int, scope: Scope, max_tokens: int,
              already_sent: Container[str] | None = None) -> Ranked:
    """Rank ``query`` within ``scope`` (with a query vector when the loaded model made the stored
    vectors) and pack ``top_k`` hits into ``max_tokens``; ``ctx``: the engine's context (its
    configured preset) for the call's reader."""
    embedder = ctx.embedder
    query = focus(query).text  # a long question is searched by what it asks (search/focus.py)
    qvec, embedder_name, other_build = None, None, None
    wid, _dim = store.vector_space()
    if store.vec_available and store.has_vec_tables():
        emb = loader.for_search()
        if emb is not None and emb.weights_id == wid:
            qvec, embedder_name = loader.query_vector(emb, query), emb.name
        elif emb is not None and wid is not None:
            other_build = wid
            activity.need_vectors()  # the server's next index run re-embeds with this model
    outcome = search_sections(store, analyse(query), qvec, embedder_name=embedder_name, top_k=top_k,
                              path_prefix=scope, vector_cache=vector_cache)
    packed = pack_hits(outcome.hits, top_k=top_k, max_tokens=max_tokens, sent=already_sent)
    notes: list[Note] = []
    if outcome.confidence == "none":
        empty = reporter.empty_index_message(ctx)
        notes.append(Said(empty) if empty else NoConfidentMatch(tuple(outcome.absent)))
    if qvec is None:
        loader.note_keyword_only()
        cause = reporter.keyword_only_cause(ctx)
        if cause is not None:
            notes.append(Said(cause))
        elif other_build is not None:
            notes.append(other_vectors(embedder, other_build))
        elif embedder != "none":
            notes.append(VectorsPending())
    # once a `drift` run has read the code side, hits say which names the code lost
    return Ranked(with_drift(store, list(packed)), outcome.confidence, qvec is None, tuple(notes),
                  len(distinct_hits(outcome.hits, top_k)), outcome.p_answer)
