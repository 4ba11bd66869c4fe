"""The service's typed messages: every op has a request and a reply dataclass, and this module
turns them into the JSON objects of the request and reply lines (:mod:`.protocol`) and back.

* :func:`encode` — a dataclass as a JSON object: each field by name; a value with a
  ``to_wire()`` method (``config.Settings``) as what it returns; nested dataclasses, lists and
  tuples alike.
* :func:`decode` — the inverse, checked against the dataclass's field types (``str``, ``int``,
  ``float``, ``bool``, ``X | None``, ``list[X]``, ``tuple[X, ...]``, a JSON object as
  ``dict[str, object]``, a nested dataclass, a class with ``from_wire(data)``); a field with a
  default may be absent. Raises :class:`WireError` naming the field.

The built-in ops' messages live here (``ping``, ``stop``); an adapter declares its op's messages
beside its handler (``hook/service_op.py``, ``cli/search_op.py``, ``mcp/service_op.py``).
Standard library only: the light client imports it.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import TypeVar

from .protocol import JsonObject

T = TypeVar("T")


class WireError(ValueError):
    """A request or reply object that does not fit its dataclass (a missing field, a wrong type)."""


def encode(value: object) -> object:
    """``value`` as JSON data (see module docstring); a dataclass becomes a JSON object."""
    to_wire = getattr(value, "to_wire", None)
    if callable(to_wire):
        return to_wire()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        return {str(key): encode(item) for key, item in value.items()}
    return value


def encode_object(value: object) -> JsonObject:
    """A dataclass (or None: ``{}``) as the JSON object of a line. Raises WireError for anything
    that is not a JSON object once encoded."""
    data = {} if value is None else encode(value)
    if not isinstance(data, dict):
        raise WireError(f"{type(value).__name__} is not a JSON object on the wire")
    return data


def decode(cls: type[T], data: object) -> T:
    """The ``cls`` dataclass read from the JSON object ``data`` (unknown keys ignored). Raises
    WireError."""
    if not isinstance(data, Mapping):
        raise WireError(f"{cls.__name__}: expected a JSON object, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    values: dict[str, object] = {}
    for spec in dataclasses.fields(cls):  # type: ignore[arg-type]
        if spec.name not in data:
            if spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING:
                raise WireError(f"{cls.__name__}.{spec.name}: missing")
            continue
        values[spec.name] = _value(hints[spec.name], data[spec.name], f"{cls.__name__}.{spec.name}")
    return cls(**values)


def _value(hint: object, raw: object, where: str) -> object:
    """``raw`` read as ``hint``. Raises WireError."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        if raw is None and type(None) in args:
            return None
        kinds = [a for a in args if a is not type(None)]
        if len(kinds) != 1:
            raise WireError(f"{where}: a union of {hint} is not a wire type")
        return _value(kinds[0], raw, where)
    if origin in (list, tuple):
        if not isinstance(raw, list):
            raise WireError(f"{where}: expected a list, got {type(raw).__name__}")
        items = [_value(args[0] if args else object, item, where) for item in raw]
        return items if origin is list else tuple(items)
    if origin is dict or hint is dict:
        if not isinstance(raw, dict):
            raise WireError(f"{where}: expected a JSON object, got {type(raw).__name__}")
        return raw
    if hint is object or hint is typing.Any:
        return raw
    if hint is bool or hint is str:
        if not isinstance(raw, hint):
            raise WireError(f"{where}: expected {hint.__name__}, got {type(raw).__name__}")
        return raw
    if hint is int or hint is float:
        if isinstance(raw, bool) or not isinstance(raw, (int, float) if hint is float else int):
            raise WireError(f"{where}: expected {hint.__name__}, got {type(raw).__name__}")
        return float(raw) if hint is float else raw
    from_wire = getattr(hint, "from_wire", None)
    if callable(from_wire):
        if not isinstance(raw, dict):
            raise WireError(f"{where}: expected a JSON object, got {type(raw).__name__}")
        try:
            return from_wire(raw)
        except Exception as exc:  # noqa: BLE001 - whatever the class refuses with (ConfigError for Settings)
            raise WireError(f"{where}: {exc}") from exc
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return decode(hint, raw)
    raise WireError(f"{where}: {hint} is not a wire type")


# -- the built-in ops' messages ----------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Empty:
    """The request of ``ping`` and ``stop``, the reply of ``stop``: no fields."""


@dataclasses.dataclass(frozen=True)
class PingReply:
    """``ping``: the service is alive, and what it serves. ``uptime_s``: seconds since it
    started; ``roots``: the docs roots it has engines for (sorted); ``http_port``: the
    MCP-over-HTTP endpoint's port, or None when it is off; ``http_error``: why it is off when it
    was asked for and could not start, else None."""

    pid: int
    version: str
    uptime_s: float
    roots: list[str]
    http_port: int | None = None
    http_error: str | None = None
