"""The local page's routes (Starlette), mounted under ``/ui`` on the service's HTTP endpoint
(``mcp/http.py`` hands it every ``/ui`` request after its Host and Origin checks).

Who gets in (:mod:`.access`): ``/ui/login?ticket=...`` exchanges a one-time ticket for the
session cookie and redirects to ``next``; every other request needs that cookie or the bearer
token in ``Authorization`` (scripts, the benchmark); else 401 with a page saying how to get a
link. A POST (index now, evaluation) also needs the form token the page's forms carry (or the
bearer token). Pages, each per docs root ``/ui/r/<id>/...`` (``<id>`` as in the MCP URL):

- ``/ui/`` roots; ``/ui/r/<id>/`` search (``?q=&folder=&tag=&kind=&lang=``);
  ``/ui/r/<id>/read?file=&heading=``; ``/ui/r/<id>/hook?session=``; ``/ui/r/<id>/drift``;
  ``/ui/r/<id>/eval`` (GET the form, POST ``questions=PATH`` to run);
  ``/ui/r/<id>/index`` (POST: the one write, an index run).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..errors import MarkdownMemoryError
from . import access, views

if TYPE_CHECKING:  # pragma: no cover
    from typing import TypeAlias

    from jinja2 import Environment
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, RedirectResponse
    from starlette.types import Receive, Scope, Send

    from ..config import Settings
    from ..engine import Engine
    from ..roots import IndexEntry

    #: what an endpoint answers: a page, or a redirect after a form
    Answer: TypeAlias = HTMLResponse | RedirectResponse

log = logging.getLogger("markdown_memory.ui")

EngineFactory = Callable[["Settings"], "Engine"]


class UiApp:
    """The ASGI app of ``/ui`` (see the module docstring). ``token``: the bearer token every
    secret derives from; ``engine_factory``: the engine of a root's settings (the service's
    pool, or the HTTP app's own engines: whoever made it stops it); ``lookup``: settings of a root id or None;
    ``on_request``: called for each admitted request (the service's activity clock)."""

    def __init__(self, token: str, *, engine_factory: EngineFactory,
                 lookup: Callable[[str], Settings | None] | None = None,
                 on_request: Callable[[], object] | None = None) -> None:
        from starlette.routing import Route, Router

        from ..mcp import http_access

        self._token = token
        self._factory = engine_factory
        self._lookup = lookup or http_access.lookup
        self._on_request = on_request
        self._tickets = access.Tickets()
        self._seen: dict[str, Settings] = {}  # roots opened on this page (listed beside the default ones)
        self._lock = threading.Lock()
        self._env: Environment | None = None
        pages = [("/", self.roots_page, ["GET"]), ("/r/{ident}/", self.search_page, ["GET"]),
                 ("/r/{ident}/read", self.read_page, ["GET"]), ("/r/{ident}/hook", self.hook_page, ["GET"]),
                 ("/r/{ident}/drift", self.drift_page, ["GET"]), ("/r/{ident}/eval", self.eval_page, ["GET", "POST"]),
                 ("/r/{ident}/index", self.index_now, ["POST"])]
        self._router = Router([Route(access.PREFIX + path, endpoint, methods=methods)
                               for path, endpoint, methods in pages])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette.requests import Request
        from starlette.responses import RedirectResponse

        request = Request(scope, receive)
        if scope["path"] in (access.PREFIX, access.PREFIX + "/login"):
            response = self._login(request) if scope["path"].endswith("/login") else \
                RedirectResponse(access.PREFIX + "/", status_code=303)
            await response(scope, receive, send)
            return
        refusal = self._refusal(request)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        if self._on_request is not None:
            self._on_request()
        await self._router(scope, receive, send)

    # -- who gets in --------------------------------------------------------------------------
    def _bearer(self, request: Request) -> bool:
        from ..mcp.http_access import bearer, token_matches

        presented = bearer(request.headers.get("authorization"))
        return bool(presented) and token_matches(presented, self._token)

    def _refusal(self, request: Request) -> Answer | None:
        if self._bearer(request) or access.cookie_valid(self._token, request.cookies.get(access.COOKIE_NAME)):
            return None
        return self._page("refused.html", {"reason": "this page needs the link `markdown-memory ui` prints"},
                          status=401)

    def _login(self, request: Request) -> Answer:
        from starlette.responses import RedirectResponse

        target = request.query_params.get("next") or access.PREFIX + "/"
        path = target.partition("?")[0]
        if not path.startswith(access.PREFIX + "/") or "//" in path or "\\" in path or ".." in path.split("/"):
            target = access.PREFIX + "/"
        why = self._tickets.take(self._token, request.query_params.get("ticket") or "")
        if why is not None:
            if access.cookie_valid(self._token, request.cookies.get(access.COOKIE_NAME)):
                return RedirectResponse(target, status_code=303)  # an old link opened again in a signed-in browser
            return self._page("refused.html", {"reason": why}, status=401)
        response = RedirectResponse(target, status_code=303)  # the ticket leaves the address bar
        response.set_cookie(access.COOKIE_NAME, access.make_cookie(self._token), max_age=int(access.COOKIE_SECONDS),
                            path=access.PREFIX, httponly=True, samesite="strict")
        return response

    async def _form(self, request: Request) -> dict[str, str] | None:
        """The POSTed form, or None when it lacks the form token of this session (and the
        request has no bearer token)."""
        form = {k: str(v) for k, v in (await request.form()).items()}
        if self._bearer(request) or access.form_token_valid(self._token, request.cookies.get(access.COOKIE_NAME),
                                                             form.get("form_token")):
            return form
        return None

    # -- roots and engines --------------------------------------------------------------------
    def _settings(self, ident: str) -> Settings | None:
        settings = self._lookup(ident)
        if settings is not None:
            with self._lock:
                self._seen[ident] = settings
        return settings

    def _root(self, request: Request) -> tuple[str, Engine | None, Answer | None]:
        ident = str(request.path_params["ident"])
        settings = self._settings(ident)
        if settings is None:
            from ..roots import GONE

            row = views.unavailable_root(ident, self.known_roots().get(ident))
            if row.state is not None:  # listed by `roots`, but cannot be opened: its state and reason, not "no such root"
                return ident, None, self._page("error.html", {"row": row}, status=410 if row.state == GONE else 503)
            return ident, None, self._page("error.html", {"message": f"no indexed docs root has the id {ident!r}"},
                                           status=404)
        return ident, self._factory(settings), None

    def known_roots(self) -> dict[str, IndexEntry | None]:
        """Every root ``markdown-memory roots`` lists, whatever its state (its id: its entry), and
        those opened here (None when not listed), sorted by id."""
        from ..roots import list_indexes

        known: dict[str, IndexEntry | None] = {e.folder.name: e for e in list_indexes()}
        with self._lock:
            for ident in self._seen:
                known.setdefault(ident, None)
        return dict(sorted(known.items()))

    # -- rendering ----------------------------------------------------------------------------
    def _page(self, template: str, context: dict[str, Any], *, status: int = 200,
              request: Request | None = None) -> Answer:
        from starlette.responses import HTMLResponse

        if self._env is None:
            from jinja2 import Environment, PackageLoader, select_autoescape

            env = Environment(loader=PackageLoader("markdown_memory.ui", "templates"),
                              autoescape=select_autoescape(default=True), trim_blocks=True, lstrip_blocks=True)
            env.filters["q"] = lambda value: quote(str(value), safe="")
            env.filters["utc"] = lambda seconds: time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))
            self._env = env
        cookie = request.cookies.get(access.COOKIE_NAME) if request is not None else None
        context = {"prefix": access.PREFIX, "form_token": access.form_token(self._token, cookie) if cookie else "",
                   **context}
        html = self._env.get_template(template).render(**context)
        return HTMLResponse(html, status_code=status, headers={
            "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
                                       "script-src 'none'; form-action 'self'; frame-ancestors 'none'"})

    def _error(self, exc: MarkdownMemoryError, ident: str, engine: Engine, request: Request) -> Answer:
        from ..errors import describe_error

        return self._page("error.html", {"message": describe_error(exc).message, "ident": ident,
                                         "root": str(engine.root)}, status=400, request=request)

    # -- pages --------------------------------------------------------------------------------
    def roots_page(self, request: Request) -> Answer:
        rows = []
        for ident, entry in self.known_roots().items():
            settings = self._settings(ident)
            try:
                rows.append(views.root_status(ident, self._factory(settings)) if settings is not None
                            else views.unavailable_root(ident, entry))
            except MarkdownMemoryError as exc:
                rows.append(views.root_status(ident, None, str(exc)))
        return self._page("roots.html", {"rows": rows, "done": request.query_params.get("done")}, request=request)

    def search_page(self, request: Request) -> Answer:
        """The search form and, with ``q``, the answer; ``Server-Timing`` says how long the search
        and the whole page took on the server (``scripts/bench_ui.py`` reads it)."""
        start = time.perf_counter()
        ident, engine, missing = self._root(request)
        if engine is None:
            return missing  # type: ignore[return-value]
        params = {k: request.query_params.get(k, "") for k in ("q", "folder", "tag", "kind", "lang")}
        context: dict[str, Any] = {"ident": ident, "root": str(engine.root), "params": params, "kinds": views.KINDS,
                                   "answer": None}
        if params["q"].strip():
            try:
                context["answer"] = views.search(engine, views.search_request(
                    params["q"], params["folder"], params["tag"], params["kind"], params["lang"]))
            except MarkdownMemoryError as exc:
                return self._error(exc, ident, engine, request)
        response = self._page("search.html", context, request=request)
        searched = f"search;dur={context['answer']['ms']:.1f}, " if context["answer"] else ""
        response.headers["Server-Timing"] = f"{searched}page;dur={(time.perf_counter() - start) * 1000:.1f}"
        return response

    def read_page(self, request: Request) -> Answer:
        ident, engine, missing = self._root(request)
        if engine is None:
            return missing  # type: ignore[return-value]
        try:
            section = views.reader(engine, request.query_params.get("file", ""), request.query_params.get("heading", ""))
        except MarkdownMemoryError as exc:
            return self._error(exc, ident, engine, request)
        return self._page("read.html", {"ident": ident, "root": str(engine.root), "s": section}, request=request)

    def hook_page(self, request: Request) -> Answer:
        ident, engine, missing = self._root(request)
        if engine is None:
            return missing  # type: ignore[return-value]
        data = views.hook_log(engine, request.query_params.get("session"))
        return self._page("hook.html", {"ident": ident, "root": str(engine.root), **data}, request=request)

    def drift_page(self, request: Request) -> Answer:
        ident, engine, missing = self._root(request)
        if engine is None:
            return missing  # type: ignore[return-value]
        code = request.query_params.get("code", "").strip()
        context: dict[str, Any] = {"ident": ident, "root": str(engine.root), "code": code, "report": None, "error": None}
        try:
            context["report"] = engine.drift(code or None)
        except MarkdownMemoryError as exc:  # no git work tree: the page asks for the code's folder
            context["error"] = str(exc)
        return self._page("drift.html", context, request=request)

    async def eval_page(self, request: Request) -> Answer:
        from starlette.concurrency import run_in_threadpool

        ident, engine, missing = self._root(request)
        if engine is None:
            return missing  # type: ignore[return-value]
        context: dict[str, Any] = {"ident": ident, "root": str(engine.root), "questions": "", "result": None}
        if request.method == "POST":
            form = await self._form(request)
            if form is None:
                return self._page("refused.html", {"reason": "the form's token is missing or wrong"}, status=403)
            context["questions"] = form.get("questions", "").strip()
            try:
                context["result"] = await run_in_threadpool(views.evaluation, engine,
                                                            Path(context["questions"]).expanduser())
            except MarkdownMemoryError as exc:
                return self._error(exc, ident, engine, request)
        return self._page("eval.html", context, request=request)

    async def index_now(self, request: Request) -> Answer:
        from starlette.concurrency import run_in_threadpool
        from starlette.responses import RedirectResponse

        ident, engine, missing = self._root(request)
        if engine is None:
            return missing  # type: ignore[return-value]
        if await self._form(request) is None:
            return self._page("refused.html", {"reason": "the form's token is missing or wrong"}, status=403)
        try:
            report = await run_in_threadpool(engine.index)
        except MarkdownMemoryError as exc:
            return self._error(exc, ident, engine, request)
        done = f"{ident}: {report.indexed} indexed, {report.removed} removed, {len(report.failed)} failed"
        return RedirectResponse(f"{access.PREFIX}/?done={quote(done)}", status_code=303)
