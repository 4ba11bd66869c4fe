"""Heading and path resolution: what an agent types -> one section, or a useful error."""

from __future__ import annotations

import pytest

from markdown_memory.errors import SectionNotFoundError
from markdown_memory.resolve import resolve_heading

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
