"""The ``markdown-memory`` console script: the prompt hook and the stdio MCP server start here
without importing the CLI (its parser and command modules cost ~80 ms and ~5 MB).

Three fast paths, taken only for a command line made of the options they know (anything else,
``--help`` and ``--log-level`` included, goes to :func:`markdown_memory.cli.main`, which then
behaves exactly as before):

* ``search`` with the service switch not ``off``: parsed by the CLI's own parser with only
  ``search`` registered (``cli.search_client``) and answered by the service; the full CLI runs
  it in process when no service answers;

* ``hook`` (global ``--docs-dir`` and ``--db``; its own ``--docs-dir`` and ``--max-tokens``): the hook command's body
  (``hook/command.py``): payload and gate first, the resident service or the in-process
  keyword search only for a prompt that asks the docs;
* no command (global ``--docs-dir``, ``--db``, ``--embedder``, ``--no-auto-index``,
  ``--max-file-mb``, ``--verbose``): with the service switch not ``off`` and the settings
  resolved, the relay to the service (``mcp/relay.py``), a process of ~12 MB; the in-process
  server when no service can be had.
"""

from __future__ import annotations

import os
import sys

#: options that take a value, by where they may appear
_GLOBAL_VALUED = frozenset({"--docs-dir", "--db", "--embedder", "--max-file-mb"})
_GLOBAL_FLAGS = frozenset({"--no-auto-index", "--verbose"})
_HOOK_VALUED = frozenset({"--docs-dir", "--max-tokens"})


def _scan(argv: list[str]) -> tuple[str | None, dict[str, str], dict[str, str]] | None:
    """(command or None, global options, the command's options) when every word of ``argv``
    is one the fast paths know (values as given, the last of a repeated option wins); None
    otherwise (the full CLI parses it)."""
    command: str | None = None
    globals_: dict[str, str] = {}
    own: dict[str, str] = {}
    words = iter(argv)
    for word in words:
        if not word.startswith("--") or word == "--":
            if command is not None or word != "hook":
                return None
            command = word
            continue
        name, eq, value = word.partition("=")
        valued = _HOOK_VALUED if command else _GLOBAL_VALUED
        if name in valued:
            if not eq:
                value = next(words, "")
                if not value or value.startswith("-"):
                    return None
            (own if command else globals_)[name] = value
        elif command is None and name in _GLOBAL_FLAGS and not eq:
            globals_[name] = "1"
        else:
            return None
    return command, globals_, own


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``markdown-memory`` console script. Returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["serve"]:
        _few_malloc_arenas()
    scanned = _scan(argv) if not os.environ.get("MARKDOWN_MEMORY_LOG_LEVEL", "").strip() else None
    if scanned is not None:
        command, globals_, own = scanned
        if command == "hook" and own.get("--max-tokens", "0").isdigit() and set(globals_) <= {"--docs-dir", "--db"}:
            return _hook(globals_, own)
        if command is None:
            status = _serve(globals_, argv)
            if status is not None:
                return status
    elif "search" in argv:
        status = _search(argv)
        if status is not None:
            return status
    from .cli import main as cli_main

    return cli_main(argv)


#: glibc's ``mallopt`` parameter number of M_ARENA_MAX
_M_ARENA_MAX = -8


def _few_malloc_arenas(arenas: int = 2) -> None:
    """The resident service runs a thread per connection and per MCP session's workers, and glibc
    gives threads that allocate at once their own malloc arenas, whose pages are rarely given
    back: with two arenas the service held 236 MB instead of 246 MB after four sessions' first
    searches (3.1 instead of 5.3 MB per session). ``MALLOC_ARENA_MAX`` set by the user wins;
    elsewhere than glibc this does nothing."""
    if not sys.platform.startswith("linux") or os.environ.get("MALLOC_ARENA_MAX"):
        return
    try:
        import ctypes

        ctypes.CDLL(None).mallopt(_M_ARENA_MAX, arenas)
    except (OSError, AttributeError):  # not glibc (musl has no mallopt of this kind)
        pass


def _hook(globals_: dict[str, str], own: dict[str, str]) -> int:
    """``markdown-memory hook``: always 0 (see ``hook/command.py``)."""
    from .hook.command import run

    raw = own.get("--max-tokens")
    return run(docs_dir=own.get("--docs-dir") or globals_.get("--docs-dir"), db=globals_.get("--db"),
               max_tokens=None if raw is None else int(raw))


def _search(argv: list[str]) -> int | None:
    """``search`` through the resident service, parsed without the other commands; None when the
    full CLI must run it (the switch is off, no service, not a plain search line)."""
    from .service.client import mode

    if mode() == "off":
        return None
    from .cli import search_client

    return search_client(argv)


def _serve(globals_: dict[str, str], argv: list[str]) -> int | None:
    """No command: the relay to the resident service, else the in-process server; None when
    the full CLI must decide (the settings do not resolve: it answers the handshake with the
    reason; the service switch is off; a flag value it must word an error for)."""
    from .service.client import mode

    if mode() == "off":
        return None
    from .config import EMBEDDER_CHOICES, Settings
    from .errors import ConfigError

    embedder = globals_.get("--embedder")
    if embedder is not None and embedder not in EMBEDDER_CHOICES:
        return None
    try:
        max_file = float(globals_["--max-file-mb"]) if "--max-file-mb" in globals_ else None
        settings = Settings.load(globals_.get("--docs-dir"), globals_.get("--db"), embedder,
                                 auto_index=False if "--no-auto-index" in globals_ else None, max_file=max_file)
    except (ConfigError, ValueError):
        return None
    import json

    # the relay in a fresh interpreter: this one holds the settings' imports (~5 MB) for nothing
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-m", "markdown_memory.mcp.relay", json.dumps(settings.to_wire()), *argv])
    return 1  # pragma: no cover - execv does not return
