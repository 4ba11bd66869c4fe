"""Reading and writing the agents' config files: one planned :class:`Change` per file, every
file read and checked before any is written, each write atomic (a temporary file in the same
folder, then a rename) and keeping the file's permission bits."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import messages_setup
from ..errors import ConfigError


@dataclass(frozen=True)
class Change:
    """One file to change: ``what`` it does (a sentence fragment for the plan), the text
    ``before`` (None: no file) and ``after`` (None: delete the file)."""

    path: Path
    what: str
    before: str | None
    after: str | None

    @property
    def needed(self) -> bool:
        return self.before != self.after


def read_text(path: Path) -> str | None:
    """The file's text, None when it does not exist. Raises ConfigError when it cannot be read
    or is not UTF-8."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(messages_setup.config_unreadable(path, str(exc))) from exc


def load_json(path: Path, text: str | None) -> dict[str, Any]:
    """The JSON object of ``text`` ({} for no file or an empty one). Raises ConfigError for
    text that is not a JSON object."""
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(messages_setup.config_unreadable(path, f"not valid JSON: {exc}")) from exc
    if not isinstance(data, dict):
        raise ConfigError(messages_setup.config_unreadable(path, "not a JSON object"))
    return data


def dump_json(data: dict[str, Any]) -> str:
    """JSON as the agents write it: two-space indent, UTF-8 kept, a final newline."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def apply(changes: list[Change]) -> None:
    """Write (or delete) every needed change. Raises ConfigError naming the file when a write
    fails (the changes before it stay made; each file is whole, old or new)."""
    for change in changes:
        if not change.needed:
            continue
        try:
            if change.after is None:
                change.path.unlink(missing_ok=True)
            else:
                _write_atomic(change.path, change.after)
        except OSError as exc:
            raise ConfigError(messages_setup.config_unwritable(change.path, str(exc))) from exc


def _write_atomic(path: Path, text: str) -> None:
    """Replace ``path``'s content in one step, keeping its mode. A symlinked config (a dotfiles
    checkout) stays a link: its target is the file written."""
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        else:  # a new file: the umask's usual permissions (mkstemp makes it owner-only)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
