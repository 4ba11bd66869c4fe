"""Heading and path resolution: what an agent types -> one section, or a useful error."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from markdown_memory.errors import SectionNotFoundError
from markdown_memory.reading.resolve import resolve_heading

AVAILABLE = [
    "Guide",
    "Guide > Install",
    "Guide > Install > Linux",
    "Guide > Database",
    "Guide > Deployment > Restart",
    "Guide > Deployment > Rollback",
    "Ops > Restart",
]


@pytest.mark.parametrize(
    "asked, expected",
    [
        ("Guide > Install > Linux", "Guide > Install > Linux"),
        ("Guide>Install>  Linux", "Guide > Install > Linux"),
        ("guide > install > linux", "Guide > Install > Linux"),
        ("Install > Linux", "Guide > Install > Linux"),
        ("db", "Guide > Database"),
        ("deploy > rollback", "Guide > Deployment > Rollback"),
        ("Deployment > Restrat", "Guide > Deployment > Restart"),
        ("Instal", "Guide > Install"),
    ],
)
def test_resolution_ladder(asked, expected):
    assert resolve_heading(asked, AVAILABLE) == expected


def test_ambiguous_fragment_lists_exact_candidates():
    with pytest.raises(SectionNotFoundError) as err:
        resolve_heading("Restart", AVAILABLE)
    assert err.value.ambiguous
    assert set(err.value.candidates) == {"Guide > Deployment > Restart", "Ops > Restart"}


def test_miss_lists_nearest():
    with pytest.raises(SectionNotFoundError) as err:
        resolve_heading("Guide > Uninstall", AVAILABLE)
    assert not err.value.ambiguous
    assert "Guide > Install" in err.value.candidates


def test_a_section_and_its_own_parts_resolve_to_the_whole_section():
    available = ["Guide", "Guide > FAQ", "Guide > FAQ (Part 1)", "Guide > FAQ (Part 2)"]
    assert resolve_heading("faq", available) == "Guide > FAQ"
    assert resolve_heading("FQA", available) == "Guide > FAQ"
    assert resolve_heading("Guide > FAQ (Part 2)", available) == "Guide > FAQ (Part 2)"


def test_fuzzy_steps_never_change_a_number():
    """Regression (tester): with duplicate headings ``Same``, ``Same [2]``, a request for
    ``Same [3]`` or ``Same [4]`` silently returned ``Same [2]`` (one edit away). A number the
    agent wrote must be in the section it gets; otherwise the miss lists the real ones."""
    available = ["Doc", "Doc > Same", "Doc > Same [2]", "Doc > same [3]", "Doc > Step 4", "Doc > Recovery (v1.6.0-v1.6.7)"]
    for asked in ("Same [4]", "Doc > Same [5]", "Step 5", "Stpe 3"):
        with pytest.raises(SectionNotFoundError) as err:
            resolve_heading(asked, available)
        assert not err.value.ambiguous and err.value.candidates, asked
    assert resolve_heading("Same [2]", available) == "Doc > Same [2]"
    assert resolve_heading("same [3]", available) == "Doc > same [3]"
    assert resolve_heading("Stpe 4", available) == "Doc > Step 4"  # a misspelling, same number
    assert resolve_heading("recovery", available) == "Doc > Recovery (v1.6.0-v1.6.7)"  # numbers left out
    assert resolve_heading("Recovery v1.6", available) == "Doc > Recovery (v1.6.0-v1.6.7)"
    with pytest.raises(SectionNotFoundError):
        resolve_heading("FAQ (Part 3)", ["Guide", "Guide > FAQ", "Guide > FAQ (Part 1)", "Guide > FAQ (Part 2)"])


def test_first_duplicate_resolves_when_asked_with_suffix_one():
    """Regression (tester): duplicate headings are ``Same``, ``Same [2]``, ...; asking for
    ``Same [1]`` (the natural name of the first) answered "no section" without naming ``Same``."""
    available = ["Doc", "Doc > Same", "Doc > Same > Child", "Doc > Same [2]", "Doc > Same [2] > Child",
                 "Doc > Lone"]
    assert resolve_heading("Same [1]", available) == "Doc > Same"
    assert resolve_heading("Doc > Same [1]", available) == "Doc > Same"
    assert resolve_heading("same [1] > child", available) == "Doc > Same > Child"
    assert resolve_heading("Same [2]", available) == "Doc > Same [2]"
    # no duplicate, so no [1] to drop: a heading really called "Lone [1]" is not "Lone"
    with pytest.raises(SectionNotFoundError):
        resolve_heading("Lone [1]", available)
    # a heading whose own text ends in [1] is taken as written
    assert resolve_heading("Array [1]", ["Doc", "Doc > Array [1]", "Doc > Array [2]"]) == "Doc > Array [1]"
    # a miss still names what was asked
    with pytest.raises(SectionNotFoundError, match=r"'Same \[1\] > Nope'"):
        resolve_heading("Same [1] > Nope", available)


def test_a_heading_typed_with_its_attribute_block_resolves():
    """Regression (tester): `read edge.md "Attr {#custom-id}"` (copied from the file) was not
    found, and the suggestion was an unrelated heading."""
    available = ["Doc", "Doc > Attr", "Doc > Getting started", "Doc > {#only-id}"]
    assert resolve_heading("Attr {#custom-id}", available) == "Doc > Attr"
    assert resolve_heading("Doc > Getting started {#getting-started}", available) == "Doc > Getting started"
    assert resolve_heading("{#only-id}", available) == "Doc > {#only-id}"


def _miss(asked: str, available: list[str]) -> SectionNotFoundError:
    with pytest.raises(SectionNotFoundError) as err:
        resolve_heading(asked, available, "guide.md")
    assert not err.value.ambiguous
    return err.value


DOC = ["Validation", "Validation > Field validators", "Validation > Model validators",
       "Validation > Strict mode", "Validation > Network timeouts", "Serialization"]


@pytest.mark.parametrize("asked, first", [
    ("field validator settings", "Validation > Field validators"),  # a word's inflection
    ("Timeout handling", "Validation > Network timeouts"),  # the last heading, not the whole breadcrumb
    ("strict validation mode", "Validation > Strict mode"),     # words in another order
])
def test_a_miss_suggests_the_heading_that_shares_its_words_first(asked, first):
    """Issue 27: a missing heading's suggestions are the headings an agent meant, best first,
    and the one-line error names them."""
    err = _miss(asked, DOC)
    assert err.candidates[0] == first
    assert f"nearest: {first}" in str(err)


def test_a_miss_with_nothing_alike_lists_the_documents_top_headings():
    """Regression (issue 27): ``read install.md Solaris`` offered no suggestion at all; the
    agent now gets the document's top headings to retry with."""
    available = ["Installation Guide", "Installation Guide > Linux", "Installation Guide > Linux > Debian",
                 "Installation Guide > Windows"]
    err = _miss("Solaris", available)
    assert err.candidates == ["Installation Guide", "Installation Guide > Linux", "Installation Guide > Windows"]
    assert "its headings include: Installation Guide, Installation Guide > Linux" in str(err)


@settings(max_examples=150)
@given(st.lists(st.text(alphabet="abcdefghij klm", min_size=1, max_size=12).map(str.strip).filter(bool),
                min_size=1, max_size=8, unique=True),
       st.text(alphabet="abcdefghijxyz >", min_size=1, max_size=20).filter(lambda s: s.strip(" >")))
def test_a_missed_heading_always_gets_existing_breadcrumbs_to_retry_with(titles, asked):
    """Property: in a document with sections, a request that matches none is answered with
    at most 5 candidates, each an existing breadcrumb, no two alike."""
    available = [titles[0]] + [f"{titles[0]} > {t}" for t in titles[1:]]
    try:
        resolve_heading(asked, available)
    except SectionNotFoundError as exc:
        if exc.ambiguous:
            return
        assert exc.candidates and len(exc.candidates) <= 5
        assert set(exc.candidates) <= set(available)
        assert len({c.casefold() for c in exc.candidates}) == len(exc.candidates)
