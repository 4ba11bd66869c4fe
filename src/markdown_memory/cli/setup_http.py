"""``markdown-memory setup claude-code|codex --http``: the registration line of a docs root's
MCP-over-HTTP URL (:mod:`markdown_memory.mcp.http`).

With ``--yes``, records the docs root and its settings in the HTTP registry (so the service maps
the URL's id back to them), makes the bearer token on first use, and prints the line to run;
without it, prints that plan and the line (``TOKEN`` standing for the token) and writes nothing: Claude Code
takes the token as a header; Codex reads it from an environment variable
(``--bearer-token-env-var``). It edits no agent configuration: the agent's own CLI does; only
``--remove`` takes the entry out again (with ``--yes``, as setup does).
"""

from __future__ import annotations

import argparse
import shlex

#: the environment variable the Codex line names for the token
CODEX_TOKEN_ENV = "MARKDOWN_MEMORY_HTTP_TOKEN"


def registration_lines(agent: str, url: str, token: str, token_file: str) -> list[str]:
    """The shell line(s) registering ``url`` with ``agent`` (``claude-code`` or ``codex``)."""
    from ..agents.plan import SERVER_NAME

    if agent == "codex":
        return [f"export {CODEX_TOKEN_ENV}=\"$(cat {shlex.quote(token_file)})\"",
                shlex.join(["codex", "mcp", "add", SERVER_NAME, "--url", url, "--bearer-token-env-var", CODEX_TOKEN_ENV])]
    return [shlex.join(["claude", "mcp", "add", "--transport", "http", "--scope", "user", SERVER_NAME, url,
                        "--header", f"Authorization: Bearer {token}"])]


def _remove_agent_entry(args: argparse.Namespace, embedder: str) -> None:
    """Take the ``markdown-memory`` server out of the agent's user configuration (the entry the
    printed registration line made, ``claude mcp add --scope user`` / ``codex mcp add``): with
    ``--yes`` at once, else the plan, the same command with ``--yes`` and the agent's own line."""
    from pathlib import Path

    from .. import messages_setup
    from ..agents.files import apply
    from ..agents.plan import SERVER_NAME, Request, plan

    request = Request(args.agent, embedder, None, False, False, Path.cwd(), remove=True)
    changes = [c for c in plan(request) if c.needed and c.what == messages_setup.setup_remove_server()]
    own = (["codex", "mcp", "remove", SERVER_NAME] if args.agent == "codex"
           else ["claude", "mcp", "remove", "--scope", "user", SERVER_NAME])
    if not changes:
        print(f"the agent has no {SERVER_NAME} entry to remove")
        return
    if args.yes:
        apply(changes)
    for change in changes:
        print(f"  {change.path}: {change.what}{'' if args.yes else ' (not yet)'}")
    if not args.yes:
        print(f"{messages_setup.setup_confirm()} (or run `{shlex.join(own)}`)")


def run_http(args: argparse.Namespace, embedder: str) -> int:
    """With ``--yes``, register the docs root (``--docs-dir``, else the usual resolution:
    environment, working directory) and print its registration line; without it, print the
    plan and the line and write nothing (``--remove`` alike). Raises ConfigError for a refused docs root,
    a bad port or an unsafe token file."""
    from .. import messages_setup
    from ..config import Settings
    from ..errors import ConfigError
    from ..mcp import http_access

    if args.hook or args.rules:
        raise ConfigError("--http prints a registration line only; run setup without --http for --hook or --rules")
    settings = Settings.load(docs_root=args.docs_dir, embedder=embedder)
    ident = http_access.root_id(settings.docs_root)
    if args.remove:  # the service stops serving the root's URL, and the agent's entry goes too
        if not args.yes:
            print(messages_setup.setup_http_would_unregister(settings.docs_root, ident))
        else:
            done = http_access.unregister([ident])
            print(f"{'unregistered' if done else 'not registered:'} {settings.docs_root} (id {ident}) for MCP over HTTP")
        _remove_agent_entry(args, embedder)
        return 0
    port = http_access.http_port(args.http_port)
    assert port is not None
    url, token_file = http_access.root_url(port, ident), http_access.token_path()
    if not args.yes:  # the plan: what would be written, and the line with the token's place
        new_token = not token_file.exists()
        registry = http_access.config_dir() / http_access.REGISTRY_FILE
        print(messages_setup.setup_http_plan(settings.docs_root, ident, registry, token_file, new_token))
        lines = registration_lines(args.agent, url, "TOKEN", str(token_file))
        print(messages_setup.setup_http(args.agent, settings.docs_root, url, token_file, port, lines))
        print(messages_setup.setup_confirm())
        return 0
    http_access.register(settings)
    token = http_access.load_token()
    lines = registration_lines(args.agent, url, token, str(token_file))
    print(messages_setup.setup_http(args.agent, settings.docs_root, url, token_file, port, lines))
    return 0
