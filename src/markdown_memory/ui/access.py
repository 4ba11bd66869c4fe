"""Who may open the local page: one-time links, the session cookie and the form token.

Light (standard library only): ``markdown-memory ui`` makes a link here without starlette.
Every value is derived from the MCP-over-HTTP bearer token (``mcp.http_access.load_token``), so
the command and the service agree without talking to each other:

- a *ticket* (the one-time link's ``?ticket=``): ``<expires>.<nonce>.<hmac>``, valid
  :data:`TICKET_SECONDS` and only once (the service remembers the nonces it took, in memory);
- the *cookie* the ticket is exchanged for: ``<issued>.<hmac>``, valid :data:`COOKIE_SECONDS`;
  sent HttpOnly, SameSite=Strict, Path=/ui, so no script and no other site's page can use it;
- the *form token* a POST (index now, evaluation) must carry: an hmac of the cookie, written
  into the page's forms (a page on another origin cannot read it).

Each hmac is SHA-256 keyed by the bearer token with a purpose prefix, compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from urllib.parse import quote

#: seconds a one-time link stays valid
TICKET_SECONDS = 300.0
#: seconds a session cookie stays valid (then run ``markdown-memory ui`` again)
COOKIE_SECONDS = 7 * 24 * 3600.0
COOKIE_NAME = "markdown_memory_ui"
#: the path every page lives under (the cookie's Path)
PREFIX = "/ui"


def _sign(token: str, purpose: str, value: str) -> str:
    return hmac.new(token.encode("utf-8"), f"{purpose}:{value}".encode(), hashlib.sha256).hexdigest()


def make_ticket(token: str, now: float | None = None) -> str:
    """A one-time ticket for a link: ``<expires>.<nonce>.<hmac>``."""
    expires = int((time.time() if now is None else now) + TICKET_SECONDS)
    nonce = secrets.token_urlsafe(16)
    return f"{expires}.{nonce}.{_sign(token, 'ticket', f'{expires}.{nonce}')}"


def link(port: int, token: str, page: str = "") -> str:
    """The one-time link ``http://127.0.0.1:PORT/ui/login?ticket=...&next=/ui/<page>``."""
    target = quote(f"{PREFIX}/{page.lstrip('/')}", safe="/")
    return f"http://127.0.0.1:{port}{PREFIX}/login?ticket={make_ticket(token)}&next={target}"


class Tickets:
    """The nonces already exchanged (one use each); thread-safe."""

    def __init__(self) -> None:
        self._used: dict[str, float] = {}
        self._lock = threading.Lock()

    def take(self, token: str, ticket: str, now: float | None = None) -> str | None:
        """None when ``ticket`` is valid and unused (it is then used up), else why not."""
        now = time.time() if now is None else now
        expires, _, rest = ticket.partition(".")
        nonce, _, sig = rest.rpartition(".")
        if not (expires.isdigit() and nonce and hmac.compare_digest(sig, _sign(token, "ticket", f"{expires}.{nonce}"))):
            return "this link is not valid"
        if int(expires) < now:
            return "this link has expired"
        with self._lock:
            for old in [n for n, until in self._used.items() if until < now]:
                del self._used[old]
            if nonce in self._used:
                return "this link was already used"
            self._used[nonce] = float(expires)
        return None


def make_cookie(token: str, now: float | None = None) -> str:
    """A session cookie value: ``<issued>.<hmac>``."""
    issued = int(time.time() if now is None else now)
    return f"{issued}.{_sign(token, 'cookie', str(issued))}"


def cookie_valid(token: str, value: str | None, now: float | None = None) -> bool:
    """True for a cookie :func:`make_cookie` made with ``token`` less than COOKIE_SECONDS ago."""
    if not value:
        return False
    issued, _, sig = value.partition(".")
    if not issued.isdigit() or not hmac.compare_digest(sig, _sign(token, "cookie", issued)):
        return False
    age = (time.time() if now is None else now) - int(issued)
    return -60 <= age <= COOKIE_SECONDS


def form_token(token: str, cookie: str) -> str:
    """The token a page's forms carry for the session ``cookie`` (the CSRF check)."""
    return _sign(token, "form", cookie)


def form_token_valid(token: str, cookie: str | None, presented: str | None) -> bool:
    return bool(cookie and presented) and hmac.compare_digest(str(presented), form_token(token, str(cookie)))
