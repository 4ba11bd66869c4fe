"""The server's JSON-RPC lines on stdin/stdout, made safe around the MCP SDK's stdio transport.

The SDK's transport parses each stdin line with pydantic (jiter) and, when that fails, only logs
``transport yielded exception`` and drops the line; a client waiting for the answer to its
request then waits forever. So every line passes through :class:`WireLines` first:

* JSON-escaped lone surrogates (``"\\ud800"``: Python's ``json.dumps`` writes one for a string
  holding half a surrogate pair, and jiter refuses it while Python's json accepts it) are
  rewritten to ``\\ufffd`` (U+FFFD, the replacement character) by :func:`replace_lone_surrogates`,
  so the request is served with U+FFFD in place of the broken character;
* a line the SDK still cannot take is answered here with a JSON-RPC error (-32700 parse error
  for a line that is not JSON, -32600 invalid request for JSON that is no JSON-RPC message, with
  the request's ``id`` when it has one) and not passed on. Blank lines are skipped;
* a request whose ``id`` is not a string or an integer (null, a fraction, ``2.0``, a boolean,
  an object or an array: MCP requires a string or integer id) is answered with -32600 here
  (:func:`invalid_id_reply`) instead of being passed on: the SDK would read it as a
  notification (an ``id`` it cannot take is ignored) and never answer it. A message without an
  ``id`` key is a notification and gets no answer, as JSON-RPC says. The reply's ``id`` is
  null: JSON-RPC asks for null when the request's id could not be read, and a number such as
  ``NaN`` or ``1e999999`` (infinite as a float) cannot even be written back as JSON;
* the lifecycle (MCP spec, "Lifecycle": initialization MUST be the first interaction): a
  request other than ``initialize`` or ``ping`` before ``initialize`` gets -32002 "server not
  initialized" naming what to send (the SDK's own answer is -32602 "Invalid request
  parameters"), and a second ``initialize`` on the same connection gets -32600 saying the
  session is already initialized (the SDK would renegotiate the protocol version mid-session).
  An ``initialize`` asking for a version this server does not support is answered by the SDK
  with the latest version it supports, as the spec's version negotiation says.

Replies go to stdout through :class:`SerialWriter`, the one writer the SDK writes through too, so
an error reply never interleaves with the SDK's own writes.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

log = logging.getLogger("markdown_memory.server")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
#: JSON-RPC's implementation-defined server error range; -32002 is "server not initialized" as in LSP
NOT_INITIALIZED = -32002
#: requests the lifecycle allows before ``initialize`` has been answered
_BEFORE_INITIALIZE = frozenset({"initialize", "ping"})

# One escape token, scanned left to right: an escaped backslash (kept, so the text after it is
# never read as an escape), a surrogate pair (kept), or a lone high or low surrogate (replaced).
_ESCAPE = re.compile(
    r"\\\\"
    r"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    r"|\\u[dD][89a-fA-F][0-9a-fA-F]{2}"
)


def _fix_escape(match: re.Match[str]) -> str:
    token = match.group()
    return token if token == "\\\\" or len(token) == 12 else "\\ufffd"


def replace_lone_surrogates(line: str) -> str:
    """``line`` (one JSON text) with every JSON escape of a lone surrogate (``\\uD800``-``\\uDBFF``
    not followed by a ``\\uDC00``-``\\uDFFF`` escape, or a lone ``\\uDC00``-``\\uDFFF``) replaced
    by ``\\ufffd``. Valid pairs and escaped backslashes (``\\\\ud800`` is text) stay as they are."""
    if "\\u" not in line:
        return line
    return _ESCAPE.sub(_fix_escape, line)


def _error_reply(line: str, exc: Exception) -> dict[str, Any] | None:
    """The JSON-RPC error answering ``line`` that the SDK refused with ``exc`` (a pydantic
    ``ValidationError``), or None when no answer is due (the line is a malformed response)."""
    errors = exc.errors(include_url=False) if hasattr(exc, "errors") else []
    first = errors[0] if errors else {"type": "", "loc": (), "msg": str(exc)}
    if first["type"] == "json_invalid":
        return {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": f"Parse error: {first['msg']}"}}
    try:
        data = json.loads(line)
    except ValueError:
        data = None
    ident = None
    if isinstance(data, dict):
        if "method" not in data and ("result" in data or "error" in data):
            return None  # a response is never answered
        candidate = data.get("id")
        if isinstance(candidate, str) or (isinstance(candidate, int) and not isinstance(candidate, bool)):
            ident = candidate
    where = ".".join(str(part) for part in first["loc"])
    detail = f"{where}: {first['msg']}" if where else first["msg"]
    return {"jsonrpc": "2.0", "id": ident,
            "error": {"code": INVALID_REQUEST, "message": f"Invalid Request: not a JSON-RPC message ({detail})"}}


def _valid_id(ident: Any) -> bool:
    return isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool))


def _error_message(reply: dict[str, object]) -> object:
    """The ``error.message`` of a JSON-RPC error reply (for the log)."""
    error = reply.get("error")
    return error.get("message") if isinstance(error, dict) else error


def invalid_id_reply(line: str) -> dict[str, object] | None:
    """The -32600 error answering ``line`` (a JSON-RPC message the SDK took as a notification)
    when it carries an ``id`` key whose value MCP does not accept as a request id, else None.
    The reply echoes the id when JSON-RPC allows it in a response (a number or null), null
    otherwise."""
    if '"id"' not in line:
        return None  # cheap pre-check: a notification has no id key
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict) or "id" not in data or _valid_id(data["id"]):
        return None
    shown = json.dumps(data["id"])[:60]  # NaN / Infinity spelled as sent: this is message text
    # null, never the id: JSON-RPC's rule for an id that could not be read (NaN is not JSON)
    return {"jsonrpc": "2.0", "id": None,
            "error": {"code": INVALID_REQUEST,
                      "message": f"Invalid Request: the id {shown} is not a string or an integer; "
                                 "send requests with a string or integer id, or no id for a notification"}}


def tool_arguments_reply(line: str) -> dict[str, object] | None:
    """The -32602 error answering a ``tools/call`` request whose ``arguments`` is present but
    not a JSON object (a string, a list, a number), naming what was sent and the expected
    shape; None for any other line. The SDK's own answer says only "Invalid request
    parameters", which an agent cannot act on."""
    if '"tools/call"' not in line or '"arguments"' not in line:
        return None  # cheap pre-check
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("method") != "tools/call" or not _valid_id(data.get("id")):
        return None
    params = data.get("params")
    if not isinstance(params, dict) or "arguments" not in params or params["arguments"] is None:
        return None
    arguments = params["arguments"]
    if isinstance(arguments, dict):
        return None
    kind = {str: "a string", list: "an array", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(arguments), "a value")
    tool = params.get("name") if isinstance(params.get("name"), str) else "the tool"
    return {"jsonrpc": "2.0", "id": data["id"],
            "error": {"code": INVALID_PARAMS,
                      "message": f"Invalid params: the arguments of {tool} must be a JSON object of its "
                                 f"parameters (got {kind}), for example {{\"query\": \"install on linux\"}}; "
                                 "call tools/list for each tool's parameters"}}


def lifecycle_reply(message: Any, initialized: bool) -> dict[str, object] | None:
    """The error answering request ``message`` (a parsed JSON-RPC message) that breaks the MCP
    lifecycle, or None: -32002 for a request other than initialize/ping before ``initialize``,
    -32600 for a second ``initialize`` (``initialized``: an ``initialize`` was already passed on)."""
    from mcp_types import JSONRPCRequest

    if not isinstance(message, JSONRPCRequest):
        return None
    if message.method == "initialize" and initialized:
        return {"jsonrpc": "2.0", "id": message.id,
                "error": {"code": INVALID_REQUEST,
                          "message": "Invalid Request: this session is already initialized; initialize is "
                                     "sent once per connection (start a new connection to negotiate again)"}}
    if not initialized and message.method not in _BEFORE_INITIALIZE:
        return {"jsonrpc": "2.0", "id": message.id,
                "error": {"code": NOT_INITIALIZED,
                          "message": f"Server not initialized: send initialize (then notifications/initialized) "
                                     f"before {message.method[:60]}"}}
    return None


def _accepts_initialize(message: Any) -> bool:
    """Whether ``message`` is an ``initialize`` request the SDK will accept (its params valid)."""
    from mcp_types import InitializeRequestParams, JSONRPCRequest

    if not isinstance(message, JSONRPCRequest) or message.method != "initialize":
        return False
    try:
        InitializeRequestParams.model_validate(message.params or {}, by_name=False)
    except ValueError:
        return False
    return True


class WireLines:
    """Async iteration over the protocol's input lines, as the SDK's ``stdio_server`` reads them.

    Lines come back with lone surrogate escapes replaced; lines the SDK would drop are answered
    with ``reply`` (an awaitable taking the JSON-RPC error object) instead of being yielded.
    ``on_eof`` is called when the input ends (stdin closed), so long-running tool bodies can be
    told to stop while the transport winds down."""

    def __init__(self, source: Any, reply: Callable[[dict[str, object]], Awaitable[None]],
                 on_eof: Callable[[], None]) -> None:
        self._source = source
        self._reply = reply
        self._on_eof = on_eof
        self._initialized = False  # an acceptable `initialize` request was passed on

    async def __aiter__(self) -> AsyncIterator[str]:
        from mcp_types import JSONRPCNotification, jsonrpc_message_adapter

        try:
            async for line in self._source:
                if not line.strip():
                    continue
                fixed = replace_lone_surrogates(line)
                if fixed != line:
                    log.info("replaced lone surrogate escape(s) in a request with U+FFFD")
                try:  # the transport's own parse, so anything passing here passes there
                    message = jsonrpc_message_adapter.validate_json(fixed, by_name=False)
                except Exception as exc:
                    answer = _error_reply(fixed, exc)
                    log.warning("unreadable JSON-RPC line %r: %s", fixed.rstrip("\r\n")[:200],
                                answer["error"]["message"] if answer else exc)
                    if answer is not None:
                        await self._reply(answer)
                    continue
                answer = tool_arguments_reply(fixed)
                if answer is not None:
                    log.warning("tools/call with non-object arguments %r: answered with an error",
                                fixed.rstrip("\r\n")[:200])
                    await self._reply(answer)
                    continue
                answer = lifecycle_reply(message, self._initialized)
                if answer is not None:
                    log.warning("%s", _error_message(answer))
                    await self._reply(answer)
                    continue
                self._initialized = self._initialized or _accepts_initialize(message)
                if isinstance(message, JSONRPCNotification):
                    answer = invalid_id_reply(fixed)
                    if answer is not None:
                        log.warning("JSON-RPC request with an unusable id %r: answered with an error",
                                    fixed.rstrip("\r\n")[:200])
                        await self._reply(answer)
                        continue
                yield fixed
        finally:
            log.debug("stdin closed; stopping")
            self._on_eof()


class SerialWriter:
    """The transport's stdout: an ``anyio`` async text file whose writes and flushes run one at
    a time (in a worker thread, as ``anyio.wrap_file`` does), so :meth:`send` from the input
    side can share it with the SDK's writer task. Every write the SDK makes is one whole line."""

    def __init__(self, text_file: Any) -> None:
        import anyio

        self._file = text_file
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        import anyio

        async with self._lock:
            await anyio.to_thread.run_sync(self._file.write, text)

    async def flush(self) -> None:
        import anyio

        async with self._lock:
            await anyio.to_thread.run_sync(self._file.flush)

    async def send(self, message: dict[str, object]) -> None:
        """Write ``message`` as one JSON line and flush it, with no other write in between."""
        import anyio

        try:  # allow_nan=False: a reply is JSON or it is not sent (NaN / Infinity are not JSON)
            line = json.dumps(message, separators=(",", ":"), allow_nan=False) + "\n"
        except ValueError:
            line = json.dumps({**message, "id": None}, separators=(",", ":"), allow_nan=False) + "\n"

        def write_and_flush() -> None:
            self._file.write(line)
            self._file.flush()

        async with self._lock:
            await anyio.to_thread.run_sync(write_and_flush)
