"""The learned ranker: a linear pairwise model over ``search/features.py``, shipped as a JSON data
file (``ranker_model.json`` next to this module) and evaluated with numpy at query time.

Model file (written by ``scripts/train_ranker.py``)::

    {"format": 1, "features": [names...], "depth": 50,
     "models": {"vectors": {"mean": [...], "scale": [...], "weights": [...]},
                "keyword": {...}},
     "trained_on": {...}}

A candidate's score is ``((x - mean) / scale) @ weights`` over its feature row ``x``; ``vectors``
scores searches with a query vector, ``keyword`` keyword-only ones. ``rerank`` orders the pages
of the first ``DEPTH`` candidates of the first stage by that score (``page_order``: a page takes
the places its candidates' scores earn, ties keep the first-stage order) and keeps the first
stage's order of the sections inside each page: which section of a page answers is the second
stage's choice (``sections.py``: sibling evidence, the intent a question asks for), which the
training data shows too rarely to learn (docs/ranking.md, "The learned ranker"). The places keep
their first-stage scores, so scores stay in rank order and the packer's score shares mean what
they meant.

The ranker is a setting, not a request field: ``config.ranker_choice()``
(``MARKDOWN_MEMORY_RANKER``, the CLI's global ``--ranker``).

``capture()`` is the training export's tap: while it is open, every ranking appends its
candidates' feature rows (``Captured``) to it; the eval (``evaluation.export_features``) labels them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .candidates import Candidate
from .features import DEPTH, FEATURES, features
from .signals import Pool

MODEL_PATH = Path(__file__).with_name("ranker_model.json")


@dataclass(frozen=True)
class LinearModel:
    """One mode's weights over the standardised features (arrays of ``len(FEATURES)``)."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray

    def score(self, x: np.ndarray) -> np.ndarray:
        """float64 ``[n]`` scores of the feature rows ``x`` (``[n, len(FEATURES)]``)."""
        return np.asarray(((x - self.mean) / self.scale) @ self.weights, dtype=np.float64)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LinearModel:
        return cls(*(np.asarray(data[k], dtype=np.float64) for k in ("mean", "scale", "weights")))


@dataclass(frozen=True)
class RankerModel:
    """The shipped model: ``vectors`` for searches with a query vector, ``keyword`` without."""

    vectors: LinearModel
    keyword: LinearModel

    def for_mode(self, has_vectors: bool) -> LinearModel:
        return self.vectors if has_vectors else self.keyword


def parse_model(data: dict[str, Any]) -> RankerModel:
    """The model in a model file's JSON; ValueError when its features are not ``FEATURES``."""
    if list(data.get("features", [])) != list(FEATURES):
        raise ValueError("the ranker model was trained on other features than search/features.py gives; "
                         "retrain it with scripts/train_ranker.py")
    models = data["models"]
    return RankerModel(LinearModel.from_dict(models["vectors"]), LinearModel.from_dict(models["keyword"]))


@lru_cache(maxsize=1)
def shipped_model() -> RankerModel:
    """The package's model (read once). Raises OSError / ValueError for a missing or stale file."""
    return parse_model(json.loads(MODEL_PATH.read_text(encoding="utf-8")))


_override: RankerModel | None = None


@contextmanager
def using(model: RankerModel) -> Iterator[None]:
    """Rank with ``model`` whatever the setting while open (leave-one-project-out evaluation
    scores each project with the model trained without it: ``scripts/lopo_ranker.py``)."""
    global _override
    previous, _override = _override, model
    try:
        yield
    finally:
        _override = previous


def chosen_model(ranker: str) -> RankerModel | None:
    """The model ranking uses: the one ``using`` set, else the shipped one for ``ranker``
    ``learned``, else None (``rrf``: the first stage's order stays)."""
    if _override is not None:
        return _override
    return shipped_model() if ranker == "learned" else None


@dataclass
class Captured:
    """One ranking seen by ``capture``: the query text, whether it had vectors, its first ``DEPTH``
    candidates in first-stage order, and their feature rows (``[n, len(FEATURES)]``)."""

    query: str
    has_vectors: bool
    candidates: list[Candidate]
    rows: np.ndarray


_sink: list[Captured] | None = None


@contextmanager
def capture() -> Iterator[list[Captured]]:
    """Collect every ranking's features while open (one process-wide list: eval runs searches one
    at a time)."""
    global _sink
    previous, _sink = _sink, []
    try:
        yield _sink
    finally:
        _sink = previous


def page_order(scores: Sequence[float], pages: Sequence[object]) -> list[int]:
    """Indexes of ``len(scores)`` candidates (first-stage order) in the learned order: the places,
    best score first (ties: first-stage order), each go to the candidate's page, and a page fills
    the places it earned with its own candidates in first-stage order. ``pages[i]``: candidate
    ``i``'s page (any hashable key). E.g. scores ``[1, 3, 2]`` of pages ``[a, a, b]``: page a earns
    places 0 and 2 (scores 3 and 1), b place 1, so the order is ``[0, 2, 1]``."""
    by_score = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    queues: dict[object, list[int]] = {}
    for i, page in enumerate(pages):
        queues.setdefault(page, []).append(i)
    taken = dict.fromkeys(queues, 0)
    out = []
    for i in by_score:
        page = pages[i]
        out.append(queues[page][taken[page]])
        taken[page] += 1
    return out


def rerank(pool: Pool, ordered: list[Candidate], model: RankerModel | None) -> list[Candidate]:
    """``ordered`` (first-stage order) with its first ``DEPTH`` candidates ordered by ``model``
    (None: unchanged); each place keeps its score. Records the rows when ``capture`` is open."""
    if not ordered or (model is None and _sink is None):
        return ordered
    rows = features(pool, ordered)
    head = ordered[:DEPTH]
    if _sink is not None:
        _sink.append(Captured(pool.query.text, pool.qvec is not None, list(head), rows))
    if model is None:
        return ordered
    scores = model.for_mode(pool.qvec is not None).score(rows)
    order = page_order(scores.tolist(), [c.row["doc_id"] for c in head])
    if order == list(range(len(head))):
        return ordered
    kept = [c.score for c in head]
    out = [head[i] for i in order]
    for c, score in zip(out, kept):
        c.score = score
    return out + ordered[DEPTH:]
