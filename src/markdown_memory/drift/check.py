"""Drift: the references of a section that the code side does not hold.

``find_drift(store, definitions)`` reads every stored section, extracts its references
(``references.section_references``) and looks each up in the code index (``store/code.py``):
one indexed query per batch of names, never a scan of the code. What "held" means per kind:

* flag ``--dry-run``: the command it was given with (if any) is held, and ``dry-run`` or
  ``dry_run`` (or the same without a ``no-`` prefix) is held.
* env ``APP_TIMEOUT``: held as written, or without its first ``_`` part (``TIMEOUT``: a
  settings loader that adds a prefix).
* path ``src/app/config.py``: checked only when its first folder exists in the code root; held
  when it is a file or folder there (or the tail of one).
* name ``Client.stream()``: a single name is held when held; a dotted one is checked only when
  its first part is held (else it names another package: ``requests.get``), and then every part
  must be.
* import ``from pkg.mod import name``: checked only when ``pkg`` is a folder or module of the
  code root; ``name`` must be held.

Never flagged: names the docs define (``definitions``), Python built-ins and standard-library
modules, placeholders.
"""

from __future__ import annotations

import builtins
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .codeside import DEPENDENCIES_KEY, find_code_root, update_code_index
from .references import Reference, definitions, is_placeholder, section_references

if TYPE_CHECKING:  # pragma: no cover
    from ..models import Hit
    from ..store import Store

_BUILTINS = frozenset(dir(builtins))
_STDLIB = frozenset(sys.stdlib_module_names)


@dataclass(frozen=True)
class Missing:
    """One reference the code does not hold: ``name`` as written, ``kind``, file ``line``."""

    name: str
    kind: str
    line: int

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "line": self.line}


@dataclass(frozen=True)
class DriftingSection:
    """A section with at least one missing reference (``start_line`` 1-based)."""

    file_path: str
    heading_path: str
    start_line: int
    missing: tuple[Missing, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"file_path": self.file_path, "heading_path": self.heading_path, "start_line": self.start_line,
                "missing": [m.to_dict() for m in self.missing]}


@dataclass(frozen=True)
class DriftReport:
    """``sections`` that drift, in file order; ``checked`` references looked up in ``scanned``
    sections; ``code_root`` the folder whose code was read; ``code_files`` its file count."""

    code_root: str
    code_files: int
    scanned: int
    checked: int
    sections: tuple[DriftingSection, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"code_root": self.code_root, "code_files": self.code_files, "sections_scanned": self.scanned,
                "references_checked": self.checked, "drifting": len(self.sections),
                "sections": [s.to_dict() for s in self.sections]}


def _flag_forms(name: str) -> list[str]:
    bare = name.lstrip("-")
    forms = [bare, bare.replace("-", "_")]
    if bare.startswith("no-"):
        forms += [bare[3:], bare[3:].replace("-", "_")]
    return forms


def _env_forms(name: str) -> list[str]:
    """``APP_MAX_SIZE``, and without the prefix as written (``MAX_SIZE``) or as a long option the
    code spells out (``--max-size``): settings loaders that add a prefix or derive variables from
    options (click's ``auto_envvar_prefix``)."""
    rest = name.split("_", 1)[1]
    return [name, rest, "--" + rest.lower().replace("_", "-")]


def _candidates(ref: Reference) -> list[str]:
    """Every token whose presence could vouch for ``ref`` (the lookup batch)."""
    if ref.kind == "flag":
        return _flag_forms(ref.name) + ([ref.command] if ref.command else [])
    if ref.kind == "env":
        return _env_forms(ref.name) + [ref.name.split("_", 1)[0].lower()] + ([ref.command] if ref.command else [])
    if ref.kind in ("name", "import"):
        return ref.name.removesuffix("()").split(".")
    return []


class Checker:
    """Looks references up in one store's code index; ``defined`` are the docs' own names."""

    def __init__(self, store: Store, defined: Iterable[str]) -> None:
        self.store = store
        self.defined = set(defined)
        self.top = store.code.top_folders()
        self.dependencies = set(json.loads(store.get_meta(DEPENDENCIES_KEY) or "[]"))
        self._paths: dict[str, bool] = {}

    def _path_held(self, path: str) -> bool:
        if path not in self._paths:
            self._paths[path] = self.store.code.held_path(path)
        return self._paths[path]

    def checkable(self, ref: Reference) -> bool:
        """False for a reference the rules never judge (defined by the docs, built-in, third-party)."""
        if is_placeholder(ref.name) or ref.name in self.defined:
            return False
        if ref.kind == "path":
            return ref.name.split("/", 1)[0] in self.top
        if ref.kind == "env":  # `WATCHFILES_FORCE_POLLING`: a dependency's variable, not the project's
            prefix = ref.name.split("_", 1)[0].lower()
            return prefix not in self.dependencies or self._is_module(prefix)
        if ref.kind == "name":
            parts = ref.name.removesuffix("()").split(".")
            if parts[0] in _BUILTINS or parts[0] in _STDLIB or parts[0] in self.defined or parts[-1] in self.defined:
                return False
            # `Client.stream`, `shipit.cli.run`: a class or a module of this repository; a lower-case
            # root that is no module here is another package or a variable (`requests.get`, `app.run`)
            return len(parts) == 1 or parts[0][:1].isupper() or self._is_module(parts[0])
        if ref.kind == "import":
            root = ref.module.split(".", 1)[0]
            return root not in _STDLIB and self._is_module(root)
        return True

    def _is_module(self, name: str) -> bool:
        """True when ``name`` is a package or module of the code root (``name/__init__.py``,
        ``name.py``, ``name.rs``, ``name/mod.rs``)."""
        return any(self._path_held(name + tail) for tail in ("/__init__.py", ".py", ".rs", "/mod.rs"))
        return True

    def missing(self, refs: list[Reference]) -> list[Reference]:
        """The references of ``refs`` the code side does not hold."""
        refs = [r for r in refs if self.checkable(r)]
        held = self.store.code.held_tokens(t for r in refs for t in _candidates(r))
        out = []
        for ref in refs:
            if ref.kind == "path":
                ok = self._path_held(ref.name)
            elif ref.command and ref.command not in held:
                ok = True  # given to a command the code does not name: another tool's option
            elif ref.kind == "flag":
                ok = any(f in held for f in _flag_forms(ref.name))
            elif ref.kind == "env":
                # a variable whose prefix the code never names belongs to another tool (`FZF_...`)
                ok = ref.name.split("_", 1)[0].lower() not in held or any(f in held for f in _env_forms(ref.name))
            elif ref.kind == "import":
                ok = ref.name in held
            else:
                parts = ref.name.removesuffix("()").split(".")
                ok = (len(parts) > 1 and parts[0] not in held) or all(p in held for p in parts)
            if not ok:
                out.append(ref)
        return out


def section_drift(checker: Checker, text: str, start_line: int) -> list[Missing]:
    """The missing references of one section's text (first line = file line ``start_line``)."""
    return [Missing(r.name, r.kind, r.line) for r in checker.missing(section_references(text, start_line))]


DEFINITIONS_KEY = "drift_definitions"
#: documents that name old flags and functions on purpose: change logs, release notes, migration guides
_HISTORY = re.compile(r"(?:^|/)[^/]*(?:changelog|changes|history|news|release[-_ ]?notes|releases|migrat|upgrad)"
                      r"[^/]*$", re.IGNORECASE)


def is_history(file_path: str) -> bool:
    """True for a change log, release notes or a migration guide (by file name): their old names
    are history, not drift."""
    return bool(_HISTORY.search(file_path))


def find_drift(store: Store, docs_root: Path, code_root: str | None) -> DriftReport:
    """Refresh the code index of ``docs_root``'s code side (``codeside``) and list the sections
    of ``store`` that drift. Raises UsageError when the code side is unknown."""
    update = update_code_index(store, find_code_root(docs_root, code_root))
    sections = store.code.all_sections()
    defined = definitions(s.text for s in sections)
    with store.transaction():  # search notes drift with the same definitions (with_drift)
        store.set_meta(DEFINITIONS_KEY, json.dumps(sorted(defined)))
    checker = Checker(store, defined)
    drifting = []
    checked = 0
    for sec in sections:
        if is_history(sec.file_path):
            continue
        refs = section_references(sec.text, sec.start_line)
        checked += len(refs)
        gone = checker.missing(refs)
        if gone:
            drifting.append(DriftingSection(sec.file_path, sec.heading_path, sec.start_line,
                                            tuple(Missing(r.name, r.kind, r.line) for r in gone)))
    return DriftReport(update.root, update.files, len(sections), checked, tuple(drifting))


def with_drift(store: Store, hits: list[Hit]) -> list[Hit]:
    """``hits`` with ``drift`` set to the names each one's text gives that the code side lost
    (unchanged when no ``drift`` run has read a code side)."""
    if not store.code.has_index():
        return hits
    checker = Checker(store, json.loads(store.get_meta(DEFINITIONS_KEY) or "[]"))
    out = []
    for h in hits:
        missing = () if h.content is None or is_history(h.file_path) else tuple(
            dict.fromkeys(r.name for r in checker.missing(section_references(h.content, h.start_line))))
        out.append(replace(h, drift=missing) if missing else h)
    return out
