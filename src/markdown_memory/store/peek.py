"""A look at a database without opening it as an index: read-only, no lock, nothing created.

Used before the engine opens the database (the embedder choice, ``embed/choice.py``), when the
file may not exist yet, belong to another root, be damaged or be written by another process:
every such case answers None, and the real open reports it later as it always does.
"""

from __future__ import annotations

import logging
from pathlib import Path

from .driver import pick_driver

log = logging.getLogger("markdown_memory.store")


def stored_weights_id(path: Path) -> str | None:
    """The ``weights_id`` of the vectors the database ``path`` holds (``meta``), or None: no
    vectors, no such file, or the file cannot be read right now (one read-only query, 0.2 s busy
    timeout at most)."""
    return _meta_value(path, "weights_id")


def stored_named_embedder(path: Path) -> str | None:
    """The preset the last index run of the database ``path`` was given by name (``meta``
    ``named_embedder``, written by ``record_named_embedder``; ``none`` too), or None: never
    named, no such file, or not readable right now (as :func:`stored_weights_id`)."""
    return _meta_value(path, NAMED_EMBEDDER_KEY)


#: ``meta`` key of the preset an index run was named (``--embedder``, the environment)
NAMED_EMBEDDER_KEY = "named_embedder"


def _meta_value(path: Path, key: str) -> str | None:
    """The ``meta`` value ``key`` of the database ``path`` read-only, or None (see module doc)."""
    if not path.is_file():
        return None
    # the process's one SQLite library: another one's close would drop the locks of the
    # connections this process holds on the file (store/headfile.py)
    module = pick_driver().module
    try:
        conn = module.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=0.2)
    except (module.Error, OSError, ValueError):
        return None
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    except module.Error as exc:  # not an index yet, damaged, locked: the real open says which
        log.debug("the meta %s of %s cannot be read: %s", key, path, exc)
        return None
    finally:
        conn.close()
    return str(row[0]) if row and row[0] else None
