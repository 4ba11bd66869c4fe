"""Files only their owner may read: the service's TCP token and port, the HTTP bearer token and
its registry. Standard library only (the light client's modules may import it)."""

from __future__ import annotations

import os
from pathlib import Path


def write_private(path: Path, text: str, *, exclusive: bool = False) -> None:
    """Write ``text`` (UTF-8, as given: no newline added) to ``path``, created with mode 0600
    whatever the umask. ``exclusive``: create it or raise FileExistsError when it exists (two
    processes making a secret at once: the loser reads the winner's); else replace it
    atomically through a temporary file beside it (a reader sees the old or the new text, never
    a part). Raises OSError as ``os.open`` / ``os.replace`` do."""
    target = path if exclusive else path.with_name(f".{path.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    fd = os.open(target, flags, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        if not exclusive:
            os.replace(target, path)
    except BaseException:
        if not exclusive:  # no half-written temporary file left behind
            target.unlink(missing_ok=True)
        raise
