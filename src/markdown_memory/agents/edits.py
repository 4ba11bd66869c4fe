"""The edits setup makes to the agents' config, as pure functions of the file's content.

JSON (Claude Code's ``~/.claude.json`` and ``settings.json``, Codex's ``hooks.json``): a copy
of the parsed object with one key set or taken out; everything else is kept as it was, in its
order. TOML (Codex's ``config.toml``): the text is edited line by line, only the
``[mcp_servers.<name>]`` table (and its sub-tables) being replaced, added at the end or taken
out, so comments and layout elsewhere stay; the result is parsed again with :mod:`tomllib` and
must equal the original with exactly that server changed, else ConfigError (nothing is
written). This keeps the one table edit free of a TOML writing library.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import tomllib
from typing import Any

from .. import messages_setup
from ..errors import ConfigError

HOOK_EVENT = "UserPromptSubmit"


# -- MCP servers in JSON ----------------------------------------------------------------------
def merged_entry(old: object, entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` over an existing server entry ``old``: setup's keys (command, args) replace
    the old ones, the user's other keys stay (``env`` is merged key by key, setup's winning),
    so updating a registration never drops a token or a timeout the user added."""
    if not isinstance(old, dict):
        return dict(entry)
    out = {**copy.deepcopy(old), **entry}
    if isinstance(old.get("env"), dict):
        out["env"] = {**old["env"], **(entry.get("env") or {})}
    return out


def with_server(data: dict[str, Any], name: str, entry: dict[str, Any], where: str = "the config file") -> dict[str, Any]:
    """``data`` with ``mcpServers[name]`` set to ``entry`` (other servers and keys kept, and the
    user's own keys of an existing entry: :func:`merged_entry`). Raises ConfigError when
    ``mcpServers`` exists but is not a JSON object (nothing is dropped silently)."""
    out = copy.deepcopy(data)
    servers = out.get("mcpServers")
    if servers is None:
        servers = {}
    elif not isinstance(servers, dict):
        raise ConfigError(messages_setup.config_unreadable(where, '"mcpServers" is not a JSON object'))
    servers[name] = merged_entry(servers.get(name), entry)
    out["mcpServers"] = servers
    return out


def without_server(data: dict[str, Any], name: str) -> dict[str, Any]:
    """``data`` without ``mcpServers[name]`` (and without ``mcpServers`` when that was the only one)."""
    out = copy.deepcopy(data)
    servers = out.get("mcpServers")
    if isinstance(servers, dict) and name in servers:
        del servers[name]
        if not servers:
            del out["mcpServers"]
    return out


# -- the prompt hook in JSON (Claude Code settings.json, Codex hooks.json) ----------------------
def is_our_hook(command: object) -> bool:
    """True for a hook command line that runs ``markdown-memory ... hook`` (any install path,
    flags, or ``python -m markdown_memory.cli ... hook``)."""
    if not isinstance(command, str):
        return False
    try:
        argv = shlex.split(command)
    except ValueError:
        return False
    if "hook" not in argv[1:]:
        return False
    program = os.path.basename(argv[0]) if argv else ""
    return program in ("markdown-memory", "markdown-memory.exe") or "markdown_memory.cli" in argv[1:3]


def _without_our_hooks(groups: list[Any]) -> list[Any]:
    """The matcher groups with every markdown-memory hook taken out; a group left empty by that
    goes too, any other group stays as it was."""
    kept = []
    for group in groups:
        hooks = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(hooks, list):
            kept.append(group)
            continue
        rest = [h for h in hooks if not (isinstance(h, dict) and is_our_hook(h.get("command")))]
        if len(rest) == len(hooks):
            kept.append(group)
        elif rest:
            kept.append({**group, "hooks": rest})
    return kept


def _hook_groups(data: dict[str, Any], where: str) -> list[Any]:
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError(messages_setup.config_unreadable(where, '"hooks" is not a JSON object'))
    groups = hooks.get(HOOK_EVENT, [])
    if not isinstance(groups, list):
        raise ConfigError(messages_setup.config_unreadable(where, f'"hooks.{HOOK_EVENT}" is not a list'))
    return groups


def with_prompt_hook(data: dict[str, Any], hook: dict[str, Any], where: str) -> dict[str, Any]:
    """``data`` whose ``hooks.UserPromptSubmit`` runs ``hook`` (``{"type": "command",
    "command": ...}``) once: a markdown-memory hook already there in exactly that form is kept
    where it is; otherwise every markdown-memory hook goes and one group with ``hook`` is
    appended. Other hooks and settings are kept. Raises ConfigError when ``hooks`` has an
    unexpected shape."""
    groups = _hook_groups(data, where)
    ours = [h for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list)
            for h in g["hooks"] if isinstance(h, dict) and is_our_hook(h.get("command"))]
    if ours == [hook]:
        return copy.deepcopy(data)
    out = copy.deepcopy(data)
    out.setdefault("hooks", {})[HOOK_EVENT] = _without_our_hooks(copy.deepcopy(groups)) + [{"hooks": [hook]}]
    return out


def without_prompt_hook(data: dict[str, Any], where: str) -> dict[str, Any]:
    """``data`` without any markdown-memory ``UserPromptSubmit`` hook; an event list or
    ``hooks`` object left empty by that goes too."""
    groups = _hook_groups(data, where)
    kept = _without_our_hooks(copy.deepcopy(groups))
    out = copy.deepcopy(data)
    if len(kept) == len(groups) and kept == groups:
        return out
    if kept:
        out["hooks"][HOOK_EVENT] = kept
    else:
        del out["hooks"][HOOK_EVENT]
        if not out["hooks"]:
            del out["hooks"]
    return out


# -- MCP servers in Codex's config.toml -------------------------------------------------------
_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")
_ANY_HEADER = re.compile(r"^\s*\[")


def _toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's; DEL must be escaped too)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _key_parts(key: str) -> list[str]:
    """A dotted TOML key as its parts (quotes taken off; enough for table headers)."""
    return [p.strip().strip('"').strip("'") for p in re.findall(r'"[^"]*"|\'[^\']*\'|[^.]+', key)]


def _toml_value(value: Any) -> str:
    """A TOML value for a scalar or a list of scalars; ValueError for anything else."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise ValueError(f"cannot write {type(value).__name__}")


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml_string(key)


def _server_table(name: str, entry: dict[str, Any]) -> list[str]:
    """The ``[mcp_servers.<name>]`` table of ``entry``: command and args first, the user's other
    keys after them, each sub-table (``env`` and any other) as its own header. ValueError for a
    value this line edit cannot write (a date, a table in a table)."""
    lines = [f"[mcp_servers.{name}]", f"command = {_toml_string(entry['command'])}",
             "args = " + _toml_value(list(entry.get("args", [])))]
    tables = []
    for key, value in entry.items():
        if key in ("command", "args"):
            continue
        if isinstance(value, dict):
            tables.append((key, value))
        else:
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    for key, table in tables:
        if not table:
            continue
        lines += ["", f"[mcp_servers.{name}.{_toml_key(key)}]"]
        for k, v in table.items():
            if isinstance(v, dict):
                raise ValueError("a table in a table")
            lines.append(f"{_toml_key(k)} = {_toml_value(v)}")
    return lines


def _parse_toml(text: str, where: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(messages_setup.config_unreadable(where, f"not valid TOML: {exc}")) from exc


def toml_server(text: str | None, name: str, where: str) -> Any:
    """The ``mcp_servers.<name>`` table of the TOML ``text`` (None when absent). Raises
    ConfigError for text that is not TOML."""
    servers = _parse_toml(text or "", where).get("mcp_servers")
    return servers.get(name) if isinstance(servers, dict) else None


def toml_with_server(text: str | None, name: str, entry: dict[str, Any] | None, where: str) -> str:
    """``text`` (None: no file) with the ``[mcp_servers.<name>]`` table set to ``entry``
    (``command``, ``args``, optional ``env``), or taken out for ``entry`` None. Raises
    ConfigError when ``text`` is not TOML or the server is written in a form this line edit
    cannot change safely (the check in the module docstring)."""
    text = text or ""
    before = _parse_toml(text, where)
    lines = text.splitlines()
    kept: list[str] = []
    at: int | None = None  # where the old table was
    inside = False
    for line in lines:
        header = _HEADER.match(line) if _ANY_HEADER.match(line) else None
        if _ANY_HEADER.match(line):
            parts = _key_parts(header.group(1)) if header and not line.lstrip().startswith("[[") else []
            inside = parts[:2] == ["mcp_servers", name]
            if inside and at is None:
                while kept and not kept[-1].strip():
                    kept.pop()
                at = len(kept)
        if not inside:
            kept.append(line)
    before_servers = before.get("mcp_servers", {})
    if not isinstance(before_servers, dict):
        raise ConfigError(messages_setup.config_unreadable(where, "mcp_servers is not a table"))
    if entry is not None:
        entry = merged_entry(before_servers.get(name), entry)
    try:
        block = _server_table(name, entry) if entry is not None else []
    except ValueError as exc:
        raise ConfigError(messages_setup.toml_not_editable(where, name)) from exc
    if block:
        if at is None:
            while kept and not kept[-1].strip():
                kept.pop()
            at = len(kept)
        gap = [""] if at else []
        tail = kept[at:]
        kept = kept[:at] + gap + block + ([""] if tail and tail[0].strip() else []) + tail
    elif at is not None and at < len(kept) and kept[at].strip() and at:
        kept.insert(at, "")
    after = "\n".join(kept).rstrip("\n") + "\n" if any(li.strip() for li in kept) else ""
    expected = copy.deepcopy(before)
    servers = expected.setdefault("mcp_servers", {})
    if entry is None:
        servers.pop(name, None)
        if not servers and "mcp_servers" not in before:
            expected.pop("mcp_servers")
    else:
        servers[name] = {k: v for k, v in entry.items() if k != "env" or v}
    try:
        got = tomllib.loads(after)
    except tomllib.TOMLDecodeError as exc:  # e.g. the server also defined inline: the edit cannot be safe
        raise ConfigError(messages_setup.toml_not_editable(where, name)) from exc
    if not got.get("mcp_servers") and not expected.get("mcp_servers"):
        got.pop("mcp_servers", None)
        expected.pop("mcp_servers", None)
    if got != expected:
        raise ConfigError(messages_setup.toml_not_editable(where, name))
    return after
