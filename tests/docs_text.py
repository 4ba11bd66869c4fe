"""The commands README.md and docs/*.md show, read from their fenced code blocks, so tests run
exactly what a reader copies (tests/test_docs_commands.py, tests/test_agent_registration.py)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)


@dataclass(frozen=True)
class Block:
    file: Path
    lang: str
    body: str

    @property
    def where(self) -> str:
        return str(self.file.relative_to(REPO))


def blocks(lang: str | tuple[str, ...], files: list[Path] | None = None) -> list[Block]:
    """Fenced code blocks in ``lang`` (one name or several) of ``files`` (default README and docs)."""
    langs = (lang,) if isinstance(lang, str) else lang
    found = []
    for path in files or DOC_FILES:
        for m in _FENCE.finditer(path.read_text(encoding="utf-8")):
            if m["lang"] in langs:
                indent = len(m["indent"])
                body = "\n".join(line[indent:] for line in m["body"].splitlines())
                found.append(Block(path, m["lang"], body))
    return found


def shell_commands(files: list[Path] | None = None) -> list[tuple[str, str]]:
    """``(where, command)`` of every command line in ``bash``/``sh`` blocks: continuation lines
    joined, comment lines and trailing ``  # comments`` dropped."""
    out = []
    for block in blocks(("bash", "sh"), files):
        joined = re.sub(r"\\\n\s*", " ", block.body)
        for line in joined.splitlines():
            line = re.sub(r"\s{2,}#.*$", "", line).strip()
            if line and not line.startswith("#"):
                out.append((block.where, line))
    return out


def commands_starting(prefix: str, files: list[Path] | None = None) -> list[tuple[str, list[str]]]:
    """``(where, argv)`` of the shell commands that start with ``prefix`` (e.g. ``claude mcp add``)."""
    return [(where, shlex.split(line)) for where, line in shell_commands(files) if line.startswith(prefix + " ")]
