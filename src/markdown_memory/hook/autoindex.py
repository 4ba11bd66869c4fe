"""The hook's first look at a docs root with no index: start one detached background index run.

A prompt must not wait for a whole docs root to be indexed, and a new project should not wait
for the agent's first tool call either: the hook starts ``python -m markdown_memory.cli index
ROOT`` (this interpreter, the same package) in its own session, its output discarded, and
returns. The run is the ordinary CLI one: the embedder it uses is chosen as for any command
(``embed/choice.py``: the best preset that loads here), the index's writer lock keeps it to
one run per database, and a later prompt finds the database file and searches whatever is
indexed so far. Auto-index off (``MARKDOWN_MEMORY_AUTO_INDEX=0``) starts nothing.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Settings

log = logging.getLogger("markdown_memory.hook")


def start_index(settings: Settings, db_named: bool) -> bool:
    """Start the detached index run of ``settings.docs_root`` (into ``settings.db_path`` when
    ``db_named``: ``--db`` or MARKDOWN_MEMORY_DB; else the per-root default, which the child
    finds the same way). True when it was started; False when auto-index is off or the process
    could not be started (logged)."""
    if not settings.auto_index:
        return False
    argv = [sys.executable, "-m", "markdown_memory.cli"]
    if db_named:
        argv += ["--db", str(settings.db_path)]
    argv += ["index", str(settings.docs_root)]
    try:
        subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         cwd=str(settings.docs_root), start_new_session=True, close_fds=True)
    except OSError as exc:
        log.debug("could not start the background index run of %s: %s", settings.docs_root, exc)
        return False
    log.debug("started a background index run of %s", settings.docs_root)
    return True
