"""``markdown-memory ui``: open the local page (docs/ui.md) of a docs root in the browser.

The page is served by the resident service on its loopback HTTP endpoint (``serve
--http-port``): the command starts the service with HTTP when none runs, makes sure the service
can map this docs root's id back to its settings (``mcp.http_access.register`` when the root is
not indexed at the default place), and opens a one-time link carrying a ticket
(``ui.access``), which the page exchanges for a cookie. ``--no-browser`` prints the link
instead. ``--clear-hook-log`` empties the root's hook log and opens nothing.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .options import add_docs_dir


def register(sub: Any) -> None:
    p = sub.add_parser("ui", help="open the local page: search, read, roots, what the hook gave, eval, drift "
                       "(docs/ui.md)", description="Open the local page of a docs root in the browser, served by "
                       "the resident service on 127.0.0.1 (started with HTTP when needed).")
    add_docs_dir(p)
    p.add_argument("--http-port", type=int, metavar="PORT", default=None,
                   help="the service's HTTP port (default: $MARKDOWN_MEMORY_HTTP_PORT, else 7761)")
    p.add_argument("--no-browser", action="store_true", help="print the one-time link instead of opening a browser")
    p.add_argument("--clear-hook-log", action="store_true",
                   help="delete the prompt hook's log of this docs root (what the Hook log page shows) and exit")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Open (or print) the page's link, or clear the hook log. Returns 0. Raises ConfigError
    (service off or not startable, a service running without HTTP on the port, a bad port)."""
    from ..errors import ConfigError
    from ..mcp import http_access
    from ..service import client
    from ..ui import access
    from .options import settings_of

    settings = settings_of(args)
    if args.clear_hook_log:
        return _clear(args, settings.db_path.is_file())
    port = http_access.http_port(args.http_port)
    assert port is not None
    if client.mode() == "off":
        raise ConfigError("the page is served by the resident service, and MARKDOWN_MEMORY_SERVICE=off forbids it; "
                          "unset it (or set it to auto) and run this again")
    token = http_access.load_token()
    ident = http_access.root_id(settings.docs_root)
    if http_access.lookup(ident) is None:  # not indexed at the default place: the service must find its settings
        http_access.register(settings)
    _ensure_service(port)
    from urllib.parse import quote

    url = access.link(port, token, f"r/{quote(ident, safe='')}/")
    if not args.no_browser and _open(url):
        sys.stdout.write(f"opened the page of {settings.docs_root} in your browser (the link works once; "
                         "run `markdown-memory ui` again for a new one)\n")
        return 0
    sys.stdout.write(f"open this link within {access.TICKET_SECONDS / 60:.0f} minutes (it works once):\n{url}\n")
    return 0


def _open(url: str) -> bool:
    import webbrowser

    try:
        return bool(webbrowser.open(url))
    except webbrowser.Error:
        return False


def _ensure_service(port: int) -> None:
    """A service serving HTTP on ``port``: the running one, or one started with ``--http-port``.
    Raises ConfigError when one runs without it (it must be stopped first) or none starts."""
    from ..errors import ConfigError
    from ..service import client

    try:
        try:
            info = client.ping(start=False)
        except client.ServiceUnavailable:
            client.start_service(["--http-port", str(port)])
            info = client.ping(start=False)
    except (client.ServiceUnavailable, client.ServiceError) as exc:
        raise ConfigError(f"the service did not start: {exc}") from exc
    if info.http_port == port:
        return
    if info.http_error:
        raise ConfigError(f"the service could not serve HTTP on port {port}: {info.http_error}")
    if info.http_port:
        raise ConfigError(f"a service already runs (pid {info.pid}) with HTTP on port {info.http_port}, "
                          f"not {port}: run `markdown-memory ui --http-port {info.http_port}`")
    raise ConfigError(f"a service already runs (pid {info.pid}) without HTTP; stop it with `markdown-memory "
                      "serve --stop` (agents work in process meanwhile), then run this again")


def _clear(args: argparse.Namespace, indexed: bool) -> int:
    from .options import open_engine

    if not indexed:
        sys.stdout.write("no index here, so no hook log to clear\n")
        return 0
    with open_engine(args) as engine:
        gone = engine.store.clear_hook_log()
    sys.stdout.write(f"cleared the hook log of {engine.root}: {gone} prompt(s) deleted\n")
    return 0
