"""Miss taxonomy: why an answerable question's first hit is not its answering section.

A *miss* here is an answerable question (``expect`` not empty) whose answering section is not the
first hit of the top-10 list (``WIDE_K``). Each miss goes in exactly one bucket, decided in this
order (the first rule that holds wins, so the buckets are exclusive and, the last one having no
condition, exhaustive):

1. ``wrong_section``: the first hit is in an expected file, but it is not an answering section;
   the answering section may still be lower in the list (the issue counts "right file first" this
   way: of its 47 such misses, 31 had the answer at rank 2-5), or absent.
2. ``lower``: the first hit is in another file and an answering section is in the top k, lower
   down (a different file first, the answer at rank 3, is ``lower``).
3. ``file_no_section``: an expected file is in the top k, none of its hits an answering section.
4. ``file_absent``: no hit of the top k is in an expected file (an expectation that can never be
   met, a missing file say, lands here too).

An *answering section* is a hit whose file is an expected path and whose line range holds that
expectation's line (``first_correct``, the one place that decides it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from .models import Hit

BUCKETS = ("file_absent", "file_no_section", "wrong_section", "lower")


class _Scored(Protocol):
    """What the taxonomy reads of an ``evaluation.QueryResult``."""

    id: str
    bucket: str | None

    @property
    def negative(self) -> bool: ...


def _where(hit: Any) -> tuple[str, int, int]:
    """A hit's ``(file_path, start_line, end_line)``, whether it is in the wire shape (a dict, as
    an MCP answer's hits arrive) or a ``models.Hit``."""
    if isinstance(hit, Mapping):
        return str(hit["file_path"]), int(hit["start_line"]), int(hit["end_line"])
    return str(hit.file_path), int(hit.start_line), int(hit.end_line)


def first_correct(results: Sequence[Hit | Mapping[str, Any]], expect: Sequence[Mapping[str, Any]]) -> int | None:
    """0-based position of the first hit (a ``models.Hit``, or the wire shape of an MCP answer's
    hit) whose file is an expected path and whose line range holds its line; None: none is."""
    for i, hit in enumerate(results):
        path, start, end = _where(hit)
        if any(path == e["path"] and start <= e["line"] <= end for e in expect):
            return i
    return None


def miss_bucket(hits: Sequence[Any], expect: Sequence[Mapping[str, Any]]) -> str | None:
    """The bucket (module docstring) of a question with expectations ``expect`` (``path``,
    ``line``) answered by the ranked ``hits`` (best first, the top k; as
    ``first_correct`` reads them, which decides what answers); None when it is no
    miss: a negative (``expect`` empty) or a first hit that answers."""
    answer = first_correct(list(hits), [dict(e) for e in expect])
    if not expect or answer == 0:
        return None
    files = {e["path"] for e in expect}
    if hits and _where(hits[0])[0] in files:
        return "wrong_section"
    if answer is not None:
        return "lower"
    if any(_where(h)[0] in files for h in hits):
        return "file_no_section"
    return "file_absent"


def bucket_counts(results: Iterable[_Scored]) -> dict[str, int]:
    """``{bucket: number of results in it}`` for every bucket (0 included), in ``BUCKETS`` order."""
    counts = dict.fromkeys(BUCKETS, 0)
    for r in results:
        if r.bucket is not None:
            counts[r.bucket] += 1
    return counts


def miss_ids(results: Iterable[_Scored]) -> dict[str, list[str]]:
    """``{bucket: ids of the results in it, in their order}`` for every bucket (empty lists
    included): the ``misses`` object of ``--json``."""
    out: dict[str, list[str]] = {b: [] for b in BUCKETS}
    for r in results:
        if r.bucket is not None:
            out[r.bucket].append(r.id)
    return out


def format_buckets(summary: Mapping[str, Any]) -> str:
    """The bucket counts of every group of an ``evaluation.summarise`` summary that has them, one
    line per group: ``misses`` (their total) then each bucket."""
    head = f"{'group':<12} {'n':>3} {'misses':>6}" + "".join(f" {b:>15}" for b in BUCKETS)
    lines = [head]
    for name, m in summary.items():
        buckets = m.get("buckets") if isinstance(m, Mapping) else None
        if buckets is None:
            continue
        lines.append(f"{name:<12} {m['n']:>3} {sum(buckets.values()):>6}"
                     + "".join(f" {buckets[b]:>15}" for b in BUCKETS))
    return "\n".join(lines)
