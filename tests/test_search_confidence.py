"""``search.confidence``: how sure an answer is, from the ranked candidates and the bars in
``Tuning`` (the ranking that feeds it is tested in test_search_ranking.py)."""

from __future__ import annotations

from dataclasses import replace

from markdown_memory.search.candidates import Candidate
from markdown_memory.search.confidence import breadcrumb_names_query, confidence
from markdown_memory.search.query import stem_prefix
from markdown_memory.search.tuning import TUNING, ModelTraits, model_traits

MINILM = model_traits("minilm")
MULTILINGUAL = model_traits("embeddinggemma")


def test_vectors_alone_must_clear_a_higher_bar_when_no_query_word_occurs_anywhere():
    # regression (case 019 after the int8 switch): a made-up name no section contains scored
    # 0.452 against an unrelated edited note and was reported as a "low" answer, not "none"
    near_miss = [Candidate(1, vector_rank=0, cosine=0.452)]
    assert confidence(near_miss, has_vectors=True, has_identifiers=False, model=MINILM) == "none"
    # vectors alone that clear the higher bar: a paraphrase sharing no word with its answer
    strong = [Candidate(1, vector_rank=0, cosine=TUNING.no_keyword_vector_bar + 0.05)]
    assert confidence(strong, has_vectors=True, has_identifiers=False, model=MINILM) == "low"
    # keyword evidence alone, with vectors just over the usual bar elsewhere in the list, is what
    # an off-topic question on the docs' own subject also gets (issue 14: 6 of 10 unanswerable
    # questions were "high"): not an answer
    weak = [Candidate(1, keyword_rank=0, coverage=0.8, covered=3, cosine=0.2, vector_rank=9),
            Candidate(2, vector_rank=0, cosine=TUNING.vector_bar - 0.01)]
    assert confidence(weak, has_vectors=True, has_identifiers=False, min_covered=2, model=MINILM) == "none"
    # a multilingual model answers queries in another language than the docs: no keyword by
    # nature, so its vectors alone are a "low" answer once they clear the bar
    assert MULTILINGUAL.multilingual and (MULTILINGUAL.vector_bar or TUNING.vector_bar) > 0.452
    assert confidence(near_miss, has_vectors=True, has_identifiers=False, model=MULTILINGUAL) == "none"
    assert confidence(strong, has_vectors=True, has_identifiers=False, model=MULTILINGUAL) == "low"
    just_over = [Candidate(1, vector_rank=0, cosine=TUNING.vector_bar + 0.01)]
    assert confidence(just_over, has_vectors=True, has_identifiers=False, model=MULTILINGUAL) == "low"
    assert confidence(just_over, has_vectors=True, has_identifiers=False, model=MINILM) == "none"


def test_high_means_the_top_hit_itself_is_backed():
    """"high" needs the top hit to hold the evidence: a definition or verbatim rare identifier,
    or first place on both the keyword and the vector list; agreement further down is "low"."""
    both = Candidate(1, keyword_rank=0, vector_rank=0, cosine=0.7, coverage=0.8, covered=3)
    assert confidence([both], has_vectors=True, has_identifiers=False, min_covered=2, model=MINILM) == "high"
    split = [Candidate(1, keyword_rank=0, vector_rank=3, cosine=0.7, coverage=0.8, covered=3),
             Candidate(2, keyword_rank=4, vector_rank=0, cosine=0.72, coverage=0.5, covered=2)]
    assert confidence(split, has_vectors=True, has_identifiers=False, min_covered=2, model=MINILM) == "low"
    defined = Candidate(1, keyword_rank=5, vector_rank=9, cosine=0.3, coverage=0.5, covered=2, defines=True)
    assert confidence([defined], has_vectors=True, has_identifiers=True, min_covered=2, model=MINILM) == "high"
    keyword_only = Candidate(1, keyword_rank=0, coverage=0.8, covered=3)
    assert confidence([keyword_only], has_vectors=False, has_identifiers=False, min_covered=2) == "low"


def test_an_identifier_no_candidate_holds_leaves_only_look_alikes():
    """A query naming an identifier that no candidate defines or holds: keyword look-alikes are
    no evidence, so a keyword-only answer is "none" (the same candidate without the identifier
    in the query is "low")."""
    look_alike = [Candidate(1, keyword_rank=0, coverage=0.9, covered=3)]
    assert confidence(look_alike, has_vectors=False, has_identifiers=False, min_covered=2) == "low"
    assert confidence(look_alike, has_vectors=False, has_identifiers=True, min_covered=2) == "none"
    holds_it = [Candidate(1, keyword_rank=0, coverage=0.9, covered=3, exact=True)]
    assert confidence(holds_it, has_vectors=False, has_identifiers=True, min_covered=2) == "high"


def test_nothing_ranked_is_none_and_a_breadcrumb_naming_the_query_is_low():
    assert confidence([], has_vectors=True, has_identifiers=False) == "none"
    # weak everywhere, but the top hit's breadcrumb names every query word: a short query naming a section
    faint = [Candidate(1, keyword_rank=0, coverage=0.1, covered=1, vector_rank=0, cosine=0.2)]
    assert confidence(faint, has_vectors=True, has_identifiers=False, model=MINILM) == "none"
    assert confidence(faint, has_vectors=True, has_identifiers=False, crumb_names_it=True, model=MINILM) == "low"


def test_breadcrumb_names_query_accepts_other_forms_of_each_word():
    stems = {tok: stem_prefix(tok) for tok in ("hook", "prints")}
    assert breadcrumb_names_query("The prompt hook > What it reads and prints", stems)
    assert breadcrumb_names_query("Hook > Printing the prompt", stems)
    assert not breadcrumb_names_query("The prompt hook > What it reads", stems)
    assert not breadcrumb_names_query("The prompt hook", {})


def test_the_bars_come_from_the_tuning_and_the_model():
    """Raising a bar in ``Tuning`` (or the model's own bar) turns the same evidence down."""
    strong = [Candidate(1, vector_rank=0, cosine=0.6)]
    assert confidence(strong, has_vectors=True, has_identifiers=False, model=MINILM) == "low"
    stricter = replace(TUNING, no_keyword_vector_bar=0.65)
    assert confidence(strong, has_vectors=True, has_identifiers=False, model=MINILM, tuning=stricter) == "none"
    both = [Candidate(1, keyword_rank=0, vector_rank=0, cosine=0.6, coverage=0.8, covered=3)]
    assert confidence(both, has_vectors=True, has_identifiers=False, min_covered=2, model=MINILM) == "high"
    # a model with a higher bar of its own: the vectors no longer back the hit, and keyword
    # evidence alone (with vectors at hand) is what off-topic questions get
    picky_model = ModelTraits(multilingual=False, vector_bar=0.62)
    assert confidence(both, has_vectors=True, has_identifiers=False, min_covered=2, model=picky_model) == "none"
