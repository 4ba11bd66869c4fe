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

from .. import messages
from .codeside import (
    DEPENDENCIES_KEY,
    DEPRECATED_MARK,
    LITERAL_MARK,
    NEGATABLE_MARK,
    NEGATION_MARK,
    PREFIX_CONST_MARK,
    PREFIX_MARK,
    PREFIX_USE_MARK,
    SUFFIX_MARK,
    find_code_root,
    is_ignored,
    update_code_index,
)
from .owners import OWNERS_KEY, Owners
from .references import Reference, definitions, is_placeholder, section_references

if TYPE_CHECKING:  # pragma: no cover
    from ..models import Hit
    from ..store import Store

_BUILTINS = frozenset(dir(builtins))
_SAYS_OLD = re.compile(r"deprecat|removed|renamed|no longer|obsolete|legacy", re.IGNORECASE)
_STDLIB = frozenset(sys.stdlib_module_names)


@dataclass(frozen=True)
class Missing:
    """One reference the code does not hold: ``name`` as written, ``kind``, file ``line``;
    ``rule`` and ``command`` why a flag or variable was judged the repository's own (see
    ``Reference``); ``did_you_mean`` a name the code holds within edit distance 1-2 ("" when none)."""

    name: str
    kind: str
    line: int
    rule: str = ""
    command: str = ""
    did_you_mean: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "line": self.line}
        if self.kind in ("flag", "env"):
            out["owner"] = {"rule": self.rule, "command": self.command}
        if self.did_you_mean:
            out["did_you_mean"] = self.did_you_mean
        return out


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
    sections; ``code_root`` the folder whose code was read; ``code_files`` its file count;
    ``own_commands`` the commands the repository defines (``drift/owners.py``), sorted: none
    means flags and environment variables were not checked, and ``to_dict`` says so in ``note``."""

    code_root: str
    code_files: int
    scanned: int
    checked: int
    sections: tuple[DriftingSection, ...] = field(default_factory=tuple)
    own_commands: tuple[str, ...] = ()

    @property
    def note(self) -> str | None:
        """What the report did not check, for its reader (None when it checked every kind)."""
        return None if self.own_commands else messages.drift_without_own_command()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code_root": self.code_root, "code_files": self.code_files, "sections_scanned": self.scanned,
            "references_checked": self.checked, "drifting": len(self.sections),
            "sections": [s.to_dict() for s in self.sections], "own_commands": list(self.own_commands)}
        if self.note:
            out["note"] = self.note
        return out


def _flag_forms(name: str) -> list[str]:
    """How the code can spell ``--dry-run``: ``dry-run``, ``dry_run`` (a field clap or argparse
    turns into the option), ``dryRun`` (yargs, commander), ``--dry-run``."""
    bare = name.lstrip("-")
    parts = bare.split("-")
    return [bare, bare.replace("-", "_"), parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:]), "--" + bare]


def _field_forms(rest: str) -> list[str]:
    """The settings field an environment variable's remainder can name (``CACHE_DIR``:
    ``cache_dir``, ``cache-dir``, ``cache.dir``, ``CACHE_DIR``)."""
    low = rest.lower()
    return [rest, low, low.replace("_", "-"), low.replace("_", "."), "--" + low.replace("_", "-")]


def _family_keys(name: str) -> list[tuple[str, str]]:
    """``(marker, field)`` pairs a built name could come from: ``APP_MAX_SIZE`` gives
    (``=prefix:APP_``, ``MAX_SIZE``), (``=prefix:APP_MAX_``, ``SIZE``), (``=suffix:_SIZE``,
    ``APP_MAX``), ..."""
    parts = name.split("_")
    out = []
    for k in range(1, len(parts)):
        out.append((PREFIX_MARK + "_".join(parts[:k]) + "_", "_".join(parts[k:])))
        out.append((SUFFIX_MARK + "_" + "_".join(parts[k:]), "_".join(parts[:k])))
    return out


def _candidates(ref: Reference) -> list[str]:
    """Every token whose presence could vouch for ``ref`` (the lookup batch)."""
    if ref.kind == "flag":
        forms = _flag_forms(ref.name)
        if ref.name.startswith("--no-"):
            forms += _flag_forms("--" + ref.name[5:]) + [NEGATION_MARK, LITERAL_MARK + ref.name[5:],
                                                         NEGATABLE_MARK + ref.name[5:]]
        return forms + [DEPRECATED_MARK + f for f in _flag_forms(ref.name)] + [LITERAL_MARK + ref.name.lstrip("-")]
    if ref.kind == "env":
        return [ref.name, DEPRECATED_MARK + ref.name] + [
            t for marker, rest in _family_keys(ref.name) for t in (marker, *_field_forms(rest))]
    if ref.kind in ("name", "import"):
        return ref.name.removesuffix("()").split(".")
    return []


def edit_distance(a: str, b: str, limit: int = 2) -> int:
    """Levenshtein distance of ``a`` and ``b``, or ``limit + 1`` once it exceeds ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        if min(cur) > limit:
            return limit + 1
        prev = cur
    return prev[-1]


class Checker:
    """Looks references up in one store's code index; ``defined`` are the docs' own names."""

    def __init__(self, store: Store, defined: Iterable[str], root: Path | None = None) -> None:
        self.store = store
        code_root = store.get_meta("code_root")
        self.root = root or (Path(code_root) if code_root else None)
        self.defined = set(defined)
        self.top = store.code.top_folders()
        self.dependencies = set(json.loads(store.get_meta(DEPENDENCIES_KEY) or "[]"))
        self.owners = Owners.from_json(store.get_meta(OWNERS_KEY))
        self._paths: dict[str, bool] = {}
        self._prefixes: dict[str, bool] = {}
        self._joined: set[str] | None = None

    def joined_prefixes(self) -> set[str]:
        """Family markers (``=prefix:APP_``) of prefixes held in a named constant in one file and
        joined to a rest in another (``PREFIX_CONST_MARK`` meets ``PREFIX_USE_MARK``)."""
        if self._joined is None:
            defs = [t.removeprefix(PREFIX_CONST_MARK).partition("=") for t in self.store.code.tokens_in_range(
                PREFIX_CONST_MARK, PREFIX_CONST_MARK[:-1] + ";", 0, 400)]
            used = self.store.code.held_tokens(PREFIX_USE_MARK + name for name, _, _ in defs)
            self._joined = {PREFIX_MARK + prefix for name, _, prefix in defs if PREFIX_USE_MARK + name in used}
        return self._joined

    def _path_held(self, path: str) -> bool:
        if path not in self._paths:
            self._paths[path] = self.store.code.held_path(path)
        return self._paths[path]

    def _reads_prefix(self, first: str) -> bool:
        """True when the code spells or builds variables starting ``first_`` (``APP_DEBUG``
        beside a documented ``APP_LEGACY_MODE``): that family is the repository's."""
        if first not in self._prefixes:
            low = first + "_"
            spelled = [t for t in self.store.code.tokens_in_range(low, first + "`", len(low) + 1, 80, 50)
                       if re.fullmatch(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+", t)]
            self._prefixes[first] = bool(spelled) or bool(self.store.code.held_tokens([PREFIX_MARK + low])) \
                or PREFIX_MARK + low in self.joined_prefixes()
        return self._prefixes[first]

    def checkable(self, ref: Reference) -> bool:
        """False for a reference the rules never judge (defined by the docs, built-in, third-party,
        not the repository's own)."""
        if is_placeholder(ref.name) or ref.name in self.defined:
            return False
        if ref.kind == "path":
            return ref.name.split("/", 1)[0] in self.top
        if ref.kind in ("flag", "env") and ref.rule == "script" and not self._path_held(ref.command):
            return False  # a path that is no file of the repository: another program
        if ref.kind == "env":  # `WATCHFILES_FORCE_POLLING`: a dependency's variable, not the project's
            prefix = ref.name.split("_", 1)[0]
            if ref.rule == "" and not self._reads_prefix(prefix):
                return False  # no command claims it and the code has no variable of its family
            return prefix.lower() not in self.dependencies or self._is_module(prefix.lower()) \
                or ref.rule in ("prefix", "shell")
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

    @staticmethod
    def _flag_held(name: str, held: set[str]) -> bool:
        """``--dry-run``: a spelling of it is held (``_flag_forms``); a one-word ``--json`` only
        as the option (``--json``) or where code names an option (``LITERAL_MARK``): the bare
        word is in almost any code (``import json``)."""
        bare = name.lstrip("-")
        # one word (`--json`): the bare word is in almost any code; a camelCase name
        # (`--preReleaseId`, yargs) is as specific as a hyphenated one
        if "-" not in bare and "_" not in bare and bare == bare.lower():
            if name in held or LITERAL_MARK + bare in held:
                return True
        elif any(f in held for f in _flag_forms(name)):
            return True
        # `--no-color`: present when the code defines it (above) or its parser generates it
        # for a `--color` it defines; otherwise it is checked as itself
        if not name.startswith("--no-"):
            return False
        return NEGATABLE_MARK + name[5:] in held or (NEGATION_MARK in held and Checker._flag_held("--" + name[5:], held))

    @staticmethod
    def _env_held(name: str, held: set[str]) -> bool:
        """Spelled as written, or built: a prefix or suffix the code puts together with a
        remainder that is a setting the code names (``PDM_CACHE_DIR``: ``"PDM_"`` + ``cache_dir``)."""
        if name in held:
            return True
        return any(marker in held and any(f in held for f in _field_forms(rest)) for marker, rest in _family_keys(name))

    def missing(self, refs: list[Reference], text: str = "") -> list[Reference]:
        """The references of ``refs`` the code side does not hold. A flag or variable the code
        keeps only in a deprecation shim is missing, unless the section ``text`` itself says it
        is deprecated, removed or renamed."""
        says_old = bool(_SAYS_OLD.search(text))
        refs = [r for r in refs if self.checkable(r)]
        held = self.store.code.held_tokens(t for r in refs for t in _candidates(r))
        if any(r.kind == "env" for r in refs):
            held |= self.joined_prefixes()
        out = []
        for ref in refs:
            if ref.kind == "path":
                # a folder or file git ignores is made by a build or a run (`manual/book`, `test/_results`)
                ok = self._path_held(ref.name) or (self.root is not None and is_ignored(self.root, ref.name))
            elif ref.kind == "flag":
                ok = self._flag_held(ref.name, held)
            elif ref.kind == "env":
                ok = self._env_held(ref.name, held)
            elif ref.kind == "import":
                ok = ref.name in held
            else:
                parts = ref.name.removesuffix("()").split(".")
                ok = (len(parts) > 1 and parts[0] not in held) or all(p in held for p in parts)
            if not ok and says_old and ref.kind in ("flag", "env"):
                forms = _flag_forms(ref.name) if ref.kind == "flag" else [ref.name]
                ok = any(DEPRECATED_MARK + f in held for f in forms)
            if not ok:
                out.append(ref)
        return out

    def did_you_mean(self, ref: Reference) -> str:
        """A name the code holds within edit distance 1-2 of a missing flag or variable (1 for
        names of five characters or fewer), spelled as the docs would give it; "" when none."""
        if ref.kind not in ("flag", "env"):
            return ""
        bare = ref.name.lstrip("-") if ref.kind == "flag" else ref.name
        limit = 1 if len(bare) <= 5 else 2
        best: tuple[int, int, str] | None = None
        for low in {bare[:1], bare[:1].swapcase()} if ref.kind == "flag" else {bare[:1]}:
            for token in self.store.code.tokens_in_range(low, low + "\uffff", len(bare) - limit, len(bare) + limit):
                cand = token.replace("_", "-").lower() if ref.kind == "flag" else token
                if ref.kind == "env" and not re.fullmatch(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+", cand):
                    continue
                if cand == bare:
                    continue
                d = edit_distance(bare, cand, limit)
                if d <= limit and (best is None or (d, -len(cand)) < best[:2]):
                    best = (d, -len(cand), cand)
        if best is None:
            return ""
        return ("--" + best[2]) if ref.kind == "flag" else best[2]

    def report(self, refs: list[Reference], text: str = "") -> list[Missing]:
        """``Missing`` entries (with owner and "did you mean") for the missing ones of ``refs``."""
        return [Missing(r.name, r.kind, r.line, r.rule, r.command, self.did_you_mean(r))
                for r in self.missing(refs, text)]


def section_drift(checker: Checker, text: str, start_line: int) -> list[Missing]:
    """The missing references of one section's text (first line = file line ``start_line``)."""
    return checker.report(section_references(text, start_line, checker.owners), text)


DEFINITIONS_KEY = "drift_definitions"
#: documents that name old flags and functions on purpose: change logs, release notes, migration guides
_HISTORY = re.compile(r"(?:^|/)[^/]*(?:changelog|changes|history|news|release[-_ ]?notes|releases|migrat|upgrad)"
                      r"[^/]*$|(?:^|/)(?:news|changes|changelog\.d|newsfragments)/", re.IGNORECASE)


def is_history(file_path: str) -> bool:
    """True for a change log, release notes or a migration guide (by file name), or a change-log
    fragment (``news/``, ``changelog.d/``): their old names are history, not drift."""
    return bool(_HISTORY.search(file_path))


#: docs of a vendored dependency (its own README inside vendor/, node_modules/, ...): its names
#: are the dependency's, never this repository's
_FOREIGN_DOC = re.compile(r"(?:^|/)(?:vendor|vendored[^/]*|node_modules|third[_-]party|site-packages)/")
#: rules that give a flag to an own command by what the docs show next to it
STRONG_RULES = frozenset({"shell", "usage", "sentence", "section", "script", "listing"})
VOUCHED_KEY = "drift_vouched"


def is_skipped(file_path: str) -> bool:
    """True for docs the check never reads: history (``is_history``) and vendored dependencies'."""
    return is_history(file_path) or bool(_FOREIGN_DOC.search(file_path))


def _keep(refs: list[Reference], vouched: set[str], owners: Owners) -> list[Reference]:
    """``refs`` without the flags only the document rule claims that the docs never give to an
    own command elsewhere (``vouched``): a lone `--word-diff` in a repository whose docs never
    pass it to its own program is another program's. A repository with no command keeps them."""
    if not owners.commands:
        return refs
    return [r for r in refs if not (r.kind == "flag" and r.rule == "document" and r.name not in vouched)]


def find_drift(store: Store, docs_root: Path, code_root: str | None, *, agent: bool = False) -> DriftReport:
    """Refresh the code index of ``docs_root``'s code side (``codeside``) and list the sections
    of ``store`` that drift. Raises UsageError when the code side is unknown (worded for an
    agent when ``agent``)."""
    root = find_code_root(docs_root, code_root, agent=agent)
    update = update_code_index(store, root)
    every = store.code.all_sections()
    sections = [s for s in every if not is_skipped(s.file_path)]
    defined = definitions(s.text for s in every)
    checker = Checker(store, defined, root)
    per_section = [(sec, section_references(sec.text, sec.start_line, checker.owners,
                                            f"{sec.file_path} {sec.heading_path}")) for sec in sections]
    vouched = {r.name for _sec, refs in per_section for r in refs if r.kind == "flag" and r.rule in STRONG_RULES}
    with store.transaction():  # search notes drift with the same definitions and vouched flags (with_drift)
        store.set_meta(DEFINITIONS_KEY, json.dumps(sorted(defined)))
        store.set_meta(VOUCHED_KEY, json.dumps(sorted(vouched)))
    drifting = []
    checked = 0
    for sec, refs in per_section:
        refs = _keep(refs, vouched, checker.owners)
        checked += len(refs)
        gone = checker.report(refs, sec.text)
        if gone:
            drifting.append(DriftingSection(sec.file_path, sec.heading_path, sec.start_line, tuple(gone)))
    return DriftReport(update.root, update.files, len(every), checked, tuple(drifting),
                       tuple(sorted(checker.owners.commands)))


def with_drift(store: Store, hits: list[Hit]) -> list[Hit]:
    """``hits`` with ``drift`` set to the names each one's text gives that the code side lost
    (unchanged when no ``drift`` run has read a code side)."""
    if not store.code.has_index():
        return hits
    checker = Checker(store, json.loads(store.get_meta(DEFINITIONS_KEY) or "[]"))
    vouched = set(json.loads(store.get_meta(VOUCHED_KEY) or "[]"))
    out = []
    for h in hits:
        missing = () if h.content is None or is_skipped(h.file_path) else tuple(
            dict.fromkeys(r.name for r in checker.missing(_keep(section_references(
                h.content, h.start_line, checker.owners, f"{h.file_path} {h.heading_path}"), vouched, checker.owners),
                h.content)))
        out.append(replace(h, drift=missing) if missing else h)
    return out
