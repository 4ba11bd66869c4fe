"""What a search answer says besides its hits, as typed values (``SearchAnswer.notes``): each
note holds the facts of one sentence; the sentence is made by ``messages.render_notes`` for a
reader (``reader.Reader``: the program they type, their working folder, agent or person).
The engine collects them with the annotators of ``answer_notes.ANNOTATORS``, in the order the
message gives them. A new note: a dataclass here, its sentence in ``messages.NOTE_SENTENCES``,
and the annotator (or the search step) that makes it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Said:
    """A sentence already worded where its facts live (the index status: why search is
    keyword-only, why the index is empty; a full disk), carried as is."""

    text: str


@dataclass(frozen=True)
class QueryCut:
    """The query had ``length`` characters, over ``limit``: only its start was searched."""

    length: int
    limit: int


@dataclass(frozen=True)
class StaleHits:
    """``count`` hits come from files changed on disk since they were indexed."""

    count: int


@dataclass(frozen=True)
class PartlyKeywordOnly:
    """``pending`` of the index's ``passages`` have no vector yet."""

    pending: int
    passages: int


@dataclass(frozen=True)
class BusyElsewhere:
    """Another process is indexing the root (``documents`` and ``vectors`` indexed so far)."""

    documents: int
    vectors: int


@dataclass(frozen=True)
class NoConfidentMatch:
    """Nothing matched confidently; ``absent``: query identifiers no document contains."""

    absent: tuple[str, ...] = ()


@dataclass(frozen=True)
class VectorsPending:
    """Keyword-only: the index's vectors are still being computed."""


@dataclass(frozen=True)
class NoDocumentsUnder:
    """The path prefix ``prefix`` holds no indexed document."""

    prefix: str


@dataclass(frozen=True)
class NoFilterMatch:
    """The filters leave nothing to search: ``empty`` names those that match nothing alone
    (none: only their combination); ``filters`` each set filter's value (name, value) pairs,
    the path prefix aside."""

    empty: tuple[str, ...]
    filters: tuple[tuple[str, object], ...]
    tags_mode: str = "any"


@dataclass(frozen=True)
class OtherVectors:
    """Stored vectors the configured model did not make: their ``weights_id``, the preset that
    made them (``maker``, None when no preset writes that id), and whether the configured
    preset and the maker can load here (``embed/choice.usable``; built by
    ``embed.choice.other_vectors``)."""

    weights_id: str
    maker: str | None
    configured_loads: bool
    maker_loads: bool


Note = OtherVectors | Said | QueryCut | StaleHits | PartlyKeywordOnly | BusyElsewhere | NoConfidentMatch | VectorsPending | \
    NoDocumentsUnder | NoFilterMatch
