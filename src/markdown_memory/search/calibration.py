"""A calibrated answer probability: how likely the first hit, some hit with text, and each hit
answers the query, from what the ranking knows about its best candidates.

Three logistic models per search mode (``vector``: the query was embedded; ``keyword``:
keyword-only), fitted by ``scripts/calibrate.py`` on the dev sets' left-out projects and shipped
per ranker (``data/calibration.json`` for ``rrf``, ``data/calibration-learned.json`` for the
learned ranker: the probability describes the order it was fitted on; evaluated here with
numpy: a dot product per model):

* ``first``: P(the first hit answers), over :data:`ANSWER_FEATURES`;
* ``some``: P(some hit that carries its text answers), same features;
* ``hit``: P(a hit after the first answers), over :data:`HIT_FEATURES` of that hit.

Features marked monotone in the file (``increasing``/``decreasing``) were fitted with the sign of
their weight constrained, so the probability never falls as, say, the score margin or the best
cosine grows. The ``confidence`` label is read off the probabilities (:func:`label`, bars per
mode): "high" when ``p_first`` clears ``high``, "none" when ``p_some`` is below ``none`` ("no
good answer"), "low" otherwise. The hook's bar (``hook``) is chosen for >= 85% precision on
the left-out folds (docs/prompt-hook.md); ``null`` when no bar reaches it (the hook is silent
in that mode).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

import numpy as np

from .candidates import Candidate

Confidence = Literal["high", "low", "none"]
DATA = Path(__file__).parent / "data" / "calibration.json"


def data_path(ranker: str) -> Path:
    """The calibration fitted on ``ranker``'s answers (``rrf``: ``data/calibration.json``,
    ``learned``: ``data/calibration-learned.json``): the probabilities describe one ranking."""
    return DATA if ranker == "rrf" else DATA.with_name(f"calibration-{ranker}.json")

#: Query-level features (each 0-1 or a small count), in the model's order.
ANSWER_FEATURES = (
    "margin",          # (s1 - s2) / s1 of the fused scores
    "top_coverage",    # IDF share of the query's words the first hit holds
    "best_coverage",   # the same, best of the top 5
    "covered_share",   # distinct query words the first hit holds / the query's words
    "top_cosine",      # cosine of the first hit's best passage (0 keyword-only)
    "best_cosine",     # best cosine of the top 5
    "top_exact",       # the first hit holds or defines a rare query identifier
    "agree",           # the first hit tops both the keyword and the vector list
    "keyword_first",   # the first hit tops the keyword list
    "page_share",      # share of the top 5 in the first hit's file
    "absent",          # a query identifier or product name no document holds
    "ident_missing",   # the query names identifiers and no candidate holds one
    "rule_high",       # the hand-set rule (search/confidence.py) says "high"
    "rule_some",       # the hand-set rule says "high" or "low"
    "crumb",           # the first hit's breadcrumb holds every query word
    "query_words",     # log1p(distinct query words) / 3
    "top_score",       # the first hit's fused score (times 30: about 0-1)
)
#: Per-hit features (hits after the first).
HIT_FEATURES = ("first_logit", "place", "score_share", "coverage", "cosine", "exact", "same_file")
#: Features the probability may only rise with (their weight is fitted >= 0) ...
INCREASING = frozenset({"margin", "top_coverage", "best_coverage", "covered_share", "top_cosine", "best_cosine",
                        "top_exact", "agree", "keyword_first", "rule_high", "rule_some", "crumb", "top_score",
                        "score_share", "coverage", "cosine", "exact"})
#: ... and those it may only fall with (weight <= 0).
DECREASING = frozenset({"absent", "ident_missing", "place"})


@dataclass(frozen=True)
class Query:
    """What the ranking knows about the query beside its candidates."""

    has_vectors: bool
    rule: Confidence
    absent: bool
    identifiers: bool
    crumb: bool
    words: int


def answer_features(ordered: Sequence[Candidate], q: Query) -> np.ndarray:
    """:data:`ANSWER_FEATURES` of a ranking ``ordered`` best first (non-empty): shape (17,)."""
    top = ordered[0]
    best = ordered[:5]
    s1 = top.score
    s2 = ordered[1].score if len(ordered) > 1 else 0.0
    same = sum(1 for c in best if c.row.get("file_path") == top.row.get("file_path"))
    holds = any(c.exact or c.defines for c in ordered)
    return np.array([
        (s1 - s2) / s1 if s1 > 0 else 0.0,
        top.coverage, max(c.coverage for c in best), top.covered / max(q.words, 1),
        top.cosine if q.has_vectors else 0.0, max(c.cosine for c in best) if q.has_vectors else 0.0,
        float(top.exact or top.defines), float(top.keyword_rank == 0 and top.vector_rank == 0),
        float(top.keyword_rank == 0), same / len(best), float(q.absent), float(q.identifiers and not holds),
        float(q.rule == "high"), float(q.rule != "none"), float(q.crumb), math.log1p(q.words) / 3,
        30 * s1,
    ], dtype=np.float64)


def hit_features(ordered: Sequence[Candidate], first_logit: float, has_vectors: bool) -> np.ndarray:
    """:data:`HIT_FEATURES` of every candidate of ``ordered`` (the first's row is unused):
    shape (n, 7)."""
    top = ordered[0]
    rows = []
    for place, c in enumerate(ordered):
        rows.append([first_logit / 5, math.log1p(place) / 3, c.score / top.score if top.score > 0 else 0.0,
                     c.coverage, c.cosine if has_vectors else 0.0, float(c.exact or c.defines),
                     float(c.row.get("file_path") == top.row.get("file_path"))])
    return np.array(rows, dtype=np.float64).reshape(len(rows), len(HIT_FEATURES))


@dataclass(frozen=True)
class Estimate:
    """``p_first``, ``p_some`` (0-1), ``p_hits`` one per candidate (the first is ``p_first``),
    the ``confidence`` label, and the features they came from (for ``scripts/calibrate.py``)."""

    p_first: float
    p_some: float
    p_hits: tuple[float, ...]
    confidence: Confidence
    features: tuple[float, ...] = ()
    hit_rows: tuple[tuple[float, ...], ...] = ()


def calibrator(ranker: str | None = None) -> dict[str, Any]:
    """The shipped calibration of ``ranker`` (None: the ranker setting, ``config.ranker_choice``;
    :func:`data_path`), read once. Raises ConfigError for an unknown ranker setting."""
    from ..config import ranker_choice

    return _read(ranker or ranker_choice())


@cache
def _read(ranker: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(data_path(ranker).read_text(encoding="utf-8"))
    return data


def probability(model: dict[str, Any], x: np.ndarray) -> np.ndarray:
    """P of one logistic ``model`` of the file for feature rows ``x`` ((d,) or (n, d))."""
    return _sigmoid(_logit(model, x))


def _logit(model: dict[str, Any], x: np.ndarray) -> np.ndarray:
    z = (x - np.asarray(model["mean"])) / np.asarray(model["scale"])
    out: np.ndarray = z @ np.asarray(model["coef"]) + float(model["bias"])
    return out


def _sigmoid(z: np.ndarray | float) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(z, -30, 30))))


def _mode(has_vectors: bool) -> str:
    return "vector" if has_vectors else "keyword"


def label(p_first: float, p_some: float, has_vectors: bool, ranker: str | None = None) -> Confidence:
    """The ``confidence`` label of the probabilities of a search with or without vectors
    ranked by ``ranker`` (None: the setting; module docstring)."""
    bars = calibrator(ranker)["bars"][_mode(has_vectors)]
    if p_first >= bars["high"]:
        return "high"
    if p_some < bars["none"]:
        return "none"
    return "low"


def hook_bar(has_vectors: bool, ranker: str | None = None) -> float | None:
    """The ``p_answer`` the prompt hook needs before it injects anything (module docstring);
    None when no bar of that mode reached 85% precision on the left-out projects: the hook then
    injects nothing in that mode (keyword-only, as fitted today)."""
    bar = calibrator(ranker)["bars"][_mode(has_vectors)]["hook"]
    return None if bar is None else float(bar)


def estimate(ordered: Sequence[Candidate], q: Query, ranker: str | None = None) -> Estimate:
    """The probabilities and label of a ranking ``ordered`` best first, made by ``ranker``
    (None: the setting); an empty ranking is (0, 0, (), "none")."""
    if not ordered:
        return Estimate(0.0, 0.0, (), "none")
    models = calibrator(ranker)["models"][_mode(q.has_vectors)]
    x = answer_features(ordered, q)
    first_logit = float(_logit(models["first"], x))
    p_first = float(_sigmoid(first_logit))
    p_some = max(float(_sigmoid(_logit(models["some"], x))), p_first)  # the first hit carries text
    rows = hit_features(ordered, first_logit, q.has_vectors)
    p_rest = _sigmoid(_logit(models["hit"], rows[1:])) if len(ordered) > 1 else np.zeros(0)
    p_hits = (p_first, *(min(float(p), p_some) for p in p_rest))
    return Estimate(p_first, p_some, p_hits, label(p_first, p_some, q.has_vectors, ranker), tuple(float(v) for v in x),
                    tuple(tuple(float(v) for v in r) for r in rows))
