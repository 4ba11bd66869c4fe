"""The miss taxonomy of ``markdown-memory eval``: hand-built ranked lists for each bucket, the
precedence rules the issue's counts imply, and a property test that the four buckets partition
the misses (every miss in exactly one, checked against the definitions written out apart)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from markdown_memory.eval_taxonomy import BUCKETS, bucket_counts, format_buckets, miss_bucket
from markdown_memory.evaluation import QueryResult, first_correct, summarise

WANT = [{"path": "guide/install.md", "line": 12}]  # the answering section: install.md lines 10-20


def hit(path: str, start: int, end: int) -> dict[str, object]:
    return {"file_path": path, "start_line": start, "end_line": end}


ANSWER = hit("guide/install.md", 10, 20)
SIBLING = hit("guide/install.md", 21, 30)  # the right file, a wrong section of it
OTHER = hit("guide/faq.md", 1, 40)
ELSEWHERE = hit("guide/api.md", 5, 9)


def test_a_first_hit_that_answers_is_no_miss():
    assert miss_bucket([ANSWER, OTHER], WANT) is None
    assert miss_bucket([OTHER, ANSWER], []) is None  # a negative is scored apart


def test_no_expected_file_in_the_list_is_file_absent():
    assert miss_bucket([OTHER, ELSEWHERE], WANT) == "file_absent"
    assert miss_bucket([], WANT) == "file_absent"  # no results at all


def test_the_expected_file_present_but_none_of_its_hits_answering_is_file_no_section():
    assert miss_bucket([OTHER, ELSEWHERE, SIBLING], WANT) == "file_no_section"


def test_the_right_file_first_with_a_wrong_section_is_wrong_section():
    assert miss_bucket([SIBLING, OTHER], WANT) == "wrong_section"
    # ... even when the answering section is lower down (the 31 of 47 at rank 2-5)
    assert miss_bucket([SIBLING, OTHER, ELSEWHERE, ANSWER], WANT) == "wrong_section"


def test_another_file_first_and_the_answer_lower_is_lower():
    assert miss_bucket([OTHER, ELSEWHERE, ANSWER], WANT) == "lower"
    assert miss_bucket([OTHER, SIBLING, ANSWER], WANT) == "lower"  # the right file's sibling at 2 changes nothing


def test_any_of_several_expectations_counts():
    want = WANT + [{"path": "guide/faq.md", "line": 3}]
    assert miss_bucket([ELSEWHERE, OTHER], want) == "lower"  # faq.md lines 1-40 hold line 3
    assert miss_bucket([hit("guide/faq.md", 41, 50), ANSWER], want) == "wrong_section"


# --- property: the buckets partition the misses ------------------------------------------------

FILES = ["a.md", "b.md", "c.md"]
hits_st = st.lists(st.builds(lambda f, s, n: hit(f, s, s + n), st.sampled_from(FILES),
                             st.integers(1, 30), st.integers(0, 10)), max_size=10)
expect_st = st.lists(st.fixed_dictionaries({"path": st.sampled_from(FILES), "line": st.integers(1, 40)}),
                     min_size=1, max_size=3)


def definitions(hits, expect) -> set[str]:
    """Each bucket's definition, written out apart from the module's if/elif chain."""
    files = {e["path"] for e in expect}
    answers = [any(h["file_path"] == e["path"] and h["start_line"] <= e["line"] <= h["end_line"] for e in expect)
               for h in hits]
    first_in_file = bool(hits) and hits[0]["file_path"] in files
    file_present = any(h["file_path"] in files for h in hits)
    held = set()
    if first_in_file:
        held.add("wrong_section")
    if any(answers) and not first_in_file:
        held.add("lower")
    if file_present and not any(answers) and not first_in_file:
        held.add("file_no_section")
    if not file_present:
        held.add("file_absent")
    return held


@given(hits_st, expect_st)
def test_every_miss_is_in_exactly_one_bucket_and_only_misses_are(hits, expect):
    rank = first_correct(hits, expect)
    bucket = miss_bucket(hits, expect)
    if rank == 0:
        assert bucket is None
    else:
        assert definitions(hits, expect) == {bucket}
        assert bucket in BUCKETS


@given(st.lists(st.tuples(hits_st, expect_st | st.just([])), max_size=12))
def test_summary_bucket_counts_add_up_to_the_groups_misses(cases):
    results = []
    for i, (hits, expect) in enumerate(cases):
        r = QueryResult(str(i), "q", "howto" if i % 2 else "table", "en", expect)
        r.rank = first_correct(hits, expect)
        r.bucket = miss_bucket(hits, expect)
        results.append(r)
    summary = summarise(results)
    for name in ("overall", "howto", "table"):
        if name in summary:
            group = [r for r in results if not r.negative and (name == "overall" or r.type == name)]
            assert sum(summary[name]["buckets"].values()) == sum(r.rank != 0 for r in group)
            assert summary[name]["buckets"] == bucket_counts(group)
    if "overall" in summary:
        table = format_buckets(summary)
        assert table.splitlines()[0].split()[3:] == list(BUCKETS)
        overall = next(line for line in table.splitlines() if line.startswith("overall"))
        assert [int(x) for x in overall.split()[3:]] == [summary["overall"]["buckets"][b] for b in BUCKETS]
