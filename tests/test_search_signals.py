"""The signal table (``search/signals.py``): each signal can be switched off by name, a new one
joins the fusion with one table line and one weight, and the fused score is RRF over the lists."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conftest import indexed_engine
from markdown_memory.search import analyse
from markdown_memory.search.rank import rank
from markdown_memory.search.signals import SIGNALS, Pool, Signal
from markdown_memory.search.tuning import TUNING
from markdown_memory.store import Store


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("signals") / "docs"
    root.mkdir()
    (root / "harbor.md").write_text("---\naliases: [Blue Lagoon]\n---\n# Harbor\n\nMooring fees and opening hours.\n")
    for i in range(4):
        (root / f"trip{i}.md").write_text(f"# Trip {i}\n\n## Blue lagoon day {i}\n\nWe swam in the blue lagoon, "
                                          f"a blue lagoon like no other, on day {i}.\n")
    (root / "zebra.md").write_text("# Zebra\n\nA note about the lagoon colour, blue at noon.\n")
    eng = indexed_engine(root, "none")
    s = Store(root.parent / "index.db", create=False)
    yield s
    s.close()
    eng.close()


def files(ranking) -> list[str]:
    return [c.row["file_path"] for c in ranking.candidates]


def test_the_note_the_query_names_comes_first_only_with_the_name_signals(store):
    query = analyse("Blue Lagoon")
    assert files(rank(store, query, None, top_k=5))[0] == "harbor.md"  # the default ranker
    # the ablations below switch signals off in the fusion, so they read the fused (RRF) order:
    # either identity signal alone finds the note by its alias (``name``: the whole query is it;
    # ``page``: the query holds every word of it)
    assert files(rank(store, query, None, top_k=5, ranker="rrf"))[0] == "harbor.md"
    assert files(rank(store, query, None, top_k=5, tuning=TUNING.without("name"), ranker="rrf"))[0] == "harbor.md"
    assert files(rank(store, query, None, top_k=5, tuning=TUNING.without("page"), ranker="rrf"))[0] == "harbor.md"
    # its alias is one keyword match among five pages about the lagoon: without both, a trip
    # page, which says "blue lagoon" twice, outranks it
    assert files(rank(store, query, None, top_k=5, tuning=TUNING.without("name", "page"), ranker="rrf"))[0] != "harbor.md"


def test_a_new_signal_is_one_table_line_and_one_weight(store):
    """The fusion's mechanism (``ranker="rrf"``): a new signal's weight acts in RRF; the learned
    ranker knows only the signals it was trained on."""
    query = analyse("swim in the blue lagoon")
    assert files(rank(store, query, None, top_k=5, ranker="rrf"))[0] != "zebra.md"

    def zebra(pool: Pool) -> list:
        return [(c, 0) for c in pool.live() if c.row["file_path"] == "zebra.md"]

    tuning = replace(TUNING, weights={**TUNING.weights, "zebra": 5.0})
    ranked = rank(store, query, None, top_k=5, tuning=tuning, signals=(*SIGNALS, Signal("zebra", zebra)), ranker="rrf")
    assert files(ranked)[0] == "zebra.md"
    # switched off by name like any other signal
    assert files(rank(store, query, None, top_k=5, tuning=tuning.without("zebra"),
                      signals=(*SIGNALS, Signal("zebra", zebra)), ranker="rrf"))[0] != "zebra.md"


def test_a_signal_scored_alone_gives_its_rrf_share(store):
    """With only the keyword signal on, a hit's score is ``weight / (rrf_k + place)``: the
    first keyword hit (it has a body) scores 1/60, and the order is BM25's (the fusion itself:
    ``ranker="rrf"``)."""
    only_keyword = TUNING.without(*(s.name for s in SIGNALS if s.name != "keyword"))
    ranked = rank(store, analyse("blue lagoon"), None, top_k=5, tuning=only_keyword, ranker="rrf")
    top = ranked.candidates[0]
    assert top.keyword_rank == 0
    assert top.score == pytest.approx(TUNING.weight("keyword") / TUNING.rrf_k)
    assert [c.keyword_rank for c in ranked.candidates] == sorted(c.keyword_rank for c in ranked.candidates)
    doubled = replace(only_keyword, weights={**TUNING.weights, "keyword": 2.0})
    assert rank(store, analyse("blue lagoon"), None, top_k=5, tuning=doubled,
                ranker="rrf").candidates[0].score == pytest.approx(2 / 60)


def test_every_signal_has_a_weight():
    for signal in SIGNALS:
        assert TUNING.weight(signal.name) > 0, signal.name




def test_switching_off_an_unknown_signal_is_an_error_not_a_silent_no_op(store):
    with pytest.raises(ValueError, match="no ranking signal named keywords"):
        rank(store, analyse("blue lagoon"), None, top_k=5, tuning=TUNING.without("keywords"))


def test_a_tuning_stays_frozen_when_given_a_dict_of_weights():
    weights = {**TUNING.weights, "keyword": 3.0}
    tuning = replace(TUNING, weights=weights)
    weights["keyword"] = 9.0
    assert tuning.weight("keyword") == 3.0
    with pytest.raises(TypeError):
        tuning.weights["keyword"] = 1.0  # type: ignore[index]
