"""Sentences only a person at a terminal reads: the progress line, usage hints about the
query. Re-exported by ``messages``."""

from __future__ import annotations

import shlex

from ..reader import program


def dashed_query_hint() -> str:
    """What to do when a query that starts with ``-`` was taken for an option."""
    return f"a query that starts with - goes after --, options before it: `{program()} search --docs-dir DIR -- --no-cache`"


def progress_line(phase: str, done: int, total: int, rate: float, seconds_left: float | None) -> str:
    """One line of an index run's progress where no bar can be drawn (stderr is a pipe or a
    file): ``parsed 120 of 703 files (24.0 files/s, about 24 s left)``; ``phase`` is ``parse``
    or ``embed``; ``rate`` in units per second; ``seconds_left`` None when not yet known."""
    what = "parsed" if phase == "parse" else "embedded"
    unit = "files" if phase == "parse" else "passages"
    left = "" if seconds_left is None else f", about {_duration(seconds_left)} left"
    return f"{what} {done:,} of {total:,} {unit} ({rate:,.1f} {unit}/s{left})"


def _duration(seconds: float) -> str:
    """``42 s``, ``3 min 5 s`` or ``1 h 2 min``."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def query_after_dashes(words: list[str]) -> str:
    """``search -- A B``: more than one word after ``--`` (the query is one argument)."""
    quoted = shlex.quote(" ".join(words))
    return (f"everything after `--` is the query, which is one argument: quote it (`search -- {quoted}`); "
            "options go before `--` or right after the query")
