"""Second stage: which section of the best page answers (section choice inside a document).

The first stage (``signals.py``) ranks sections against the whole index; its order says which
*page* the question is about well, but between sections of one page it often decides on little:
a child inherits its parent's heading words in the breadcrumb and, being shorter, wins BM25; a
query word that names the page (``requestId`` on the request-id page) lifts every section holding
it. This stage re-decides only that choice, at query time, over the top ``Tuning.section_window``
candidates: the sections of the first candidate's page keep the places (slots) that page holds,
and are reordered among those slots by

    first-stage score + sum(weight * evidence normalised to 0-1 among the siblings)

with one named piece of evidence per entry of ``EVIDENCE`` (weights ``Tuning.section_weights``,
in fused-score units; ``Tuning.without(name)`` switches one off):

* ``sibling_terms`` — the query words the section holds in its own heading and body, each
  weighted by its index IDF times its rarity *among the page's sections*
  (``log(1 + sections / sections holding it)``); words of the page's title or path are page-level
  evidence and count for no section. So the section is chosen by where the query's rare words
  are inside the page, not by breadcrumb words it inherits.
* ``rare_window`` — passage-level proximity: per section, over its passages, the largest IDF
  mass of distinct query words standing within ``Tuning.window_words`` words of each other. Off
  by default (weight 0): alone it gained as much as ``sibling_terms`` on one dev set and lost on
  another, and added nothing to it (docs/ranking.md).
* ``token_match`` — late interaction (MaxSim) between the query's and the section's word-piece
  states from the embedding model (``TokenStates``, e.g. MiniLM's ``last_hidden_state``): the
  mean over query tokens of the best cosine with a section token. Absent for keyword-only search
  or a model without token states. Off by default (weight 0, and search does not pass token
  states): on the dev sets it added nothing beyond ``sibling_terms`` at ~20 ms per section;
  ``rank(..., tokens=embedder)`` with a weight turns it on for an experiment.

Other pages' candidates and the page order are left as they are, and each slot keeps its score,
so scores stay in rank order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ..store import Store
from ..text import WORD, fts_text
from .candidates import Candidate
from .tuning import Tuning


@runtime_checkable
class TokenStates(Protocol):
    """An embedder that exposes per-token states: ``token_states(texts, max_tokens)`` -> per text
    float32 ``[n, dim]`` unit rows (special tokens left out)."""

    def token_states(self, texts: Sequence[str], max_tokens: int = ...) -> list[np.ndarray]: ...

    def document_text(self, title: str, text: str) -> str: ...


@dataclass
class Siblings:
    """The sections of one page being compared: ``members`` (candidates, first-stage order),
    the query ``text``, its tokens' index IDF ``weights`` and ``stems`` (``rank._Facts``), and
    the embedder's token states (None: keyword-only)."""

    store: Store
    text: str
    weights: dict[str, float]
    stems: dict[str, str | None]
    members: list[Candidate]
    tokens: TokenStates | None
    tuning: Tuning


@dataclass(frozen=True)
class Evidence:
    """A named piece of second-stage evidence: ``measure`` gives one value per member (higher:
    more likely the answering section), or None when it has nothing to say for this query."""

    name: str
    measure: Callable[[Siblings], list[float] | None]


def _words(text: str) -> set[str]:
    return set(WORD.findall(fts_text(text)))


def _holds(words: set[str], token: str, stem: str | None) -> bool:
    if token in words:
        return True
    return stem is not None and any(w.startswith(stem) for w in words)


def sibling_terms(sib: Siblings) -> list[float] | None:
    """IDF mass of the query words each member holds (own heading and body), each word weighted
    by its rarity among the page's sections; page-level words (title, path) count for none."""
    if not sib.weights:
        return None
    row = sib.members[0].row
    page_words = _words(f"{row['doc_title']}\n{row['file_path']}")
    page = [_words(s.text) for s in sib.store.sections_of(row["doc_id"])]
    rarity: dict[str, float] = {}
    for tok, stem in sib.stems.items():
        if _holds(page_words, tok, stem):
            continue
        held = sum(1 for words in page if _holds(words, tok, stem))
        if held:
            rarity[tok] = sib.weights[tok] * math.log(1 + len(page) / held)
    if not rarity:
        return None
    out = []
    for c in sib.members:
        words = _words(c.row["text"])
        out.append(sum(w for tok, w in rarity.items() if _holds(words, tok, sib.stems[tok])))
    return out


def _window_mass(words: list[str], weights: dict[str, float], stems: dict[str, str | None], width: int) -> float:
    """The largest IDF mass of distinct query tokens found together within ``width`` consecutive
    ``words`` (the minimal-window idea of proximity ranking, as one number)."""
    hits = []
    for i, w in enumerate(words):
        for tok, stem in stems.items():
            if w == tok or (stem is not None and w.startswith(stem)):
                hits.append((i, tok))
                break
    best = 0.0
    for a, (start, _tok) in enumerate(hits):
        seen: dict[str, float] = {}
        for pos, tok in hits[a:]:
            if pos - start >= width:
                break
            seen[tok] = weights[tok]
        best = max(best, sum(seen.values()))
    return best


def rare_window(sib: Siblings) -> list[float] | None:
    """Per member, over its passages (paragraphs, list items, rows, code blocks), the largest
    IDF mass of distinct query words standing within ``Tuning.window_words`` words of each other:
    the passage where the question's rare words occur together."""
    if not sib.weights:
        return None
    width = sib.tuning.window_words
    passages = sib.store.passages_of_sections([c.section_id for c in sib.members])
    out = []
    for c in sib.members:
        texts = [p.text for p in passages.get(c.section_id, [])] or [c.row["text"]]
        out.append(max(_window_mass(WORD.findall(fts_text(t)), sib.weights, sib.stems, width) for t in texts))
    return out


def token_match(sib: Siblings) -> list[float] | None:
    """MaxSim of the query's token states against each member's (breadcrumb + text, cut at
    ``Tuning.token_match_tokens`` word pieces)."""
    if sib.tokens is None:
        return None
    limit = sib.tuning.token_match_tokens
    (query,) = sib.tokens.token_states([sib.text], limit)
    if not len(query):
        return None
    texts = [sib.tokens.document_text(c.row["heading_path"], c.row["text"]) for c in sib.members]
    return [float((query @ states.T).max(axis=1).mean()) if len(states) else 0.0
            for states in sib.tokens.token_states(texts, limit)]


#: The second stage's evidence, in the order it is added.
EVIDENCE: tuple[Evidence, ...] = (
    Evidence("sibling_terms", sibling_terms),
    Evidence("rare_window", rare_window),
    Evidence("token_match", token_match),
)


def choose_sections(store: Store, text: str, weights: dict[str, float], stems: dict[str, str | None],
                    ordered: list[Candidate], tuning: Tuning, tokens: TokenStates | None = None,
                    evidence: tuple[Evidence, ...] = EVIDENCE) -> list[Candidate]:
    """``ordered`` (best first) with the first candidate's page's sections among the top
    ``tuning.section_window`` reordered in the places that page holds (module docstring); each
    place keeps its score. Returns ``ordered`` itself when the page has one section there or no
    evidence is switched on (enabled, with a weight above 0)."""
    on = [e for e in evidence if tuning.enabled(e.name) and tuning.section_weights[e.name]]
    window = ordered[:tuning.section_window]
    if not on or not window:
        return ordered
    page = window[0].row["doc_id"]
    slots = [i for i, c in enumerate(window) if c.row["doc_id"] == page]
    if len(slots) < 2:
        return ordered
    members = [window[i] for i in slots]
    sib = Siblings(store, text, weights, stems, members, tokens, tuning)
    combined = [c.score for c in members]
    for e in on:
        values = e.measure(sib)
        if values is None:
            continue
        low, spread = min(values), (max(values) - min(values)) or 1.0
        weight = tuning.section_weights[e.name]
        combined = [s + weight * (v - low) / spread for s, v in zip(combined, values)]
        if e.name == "sibling_terms":
            for c, v in zip(members, values):
                c.section_evidence = (v - low) / spread
    chosen = [members[i] for i in sorted(range(len(members)), key=lambda i: -combined[i])]
    if chosen == members:
        return ordered
    scores = [c.score for c in members]
    out = list(ordered)
    for slot, c, score in zip(slots, chosen, scores):
        c.score = score
        out[slot] = c
    return out
