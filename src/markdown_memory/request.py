"""The one search schema: :class:`SearchRequest`, whose fields are a table (type, default,
bounds, the CLI's help, the agent's description), read by every adapter instead of restating it.

* the CLI's options: ``cli/options.add_request_options`` (argparse, from each field's ``flag``);
* the MCP tool's input model: ``mcp/schema.input_model`` (pydantic, strict: the SDK validates);
* the wire form (the resident service's ``search`` op): :meth:`SearchRequest.to_wire` /
  :meth:`SearchRequest.from_wire`.

A new search filter is one field here (``field(default, Spec(...))``), its check and ``Scope``
entry in ``search/filters.py`` and its SQL in ``store/scope.py``. Standard library only: the
CLI's light client path reads this module.
"""

from __future__ import annotations

import builtins
import dataclasses
import typing
from collections.abc import Iterator, Mapping
from dataclasses import KW_ONLY, dataclass
from typing import Any

from .errors import InvalidRequestError, QueryError
from .limits import DEFAULT_MAX_TOKENS, DEFAULT_TOP_K, MAX_MAX_TOKENS, MAX_TOP_K, MIN_MAX_TOKENS

#: longest query text the MCP schema admits is not bounded (a long query is cut, the answer says
#: so: ``config.MAX_QUERY_CHARS``); strings that name things are
PATH_MAX, HEADING_MAX, TAG_MAX, MAX_TAGS, LANG_MAX = 4096, 2000, 200, 32, 50
#: ``config.MAX_QUERY_CHARS`` (restated: config is not light); a test checks they agree
QUERY_CHARS = 100_000


@dataclass(frozen=True)
class Spec:
    """How one request field is offered. ``help``: the CLI's help (None: not a CLI option, e.g.
    ``resend``: the CLI has no session); ``doc``: the MCP tool's description; ``flag``: the CLI
    option (None with a ``help``: the positional argument); ``low``/``high``: whole-number
    bounds the adapters enforce (``library``: the library's own (low, high) when wider, e.g. a
    test's small budget, the prompt hook's search past the agent's limit); ``choices``; ``max_length``: of a string, or items of a list
    (``item_max``: of each item); ``min_length`` of a string; ``metavar``."""

    doc: str
    help: str | None = None
    flag: str | None = None
    low: int | None = None
    high: int | None = None
    library: tuple[int, int | None] | None = None
    choices: tuple[str, ...] = ()
    min_length: int | None = None
    max_length: int | None = None
    item_max: int | None = None
    metavar: str | None = None


def _field(default: Any, spec: Spec) -> Any:
    """A dataclass field carrying its :class:`Spec` (``metadata["spec"]``)."""
    return dataclasses.field(default=default, metadata={"spec": spec})


@dataclass(frozen=True)
class SearchRequest:
    """One search, built once by each adapter and passed to ``Engine.search``. The fields below
    are the schema (in the order the MCP tool lists them). Whole floats count as integers (as
    JSON Schema does); ``tags`` may be given as a list or one string (split by the filter).
    Raises QueryError for a blank query, InvalidRequestError for a number out of bounds."""

    query: str = _field(dataclasses.MISSING, Spec(
        doc=("What you want to know: words, a phrase, an identifier or an error message (a query longer "
             f"than {QUERY_CHARS:,} characters is searched by its first {QUERY_CHARS:,}; the answer's message says so)."),
        help="", min_length=1))
    _: KW_ONLY
    top_k: int = _field(DEFAULT_TOP_K, Spec(
        doc=f"Maximum number of hits (1-{MAX_TOP_K}).", flag="--top-k", low=1, high=MAX_TOP_K,
        help=f"number of results (1-{MAX_TOP_K}, default {DEFAULT_TOP_K})"))
    path_prefix: str | None = _field(None, Spec(
        doc="Only documents under this folder or path, relative to the docs root.", flag="--path-prefix",
        help="only documents under this folder or path", max_length=PATH_MAX))
    max_tokens: int = _field(DEFAULT_MAX_TOKENS, Spec(
        doc=(f"Budget for the whole answer ({MIN_MAX_TOKENS}-{MAX_MAX_TOKENS} tokens; {MIN_MAX_TOKENS} is what the "
             "smallest answer needs: one pointer, the message and index_status)."),
        flag="--max-tokens", low=MIN_MAX_TOKENS, high=MAX_MAX_TOKENS, library=(1, None),
        help=f"budget for result text, {MIN_MAX_TOKENS}-{MAX_MAX_TOKENS} (default {DEFAULT_MAX_TOKENS})"))
    tags: tuple[str, ...] = _field((), Spec(
        doc=("Only documents carrying these tags (front matter or inline #tags); "
             "a tag also matches its nested tags ('project' matches 'project/alpha')."),
        flag="--tag", metavar="TAG", max_length=MAX_TAGS, item_max=TAG_MAX,
        help="only documents carrying this tag or one nested in it (repeatable)"))
    tags_mode: str = _field("any", Spec(
        doc="'any': a document with one of the tags; 'all': with every one.", flag="--tags-mode",
        choices=("any", "all"), help="with several --tag: documents with any of them (default) or all"))
    kind: str | None = _field(None, Spec(
        doc="Only sections holding a block of this kind; the preview shows that block.", flag="--kind",
        choices=("code", "table", "list", "prose"), help="only sections holding a block of this kind"))
    lang: str | None = _field(None, Spec(
        doc=("Only sections holding a fenced code block in this language ('bash' also matches sh, shell, "
             "console); implies kind 'code'."), flag="--lang", max_length=LANG_MAX,
        help="only sections holding a code block in this language (bash also matches sh, console)"))
    heading: str | None = _field(None, Spec(
        doc=("Only sections whose heading breadcrumb contains this text (ASCII case ignored): 'Install' "
             "matches 'Guide > Install > Linux'; 'Guide > Install' selects that heading and every "
             "section below it."), flag="--heading", max_length=HEADING_MAX, metavar="TEXT",
        help=("only sections whose heading breadcrumb contains TEXT (ASCII case ignored; "
              "'Guide > Install' selects that heading and its subsections)")))
    resend: bool = _field(False, Spec(
        doc=("Send the text of sections already sent in full earlier in this session again (default false: "
             "they come as pointers with already_sent=true).")))

    def __post_init__(self) -> None:
        if not isinstance(self.query, str) or not self.query.strip():
            raise QueryError("query is empty; pass words, a phrase or an identifier to search for")
        for f in specs():
            value = getattr(self, f.name)
            if f.type is int:
                low, high = f.spec.library or (f.spec.low if f.spec.low is not None else 0, f.spec.high)
                value = _whole(f.name, value, low, high)
            elif f.type is tuple:
                value = (value,) if isinstance(value, str) else tuple(value or ())
            elif f.type is bool:
                value = bool(value)
            object.__setattr__(self, f.name, value)

    def to_wire(self) -> dict[str, object]:
        """The request as a JSON object, one key per field (tuples as lists)."""
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v for f in specs()}

    @classmethod
    def from_wire(cls, data: Mapping[str, object]) -> SearchRequest:
        """The inverse of :meth:`to_wire` (absent keys take their defaults). Raises QueryError,
        InvalidRequestError, or TypeError for a value of the wrong type."""
        values: dict[str, Any] = {}
        for f in specs():
            if f.name not in data:
                continue
            value = data[f.name]
            if value is not None and not isinstance(value, f.wire_types):
                raise TypeError(f"{f.name} must be {f.type.__name__}, got {type(value).__name__}")
            values[f.name] = value
        query = values.pop("query", "")
        return cls(str(query), **values)


@dataclass(frozen=True)
class RequestField:
    """One row of the schema: ``name``, the base ``type`` (int, str, bool, or tuple for a list
    of strings), whether None is allowed (``optional``), the ``default`` and the :class:`Spec`."""

    name: str
    type: type
    optional: bool
    default: Any
    spec: Spec

    @property
    def wire_types(self) -> tuple[builtins.type, ...]:
        """The JSON values :meth:`SearchRequest.from_wire` accepts for the field."""
        if self.type is tuple:
            return (list, tuple, str)
        return (int, float) if self.type is int else (self.type,)


def specs() -> Iterator[RequestField]:
    """The schema's rows, in field order."""
    hints = typing.get_type_hints(SearchRequest)
    for f in dataclasses.fields(SearchRequest):
        if "spec" not in f.metadata:
            continue
        hint = hints[f.name]
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        optional = type(None) in typing.get_args(hint)
        base = typing.get_origin(hint) or hint
        if optional:
            base = args[0]
        yield RequestField(f.name, base, optional, None if f.default is dataclasses.MISSING else f.default,
                           f.metadata["spec"])


def _whole(name: str, value: object, low: int, high: int | None) -> int:
    """``value`` as an int in ``low..high`` (a float without fraction counts), else InvalidRequestError."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and low <= value and (high is None or value <= high):
        return value
    bounds = f"from {low} to {high}" if high is not None else f"of at least {low}"
    raise InvalidRequestError(f"{name} must be a whole number {bounds}, got {value!r}")
