"""The second stage (``search/sections.py``): among the best page's sections, the one holding the
question's rare words (rare among that page's sections, not the page's own name) comes first;
other pages keep their places, a clear first-stage lead stays, and each piece of evidence can
be switched off by name."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from conftest import indexed_engine
from markdown_memory.search import analyse
from markdown_memory.search.candidates import Candidate, coverage_weights
from markdown_memory.search.query import stem_prefix
from markdown_memory.search.rank import rank
from markdown_memory.search.sections import EVIDENCE, TokenStates, choose_sections
from markdown_memory.search.tuning import TUNING
from markdown_memory.store import Store

PAGE = """# Request ID middleware

The requestId middleware gives every request an id; read requestId in a handler.

## Usage

Register the requestId middleware before your routes, then read the requestId.

### Set the requestId yourself

Pass a requestId generator when the default random requestId is not what you want.

## Options

### limitLength

The longest requestId accepted from a client; a longer one is replaced.

### headerName

The header the requestId is read from and written to. Default: X-Request-Id.
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("sections") / "docs"
    root.mkdir()
    (root / "request-id.md").write_text(PAGE)
    (root / "logger.md").write_text("# Logger\n\nLogs each request id with its method and path.\n")
    eng = indexed_engine(root, "none")
    s = Store(root.parent / "index.db", create=False)
    yield s
    s.close()
    eng.close()


def _near_tie(store: Store, headings: list[str], gap: float) -> list[Candidate]:
    """Candidates for the sections named by ``headings`` (last breadcrumb part), in that order,
    scores ``gap`` apart, as a first stage would leave them."""
    doc_id = store.document_id("request-id.md")
    assert doc_id is not None
    records = {r.title: r for r in store.sections_of(doc_id)}
    ids = [store.section_id_at(doc_id, records[h].ordinal) for h in headings]
    rows = store.section_rows([i for i in ids if i is not None])
    out = []
    for n, sid in enumerate(ids):
        assert sid is not None
        out.append(Candidate(sid, score=0.05 - n * gap, row=rows[sid]))
    return out


def _choose(store: Store, text: str, ordered: list[Candidate], tuning=TUNING) -> list[str]:
    query = analyse(text)
    weights = coverage_weights(store, query)
    stems = {tok: stem_prefix(tok) for tok in weights}
    chosen = choose_sections(store, query.text, weights, stems, ordered, tuning)
    return [c.row["base_path"].split(" > ")[-1] for c in chosen]


def test_the_sibling_holding_the_rare_words_is_chosen_over_a_near_tie(store):
    def ordered() -> list[Candidate]:
        return _near_tie(store, ["Set the requestId yourself", "limitLength", "Usage"], gap=0.0002)

    # "requestId" names the page (every section holds it); "client" and "longest" are where the answer is
    assert _choose(store, "longest requestId a client may send", ordered())[0] == "limitLength"
    ablated = TUNING.without("sibling_terms")
    assert _choose(store, "longest requestId a client may send", ordered(), ablated)[0] == "Set the requestId yourself"


def test_a_clear_first_stage_lead_is_kept(store):
    ordered = _near_tie(store, ["Set the requestId yourself", "limitLength"], gap=0.01)
    assert _choose(store, "longest requestId a client may send", ordered)[0] == "Set the requestId yourself"


def test_words_of_the_page_name_choose_no_section(store):
    """A query made only of the page's own words has no section-level evidence: the order stays."""
    ordered = _near_tie(store, ["Usage", "headerName", "limitLength"], gap=0.0002)
    assert _choose(store, "request id middleware", ordered) == ["Usage", "headerName", "limitLength"]


def test_other_pages_keep_their_places_and_scores_stay_in_order(store):
    for text in ("longest requestId a client may send", "requestId header", "request id logged with method"):
        ranked = rank(store, analyse(text), None, top_k=5).candidates
        plain = rank(store, analyse(text), None, top_k=5, tuning=TUNING.without(*(e.name for e in EVIDENCE))).candidates
        assert [c.row["file_path"] for c in ranked] == [c.row["file_path"] for c in plain]
        assert sorted({c.section_id for c in ranked}) == sorted({c.section_id for c in plain})
        scores = [c.score for c in ranked]
        assert scores == sorted(scores, reverse=True)


class _Tokens:
    """Token states where a text's tokens are one-hot by word: MaxSim is then the share of query
    words the text holds."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}

    def document_text(self, title: str, text: str) -> str:
        return f"{title}\n{text}"

    def token_states(self, texts, max_tokens=128):
        out = []
        for t in texts:
            words = t.lower().split()[: max_tokens - 2]
            rows = np.zeros((len(words), 64), dtype=np.float32)
            for i, w in enumerate(words):
                rows[i, self.vocab.setdefault(w, len(self.vocab) % 64)] = 1.0
            out.append(rows)
        return out


def test_token_match_reorders_siblings_only_with_token_states(store):
    assert isinstance(_Tokens(), TokenStates)
    ordered = _near_tie(store, ["Usage", "headerName"], gap=0.0001)
    query = analyse("header written to")
    weights = coverage_weights(store, query)
    stems = {tok: stem_prefix(tok) for tok in weights}
    only_tokens = replace(TUNING, section_weights={**TUNING.section_weights, "token_match": 0.0005}).without(
        "sibling_terms")
    first = choose_sections(store, query.text, weights, stems, ordered, only_tokens, _Tokens())[0]
    assert first.row["base_path"].endswith("headerName")
    ordered = _near_tie(store, ["Usage", "headerName"], gap=0.0001)
    without = choose_sections(store, query.text, weights, stems, ordered, only_tokens, None)[0]
    assert without.row["base_path"].endswith("Usage")
    ordered = _near_tie(store, ["Usage", "headerName"], gap=0.0001)  # off by default: weight 0
    default = choose_sections(store, query.text, weights, stems, ordered, TUNING.without("sibling_terms"), _Tokens())[0]
    assert default.row["base_path"].endswith("Usage")


def test_minilm_token_states_are_unit_rows_per_word_piece(minilm):
    (states,) = minilm.token_states(["strict mode in pydantic"])
    assert states.shape[1] == 384 and 3 <= states.shape[0] <= 8
    assert np.allclose(np.linalg.norm(states, axis=1), 1.0, atol=1e-4)
    (cut,) = minilm.token_states(["word " * 400], max_tokens=64)
    assert cut.shape[0] == 62


def test_rare_window_prefers_the_passage_where_the_rare_words_stand_together(store):
    """``rare_window`` (off by default) ranks a sibling by its passage holding the query's rare
    words within a few words of each other."""
    only_window = replace(TUNING, section_weights={"sibling_terms": 0.0, "rare_window": 0.001, "token_match": 0.0})

    def ordered() -> list[Candidate]:
        return _near_tie(store, ["Usage", "Set the requestId yourself"], gap=0.0002)

    assert _choose(store, "default random requestId generator", ordered(), only_window)[0] == "Set the requestId yourself"
    assert _choose(store, "default random requestId generator", ordered(), only_window.without("rare_window"))[0] == "Usage"
