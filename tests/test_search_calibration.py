"""The calibrated answer probability (search/calibration.py): every hit and answer carries a
``p_answer`` in [0, 1], the ``confidence`` label is read from it, it rises with the evidence it
should rise with, an unanswerable question gets a low one and the prompt hook stays silent."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import indexed_engine
from markdown_memory.hook import inject
from markdown_memory.hook.payload import Payload
from markdown_memory.models import SearchRequest
from markdown_memory.search import calibration as cal

FIXTURES = Path(__file__).parent / "fixtures" / "search"
ANSWERABLE = ["WIDGET_TIMEOUT_SECONDS", "how can I make big file transfers go faster", "is HTTPS_PROXY respected?",
              "what does --dry-run do", "数据库迁移"]
UNANSWERABLE = ["Will it rain in Lisbon this weekend?", "What's a good hydration ratio for sourdough bread?"]


@pytest.fixture(scope="module", params=["minilm", "none"])
def engine(request, tmp_path_factory, minilm):
    root = tmp_path_factory.mktemp(f"calibration-{request.param}") / "docs"
    shutil.copytree(FIXTURES, root)
    eng = indexed_engine(root, request.param, minilm)
    yield eng
    eng.close()


def test_every_hit_and_answer_carries_a_probability_the_label_is_read_from(engine):
    for query in ANSWERABLE + UNANSWERABLE:
        answer = engine.search(SearchRequest(query, top_k=10))
        assert 0.0 <= answer.p_answer <= 1.0
        assert answer.to_dict()["p_answer"] == round(answer.p_answer, 3)
        if not answer.results:  # keyword-only: no word of the question in the docs
            assert answer.p_answer == 0.0 and answer.confidence == "none"
            continue
        for hit in answer.results:
            assert hit.p_answer is not None and 0.0 <= hit.p_answer <= 1.0
            assert hit.p_answer <= answer.p_answer + 1e-9  # no hit is likelier than "some hit answers"
            assert hit.to_dict()["p_answer"] == round(hit.p_answer, 3)
        # the ranking's mode: vectors were used (a CJK query to the English-only model is ranked by keywords)
        vectors = not answer.keyword_only and any("vector" in h.matched_by for h in answer.results)
        assert answer.confidence == cal.label(answer.results[0].p_answer, answer.p_answer, vectors)


def test_an_unanswerable_question_gets_a_low_probability_and_the_hook_stays_silent(engine):
    bars = cal.calibrator()["bars"]["keyword" if engine.status().keyword_only else "vector"]
    known = engine.search(SearchRequest(ANSWERABLE[0]))
    for query in UNANSWERABLE:
        answer = engine.search(SearchRequest(query))
        assert answer.p_answer < known.p_answer
        assert answer.p_answer < bars["none"] and answer.confidence == "none", (query, answer.p_answer)
        assert answer.message  # "no confident match" is said
        assert inject(engine, Payload(query, "calibration-test", None, "claude-code"), 800) is None


def _rows(d: int, n: int = 200) -> np.ndarray:
    return np.random.default_rng(7).uniform(0.0, 1.0, size=(n, d))


@pytest.mark.parametrize("mode", ["vector", "keyword"])
@pytest.mark.parametrize("kind, names", [("first", cal.ANSWER_FEATURES), ("some", cal.ANSWER_FEATURES),
                                         ("hit", cal.HIT_FEATURES)])
def test_the_probability_is_monotone_in_the_evidence(mode, kind, names):
    model = cal.calibrator()["models"][mode][kind]
    assert model["features"] == list(names)
    x = _rows(len(names))
    base = cal.probability(model, x)
    assert ((base >= 0) & (base <= 1)).all()
    for i, name in enumerate(names):
        more = x.copy()
        more[:, i] += 0.5
        p = cal.probability(model, more)
        if name in cal.INCREASING:
            assert (p >= base - 1e-12).all(), name
        if name in cal.DECREASING:
            assert (p <= base + 1e-12).all(), name


def test_the_label_follows_the_bars():
    for mode, has_vectors in (("vector", True), ("keyword", False)):
        bars = cal.calibrator()["bars"][mode]
        assert 0.0 < bars["none"] <= 0.5 < bars["high"] <= 1.0
        assert cal.label(bars["high"], bars["high"], has_vectors) == "high"
        assert cal.label(bars["high"] - 0.01, bars["none"], has_vectors) == "low"
        assert cal.label(0.0, bars["none"] - 0.01, has_vectors) == "none"


def test_the_probability_is_the_one_fitted_on_the_ranker_used(engine, monkeypatch):
    """Each ranker's order has its own calibration (``calibration.data_path``): a search ranked
    by the learned ranker reads its probability and label off data/calibration-learned.json,
    one ranked by RRF off data/calibration.json; the same question gets different estimates."""
    assert cal.calibrator("learned")["models"] != cal.calibrator("rrf")["models"]
    seen: dict[str, list[float]] = {}
    for ranker in ("rrf", "learned"):
        monkeypatch.setenv("MARKDOWN_MEMORY_RANKER", ranker)
        assert cal.calibrator() is cal.calibrator(ranker)
        for query in ANSWERABLE:
            answer = engine.search(SearchRequest(query, top_k=10))
            seen.setdefault(ranker, []).append(answer.p_answer)
            if answer.results:
                vectors = not answer.keyword_only and any("vector" in h.matched_by for h in answer.results)
                assert answer.confidence == cal.label(answer.results[0].p_answer, answer.p_answer, vectors, ranker)
    assert seen["rrf"] != seen["learned"]
