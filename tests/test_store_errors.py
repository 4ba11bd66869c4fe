"""What a SQLite error means is judged in one place, ``store/errors.py``: a table of SQLite's
messages and the kind each one is, and no other module reading an error's message text."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from markdown_memory.store.errors import (
    PagesDamaged,
    is_corruption,
    is_duplicate_key,
    is_io_error,
    is_readonly,
    is_transient,
)

SRC = Path(__file__).resolve().parents[1] / "src" / "markdown_memory"

#: (the error, the one kind it is: transient, corruption, readonly, duplicate, io, or None)
TABLE = [
    (sqlite3.OperationalError("database is locked"), "transient"),
    (sqlite3.OperationalError("database table is locked: sections"), "transient"),
    (sqlite3.DatabaseError("file is not a database"), "corruption"),
    (sqlite3.DatabaseError("database disk image is malformed"), "corruption"),
    (sqlite3.OperationalError("vtable constructor failed: sections_fts"), "corruption"),
    (PagesDamaged("*** in database main *** Page 7: btreeInitPage() returns error code 11"), "corruption"),
    (sqlite3.OperationalError("attempt to write a readonly database"), "readonly"),
    (sqlite3.OperationalError("unable to open database file"), "readonly"),
    (sqlite3.IntegrityError("UNIQUE constraint failed: passages.id"), "duplicate"),
    (sqlite3.OperationalError("UNIQUE constraint failed on vec_passages primary key"), "duplicate"),
    (sqlite3.OperationalError("disk I/O error"), "io"),
    (sqlite3.OperationalError("fts5: syntax error near \"AND\""), None),
]

KINDS = {"transient": is_transient, "corruption": is_corruption, "readonly": is_readonly,
         "duplicate": is_duplicate_key, "io": is_io_error}


@pytest.mark.parametrize(("exc", "kind"), TABLE, ids=[str(e)[:40] for e, _ in TABLE])
def test_each_sqlite_error_is_the_one_kind_its_message_says(exc, kind):
    said = {name for name, judge in KINDS.items() if judge(exc)}
    assert said == ({kind} if kind else set())


def test_a_page_check_s_finding_is_damage_by_its_type_not_its_wording():
    class Reworded(PagesDamaged):
        def __str__(self) -> str:
            return "page 7 is unreadable"

    assert is_corruption(Reworded("x"))


_READS_MESSAGE = re.compile(r"str\((?:exc|e|err|error|item)\)\.lower\(\)")


def test_no_module_but_store_errors_reads_an_error_s_message():
    """A new check of SQLite's wording goes into store/errors.py, where the others are."""
    readers = []
    for path in sorted(SRC.rglob("*.py")):
        if path == SRC / "store" / "errors.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _READS_MESSAGE.search(line):
                readers.append(f"{path.relative_to(SRC)}:{number}: {line.strip()}")
    assert readers == []
