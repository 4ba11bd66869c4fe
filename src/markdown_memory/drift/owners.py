"""The commands a repository defines itself, read from its manifests (docs/drift.md#ownership).

A flag or environment variable is checked only when the docs present it as the repository's
own; "own" means given to (or named next to) one of these commands:

* Python: console and GUI scripts (``[project.scripts]``, ``[project.gui-scripts]``,
  ``[tool.poetry.scripts]`` in pyproject.toml, ``console_scripts`` in setup.cfg or setup.py);
  the project name and its top-level packages (``python -m pkg``) name the repository too.
* Rust: every ``[[bin]]`` name and the ``[package]`` name of Cargo.toml.
* JavaScript: ``bin`` of package.json (a string ``bin`` is named after the package).
* Go: the module's last path element (``/vN`` skipped) and every folder holding ``package main``.
* justfile recipes and Makefile targets (``make build``: the recipe is the repository's).
* Scripts of the repository given by path (``./scripts/release.sh``): checked by the caller.

Manifests under vendored or third-party folders (``vendor/``, ``node_modules/``, ``testdata/``)
are not the repository's. Shape: ``Owners`` (frozen sets of names), stored as JSON in ``meta``.
"""

from __future__ import annotations

import configparser
import json
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OWNERS_KEY = "drift_owners"

_FOREIGN = re.compile(r"(?:^|/)(?:vendor|vendored[^/]*|node_modules|third[_-]party|testdata|fixtures?)/")
_RECIPE = re.compile(r"^(@?[A-Za-z_][\w-]*)(?:\s+[^:=\n]*)?:(?![=:])", re.MULTILINE)
_TARGET = re.compile(r"^([A-Za-z_][\w.-]*(?:\s+[A-Za-z_][\w.-]*)*)\s*::?(?!=)", re.MULTILINE)
_GO_MAIN = re.compile(r"^package\s+main\b", re.MULTILINE)
_SETUP_PY_SCRIPT = re.compile(r"""["']\s*([A-Za-z0-9_][\w.-]*)\s*=\s*[\w.]+:[\w.]+\s*["']""")


@dataclass(frozen=True)
class Owners:
    """``commands``: command words the repository defines (``http``, ``difft``, ``nodemon``);
    ``names``: words that name the repository in prose (project and package names, commands);
    ``recipes``: justfile recipes and Makefile targets (``make build`` is own when ``build`` is one)."""

    commands: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    recipes: frozenset[str] = frozenset()
    primary: str = ""  # the command named like the project (Go module, crate, package), else the shortest
    foreign: frozenset[str] = frozenset()  # declared dependencies (lower case, `-` for `_`): other programs

    def to_json(self) -> str:
        return json.dumps({"commands": sorted(self.commands), "names": sorted(self.names),
                           "recipes": sorted(self.recipes), "primary": self.primary, "foreign": sorted(self.foreign)})

    @classmethod
    def from_json(cls, text: str | None) -> Owners:
        data: dict[str, Any] = json.loads(text) if text else {}
        return cls(frozenset(data.get("commands", ())), frozenset(data.get("names", ())),
                   frozenset(data.get("recipes", ())), str(data.get("primary", "")),
                   frozenset(data.get("foreign", ())))

    def is_own(self, word: str) -> bool:
        """True when the command word ``word`` (a basename, or ``python -m``'s module) is one the
        repository defines."""
        return word in self.commands or word in self.names

    def names_word(self, word: str) -> str:
        """The own name a prose word stands for ("" when none): exact, or case-insensitive for
        names of four letters or more ("HTTPie" is ``httpie``; "Go" is not ``go``)."""
        if word in self.names:
            return word
        if len(word) >= 4:
            low = word.lower()
            return next((n for n in sorted(self.names) if n.lower() == low), "")
        return ""

    def is_prefix(self, variable: str) -> bool:
        """True when ``variable`` starts with an own name of three letters or more and ``_``
        (``DELTA_PAGER``, ``HTTP_SERVER_PORT`` of ``http-server``)."""
        low = variable.lower()
        return any(len(n) >= 3 and low.startswith(n.lower().replace("-", "_") + "_") for n in self.names)


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text("utf-8", "replace"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def _requirement_names(items: Any) -> set[str]:
    """``{"huggingface-hub"}`` from ``["huggingface-hub>=0.20", ...]`` (or a table's keys)."""
    if isinstance(items, dict):
        items = list(items)
    if not isinstance(items, list):
        return set()
    out = set()
    for item in items:
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", str(item))
        if m:
            out.add(m.group(1).lower().replace("_", "-"))
    return out


def _python(root: Path, rel: str, commands: set[str], names: set[str], foreign: set[str]) -> None:
    path = root / rel
    if rel.endswith("pyproject.toml"):
        data = _toml(path)
        project = data.get("project", {})
        foreign.update(_requirement_names(project.get("dependencies")))
        for extra in (project.get("optional-dependencies") or {}).values():
            foreign.update(_requirement_names(extra))
        poetry = data.get("tool", {}).get("poetry", {})
        for table in (project.get("scripts", {}), project.get("gui-scripts", {}), poetry.get("scripts", {})):
            if isinstance(table, dict):
                commands.update(str(k) for k in table)
        for name in (project.get("name"), poetry.get("name")):
            if isinstance(name, str):
                names.add(name)
    elif rel.endswith("setup.cfg"):
        cfg = configparser.ConfigParser(interpolation=None)
        try:
            cfg.read_string(path.read_text("utf-8", "replace"))
        except (OSError, configparser.Error):
            return
        scripts = cfg.get("options.entry_points", "console_scripts", fallback="")
        commands.update(line.split("=", 1)[0].strip() for line in scripts.splitlines() if "=" in line)
        if cfg.has_option("metadata", "name"):
            names.add(cfg.get("metadata", "name"))
    elif rel.endswith("setup.py"):
        try:
            text = path.read_text("utf-8", "replace")
        except OSError:
            return
        if "console_scripts" in text:
            commands.update(_SETUP_PY_SCRIPT.findall(text))


def _rust(root: Path, rel: str, commands: set[str], projects: list[str], foreign: set[str]) -> None:
    data = _toml(root / rel)
    foreign.update(_requirement_names(data.get("dependencies")))
    for item in data.get("bin", []):  # the binaries first: `delta`, not the crate `git-delta`
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            commands.add(item["name"])
            projects.append(item["name"])
    name = data.get("package", {}).get("name")
    if isinstance(name, str):
        commands.add(name)
        projects.append(name)


def _node(root: Path, rel: str, commands: set[str], names: set[str], foreign: set[str]) -> None:
    try:
        data = json.loads((root / rel).read_text("utf-8", "replace"))
    except (OSError, ValueError):
        return
    if not isinstance(data, dict):
        return
    foreign.update(_requirement_names(data.get("dependencies")))
    name = data.get("name")
    bare = name.rsplit("/", 1)[-1] if isinstance(name, str) else ""
    if bare:
        names.add(bare)
    bin_ = data.get("bin")
    if isinstance(bin_, str) and bare:
        commands.add(bare)
    elif isinstance(bin_, dict):
        commands.update(str(k) for k in bin_)


def _go_module(root: Path, rel: str, commands: set[str], projects: list[str]) -> None:
    try:
        text = (root / rel).read_text("utf-8", "replace")
    except OSError:
        return
    m = re.search(r"^module\s+(\S+)", text, re.MULTILINE)
    if m:
        parts = [p for p in m.group(1).split("/") if p]
        while len(parts) > 1 and re.fullmatch(r"v\d+", parts[-1]):
            parts.pop()
        commands.add(parts[-1])
        projects.append(parts[-1])


def _go_mains(root: Path, paths: Iterable[str], commands: set[str]) -> None:
    seen: set[str] = set()
    for rel in paths:
        folder = rel.rpartition("/")[0]
        if not rel.endswith(".go") or rel.endswith("_test.go") or folder in seen or not folder:
            continue
        try:
            head = (root / rel).read_text("utf-8", "replace")[:4000]
        except OSError:
            continue
        if _GO_MAIN.search(head):
            seen.add(folder)
            commands.add(folder.rsplit("/", 1)[-1])


def _recipes(root: Path, rel: str) -> set[str]:
    try:
        text = (root / rel).read_text("utf-8", "replace")
    except OSError:
        return set()
    rx = _RECIPE if rel.rsplit("/", 1)[-1].lower() in ("justfile", ".justfile") else _TARGET
    out: set[str] = set()
    for m in rx.finditer(text):
        out.update(w.lstrip("@") for w in m.group(1).split() if not w.startswith("."))
    return out


def read_owners(root: Path, paths: list[str]) -> Owners:
    """The ``Owners`` of the code root ``root`` from its files ``paths`` (relative, POSIX)."""
    commands: set[str] = set()
    names: set[str] = set()
    recipes: set[str] = set()
    projects: list[str] = []  # names the manifests give the project, top-level first
    foreign: set[str] = set()
    for rel in sorted(paths, key=lambda p: p.count("/")):
        if _FOREIGN.search(rel) or rel.count("/") > 2:
            continue
        base = rel.rsplit("/", 1)[-1]
        if base in ("pyproject.toml", "setup.cfg", "setup.py"):
            _python(root, rel, commands, names, foreign)
        elif base == "Cargo.toml":
            _rust(root, rel, commands, projects, foreign)
        elif base == "package.json":
            _node(root, rel, commands, names, foreign)
        elif base == "go.mod":
            _go_module(root, rel, commands, projects)
        elif base.lower() in ("justfile", ".justfile", "makefile", "gnumakefile") and rel.count("/") == 0:
            recipes |= _recipes(root, rel)
    _go_mains(root, (p for p in paths if not _FOREIGN.search(p)), commands)
    # a package or module at the top (or under src/) is `python -m NAME`'s NAME
    for rel in paths:
        m = re.fullmatch(r"(?:src/)?([A-Za-z_]\w*)/__init__\.py", rel)
        if m and m.group(1) not in ("tests", "test", "docs", "examples", "scripts", "benchmarks"):
            names.add(m.group(1))
    names |= commands
    projects += sorted(names)  # Python and JavaScript project names (a command of the same name wins)
    primary = next((p for p in projects if p in commands), min(commands, key=lambda c: (len(c), c), default=""))
    return Owners(frozenset(commands), frozenset(n for n in names if len(n) > 1), frozenset(recipes), primary,
                  frozenset(foreign - {n.lower() for n in names}))
