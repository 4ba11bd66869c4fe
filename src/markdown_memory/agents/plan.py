"""What ``markdown-memory setup claude-code|codex`` changes, as a list of :class:`Change`.

Claude Code: the server in ``~/.claude.json`` (``mcpServers``, user scope), the hook in
``~/.claude/settings.json`` (both under ``$CLAUDE_CONFIG_DIR`` when it is set), the rules in
the project's ``CLAUDE.md``. Codex: the server in ``~/.codex/config.toml``
(``[mcp_servers.markdown-memory]``), the hook in ``~/.codex/hooks.json`` (both under
``$CODEX_HOME`` when set; Codex's hooks take the same JSON as Claude Code's), the rules in
``AGENTS.md``. The server and hook run the absolute path of this markdown-memory with
``--embedder`` and, when a docs folder is pinned, ``--docs-dir``; without it each session's
server serves the project folder it starts in. Every file is read (and must parse) before
the plan is returned, so a broken file stops setup before anything is written.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from .. import messages_setup
from . import AGENTS, edits, rules
from .files import Change, dump_json, load_json, read_text

SERVER_NAME = "markdown-memory"
__all__ = ["AGENTS", "Request", "plan", "program_argv"]
#: seconds the agent lets the prompt hook run before it goes on without it (Claude Code's
#: ``timeout``, Codex's ``timeoutSec``)
HOOK_TIMEOUT_SECONDS = 10


@dataclass(frozen=True)
class Request:
    """``agent`` (one of AGENTS); ``embedder`` preset; ``docs_dir`` pinned (absolute) or None;
    ``hook`` / ``rules`` to add (or, with ``remove``, the rules to take out: the server and any
    markdown-memory hook always go); ``project`` holds CLAUDE.md / AGENTS.md."""

    agent: str
    embedder: str
    docs_dir: Path | None
    hook: bool
    rules: bool
    project: Path
    remove: bool = False


def program_argv() -> list[str]:
    """How an agent starts this markdown-memory: the running ``markdown-memory`` executable's
    absolute path, else the one on PATH, else this Python with ``-m markdown_memory.cli``."""
    running = sys.argv[0] if sys.argv else ""
    if os.path.basename(running) in ("markdown-memory", "markdown-memory.exe") and os.path.isfile(running):
        return [os.path.abspath(running)]
    found = shutil.which("markdown-memory")
    if found:
        return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable), "-m", "markdown_memory.cli"]


def server_argv(req: Request) -> list[str]:
    """The MCP server's command line (program first)."""
    pinned = ["--docs-dir", str(req.docs_dir)] if req.docs_dir else []
    return [*program_argv(), "--embedder", req.embedder, *pinned]


def hook_command(req: Request) -> str:
    """The prompt hook's shell command: ``<program> --embedder NAME hook [--docs-dir DIR]``."""
    pinned = ["--docs-dir", str(req.docs_dir)] if req.docs_dir else []
    return shlex.join([*program_argv(), "--embedder", req.embedder, "hook", *pinned])


def _claude_dir() -> tuple[Path, Path]:
    """(``.claude.json``, ``settings.json``) of the user's Claude Code."""
    custom = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    if custom:
        base = Path(os.path.expanduser(custom))
        return base / ".claude.json", base / "settings.json"
    return Path.home() / ".claude.json", Path.home() / ".claude" / "settings.json"


def _codex_dir() -> Path:
    custom = os.environ.get("CODEX_HOME", "").strip()
    return Path(os.path.expanduser(custom)) if custom else Path.home() / ".codex"


def _json_change(path: Path, what_set: str, what_remove: str, edit: str, req: Request, value: object) -> Change:
    """A Change of the JSON file ``path``: ``edit`` is ``server`` or ``hook``."""
    before = read_text(path)
    data = load_json(path, before)
    where = str(path)
    if edit == "server":
        new = edits.without_server(data, SERVER_NAME) if req.remove else edits.with_server(data, SERVER_NAME, value, where)  # type: ignore[arg-type]
        present = isinstance(data.get("mcpServers"), dict) and SERVER_NAME in data["mcpServers"]
    else:  # the hook
        new = edits.without_prompt_hook(data, where) if req.remove else edits.with_prompt_hook(data, value, where)  # type: ignore[arg-type]
        present = edits.without_prompt_hook(data, where) != data
    if new == data:
        return Change(path, what_remove if req.remove else what_set, before, before)
    what = what_remove if req.remove else (messages_setup.setup_update(what_set) if present else what_set)
    return Change(path, what, before, dump_json(new) if new else None)  # nothing left: the file goes


def _rules_change(path: Path, req: Request) -> Change:
    before = read_text(path)
    where = str(path)
    if req.remove:
        return Change(path, messages_setup.setup_remove_rules(path.name), before, rules.without_rules(before, where))
    after = rules.with_rules(before, where)
    if before is None:
        what = messages_setup.setup_add_rules(path.name, new_file=True)
    elif rules.START in before:
        what = messages_setup.setup_update(messages_setup.setup_add_rules(path.name, new_file=False))
    else:
        what = messages_setup.setup_add_rules(path.name, new_file=False)
    return Change(path, what, before, after)


def _codex_server(path: Path, req: Request) -> Change:
    before = read_text(path)
    where = str(path)
    present = edits.toml_server(before, SERVER_NAME, where) is not None
    argv = server_argv(req)
    entry = None if req.remove else {"command": argv[0], "args": argv[1:]}
    if req.remove and not present:
        return Change(path, messages_setup.setup_remove_server(), before, before)
    after: str | None = edits.toml_with_server(before, SERVER_NAME, entry, where)
    if not req.remove and edits.toml_server(after, SERVER_NAME, where) == edits.toml_server(before, SERVER_NAME, where):
        after = before  # same server as registered: keep the file byte for byte
    after = after or None  # nothing left: the file goes
    what = messages_setup.setup_remove_server() if req.remove else messages_setup.setup_add_server(shlex.join(argv), "codex")
    if present and not req.remove:
        what = messages_setup.setup_update(what)
    return Change(path, what, before, after)


def plan(req: Request) -> list[Change]:
    """Every change ``req`` asks for, needed or not (``Change.needed``), each file read and
    parsed. Raises ConfigError for a file that cannot be read or parsed, or that setup cannot
    edit safely."""
    hook_entry: dict[str, object] = {"type": "command", "command": hook_command(req)}
    add_hook, drop_hook = messages_setup.setup_add_hook(hook_command(req)), messages_setup.setup_remove_hook()
    changes = []
    if req.agent == "claude-code":
        config, settings = _claude_dir()
        argv = server_argv(req)
        entry = {"type": "stdio", "command": argv[0], "args": argv[1:], "env": {}}
        changes.append(_json_change(config, messages_setup.setup_add_server(shlex.join(argv), "claude-code"),
                                    messages_setup.setup_remove_server(), "server", req, entry))
        if req.hook or req.remove:
            changes.append(_json_change(settings, add_hook, drop_hook, "hook", req,
                                        {**hook_entry, "timeout": HOOK_TIMEOUT_SECONDS}))
        rules_file = req.project / "CLAUDE.md"
    else:
        home = _codex_dir()
        changes.append(_codex_server(home / "config.toml", req))
        if req.hook or req.remove:
            changes.append(_json_change(home / "hooks.json", add_hook, drop_hook, "hook", req,
                                        {**hook_entry, "timeoutSec": HOOK_TIMEOUT_SECONDS}))
        rules_file = req.project / "AGENTS.md"
    if req.rules:
        changes.append(_rules_change(rules_file, req))
    return changes
