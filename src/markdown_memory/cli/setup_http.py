"""``markdown-memory setup claude-code|codex --http``: the registration line of a docs root's
MCP-over-HTTP URL (:mod:`markdown_memory.mcp.http`).

Records the docs root and its settings in the HTTP registry (so the service maps the URL's id
back to them), makes the bearer token on first use, and prints the line to run: Claude Code
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
    """Register the docs root (``--docs-dir``, else the usual resolution: environment, working
    directory) and print its registration line. Raises ConfigError for a refused docs root,
    a bad port or an unsafe token file."""
    from .. import messages_setup
    from ..config import Settings
    from ..errors import ConfigError
    from ..mcp import http_access

    if args.hook or args.rules:
        raise ConfigError("--http prints a registration line only; run setup without --http for --hook or --rules")
    settings = Settings.load(docs_root=args.docs_dir, embedder=embedder)
    if args.remove:  # the service stops serving the root's URL, and the agent's entry goes too
        ident = http_access.root_id(settings.docs_root)
        done = http_access.unregister([ident])
        print(f"{'unregistered' if done else 'not registered:'} {settings.docs_root} (id {ident}) for MCP over HTTP")
        _remove_agent_entry(args, embedder)
        return 0
    port = http_access.http_port(args.http_port)
    assert port is not None
    ident = http_access.register(settings)
    token = http_access.load_token()
    url = http_access.root_url(port, ident)
    token_file = str(http_access.token_path())
    lines = registration_lines(args.agent, url, token, token_file)
    print(messages_setup.setup_http(args.agent, settings.docs_root, url, token_file, port, lines))
    return 0
