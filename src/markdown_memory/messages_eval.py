"""The sentences of ``markdown-memory eval`` (questions file errors, the legend, unusable
expectations); split from :mod:`.messages` (which it may import, never the reverse)."""

from __future__ import annotations

from collections.abc import Sequence

from .text import short_cause

QUESTION_FORMAT = ('each line holds one question like {"query": "...", "expect": [{"path": "guide/setup.md", '
                   '"line": 12}]} (docs/evaluation.md)')


def bad_question(where: str, problem: str) -> str:
    """A line of an ``eval`` questions file that is not a question: ``where`` names file and
    line, ``problem`` what is wrong with it."""
    return f"questions file {where} {problem}; {QUESTION_FORMAT}"


def questions_unreadable(path: str, exc: BaseException) -> str:
    """An ``eval`` questions file that cannot be read as UTF-8 text."""
    return f"cannot read the questions file {path} ({short_cause(str(exc))}); pass a UTF-8 JSON Lines file"


def no_questions(path: str) -> str:
    """An ``eval`` questions file without a single question."""
    return f"the questions file {path} holds no question; {QUESTION_FORMAT}"


EVAL_LEGEND = ("top1: the first hit is right; R@5: a right hit among the first 5; MRR10: mean of 1/rank of the "
               "first right hit in the top 10; inhit: the right hit carries its text; none+: answerable but "
               "answered confidence none; high/hiprec: answers with confidence high and the share of them "
               "whose first hit is right; p50tok: median tokens of an answer as an agent receives it")


EVAL_BUCKET_LEGEND = ("misses (answerable, first hit not the answering section), one bucket each: "
                      "file_absent: no expected file in the top 10; file_no_section: an expected file in the "
                      "top 10, none of its hits answers; wrong_section: an expected file first, a wrong section "
                      "of it (takes precedence); lower: another file first, the answering section lower in the top 10")


def eval_not_indexed(why: str | None) -> str:
    """An eval expectation naming a file on disk the index does not hold, and why when known."""
    if why:
        return f"the file is not indexed: {why}"
    return "the file is not indexed (the index run's warnings say why: over the size limit, not text, excluded)"


def eval_not_markdown(suffixes: Sequence[str]) -> str:
    """An eval expectation naming a file whose extension (not one of ``suffixes``) is not indexed."""
    return f"not a Markdown extension ({', '.join(suffixes)})"


def eval_excluded() -> str:
    return "excluded by an ignore file (.gitignore, .ignore...), a hidden or pruned folder, or an exclude pattern"


def eval_unusable(items: list[tuple[str, str, str]]) -> str:
    """``eval``'s warning for expectations no hit can ever meet: ``(question id, "path:line",
    why)``, the first five named."""
    shown = "; ".join(f"{qid} {where} ({why})" for qid, where, why in items[:5])
    more = f"; and {len(items) - 5} more" if len(items) > 5 else ""
    return (f"warning: {len(items)} expectation{'s' if len(items) != 1 else ''} can never be met, so "
            f"{'they count' if len(items) != 1 else 'it counts'} as misses: {shown}{more}; fix the questions file")
