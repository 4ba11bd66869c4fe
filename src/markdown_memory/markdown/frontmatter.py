"""Front matter detection (YAML ``---`` and TOML ``+++``, as Hugo and Zola write it) that does
not mistake a leading ``---`` rule for metadata.

Rule (from real failure reports; see tests/cases 002 and 023): a block is front matter only
when line 1 is exactly ``---``, line 2 is not blank, a closing ``---`` or ``...`` line exists,
and either the block parses as a YAML mapping or line 2 looks like a YAML key
(``^[\\w-]+\\s*:``). A delimited block whose YAML is invalid is still front matter: the caller
gets empty metadata and a warning naming the line and the YAML error. TOML: line 1 exactly
``+++``, a closing ``+++`` line, and the block parses as TOML (stdlib ``tomllib``) or line 2 looks
like a TOML key (``key =``, ``[table]``); invalid TOML is front matter with a warning too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, TypeAlias

#: A document's front matter as parsed (YAML or TOML): string keys, any value the format
#: allows; ``{}`` for a document without one.
Metadata: TypeAlias = dict[str, Any]

_KEY_LINE = re.compile(r"^[\w-]+\s*:")
#: ``key: {{date}}`` / ``key: <% tp.date.now() %>`` / ``key: {{ .Date }}``: a template
#: placeholder that a note template (Obsidian Templater, Jinja, Hugo archetypes) leaves unfilled;
#: as YAML, ``{{...}}`` is a flow mapping with an unhashable key, ``<%`` is fine but ``%>`` may not be
_PLACEHOLDER_VALUE = re.compile(r"^(\s*[\w-]+\s*:[ \t]*)((?:\{\{|<%).*?(?:\}\}|%>)[^#]*?)\s*$")
_TOML_KEY_LINE = re.compile(r"^\s*(?:[\w\"'.-]+\s*=|\[)")


@dataclass
class FrontMatter:
    """``end_line``: 1-based line of the closing delimiter (0 when there is no front matter)."""

    end_line: int = 0
    metadata: Metadata = field(default_factory=dict)
    warning: str | None = None

    @property
    def title(self) -> str | None:
        value = self.metadata.get("title")
        if isinstance(value, (str, int, float)) and str(value).strip():
            return str(value).strip()
        return None


def detect_front_matter(lines: list[str]) -> FrontMatter:
    """Detect front matter at the top of ``lines`` (already without BOM and line endings)."""
    if lines and lines[0].rstrip() == "+++":
        return _toml_front_matter(lines)
    if len(lines) < 3 or lines[0].rstrip() != "---" or not lines[1].strip():
        return FrontMatter()
    close = None
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            close = i
            break
    if close is None:
        return FrontMatter()
    body = "\n".join(lines[1:close])
    import yaml

    try:
        data = _load_yaml(body)
    except yaml.YAMLError as exc:
        if not _KEY_LINE.match(lines[1]):
            return FrontMatter()
        mark = getattr(exc, "problem_mark", None)
        line = (mark.line + 2) if mark is not None else 2
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return FrontMatter(end_line=close + 1, warning=f"invalid YAML front matter at line {line}: {problem}")
    if isinstance(data, dict):
        return FrontMatter(end_line=close + 1, metadata={str(k): v for k, v in data.items()})
    if _KEY_LINE.match(lines[1]):
        return FrontMatter(end_line=close + 1, warning="front matter is not a YAML mapping")
    return FrontMatter()


def _load_yaml(body: str) -> Any:
    """``body`` parsed as YAML; when that fails and a value is an unfilled template placeholder
    (:data:`_PLACEHOLDER_VALUE`), parsed again with those values as plain strings (the note's
    other keys, its title and tags among them, still count). Raises yaml.YAMLError."""
    import json

    import yaml

    try:
        return yaml.safe_load(body)
    except yaml.YAMLError:
        quoted = [_PLACEHOLDER_VALUE.sub(lambda m: m.group(1) + json.dumps(m.group(2)), line)
                  for line in body.split("\n")]
        if quoted == body.split("\n"):
            raise
        try:
            return yaml.safe_load("\n".join(quoted))
        except yaml.YAMLError:
            pass
        raise


def _toml_front_matter(lines: list[str]) -> FrontMatter:
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "+++"), None)
    if close is None or close == 1:
        return FrontMatter()
    import tomllib

    try:
        data = tomllib.loads("\n".join(lines[1:close]))
    except tomllib.TOMLDecodeError as exc:
        if not _TOML_KEY_LINE.match(lines[1]):
            return FrontMatter()
        where = re.sub(r"at line (\d+)", lambda m: f"at line {int(m.group(1)) + 1}", str(exc))  # file lines
        # an error at the block's end names the closing ``+++`` line, as the YAML warning names a line
        where = where.replace("at end of document", f"at line {close + 1}, the closing +++")
        return FrontMatter(end_line=close + 1, warning=f"invalid TOML front matter: {where}")
    return FrontMatter(end_line=close + 1, metadata={str(k): v for k, v in data.items()})


def front_matter_aliases(metadata: Metadata) -> list[str]:
    """The other names a note's front matter gives it (``aliases`` or ``alias``: a list, or one
    string of comma-separated names), stripped, empty ones dropped."""
    value = metadata.get("aliases", metadata.get("alias"))
    items = value.split(",") if isinstance(value, str) else value if isinstance(value, list) else []
    return [str(v).strip() for v in items if isinstance(v, (str, int, float)) and str(v).strip()]
