"""The service's typed messages (``service/wire.py``): a request or reply dataclass crosses the
wire and comes back equal, and an object that does not fit is refused naming the field, not
read into a wrong value."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from markdown_memory.cli.search_op import SearchCall, SearchFailure, SearchReply
from markdown_memory.config import Settings
from markdown_memory.hook.service_op import HookCall, HookReply
from markdown_memory.request import SearchRequest
from markdown_memory.search_text import CliSearch, SearchOutput
from markdown_memory.service.wire import PingReply, WireError, decode, encode_object


def _through_the_wire(value: object) -> object:
    return json.loads(json.dumps(encode_object(value)))


@pytest.fixture()
def settings(tmp_path: Path) -> Settings:
    return Settings.load(str(tmp_path), None, "none")


def test_messages_cross_the_wire_unchanged(settings: Settings) -> None:
    params = CliSearch(SearchRequest("install", top_k=3, max_tokens=500, tags=("ops", "linux"), heading="Guide"),
                       SearchOutput(json=True, db_chosen=True))
    for value in (SearchCall(settings, params, program="mm", cwd="/here"),
                  SearchReply(answer={"results": [], "confidence": "none"}, stderr="warned\n"),
                  SearchReply(failure=SearchFailure({"error": {"message": "bad"}}, "error: bad", 2)),
                  HookCall(settings, "how do I?", "s1", "codex", 900, "off"), HookReply(None, "locked"),
                  HookReply("## a.md · A\ntext"),
                  PingReply(pid=1, version="0.1", uptime_s=2.5, roots=["/docs"], http_port=None)):
        assert decode(type(value), _through_the_wire(value)) == value


def test_fields_with_defaults_may_be_absent(settings: Settings) -> None:
    assert decode(HookReply, {}) == HookReply(None, None)
    assert decode(HookCall, {"settings": settings.to_wire(), "prompt": "q"}) == HookCall(settings, "q")


@dataclass(frozen=True)
class _Counts:
    count: int
    ratio: float = 0.0
    names: tuple[str, ...] = ()


@pytest.mark.parametrize(("data", "field"), [
    ({}, "count"),                               # missing
    ({"count": "3"}, "count"),                   # a string for an int
    ({"count": True}, "count"),                  # a bool is not a number here
    ({"count": 1, "ratio": "x"}, "ratio"),
    ({"count": 1, "names": "ab"}, "names"),      # a string is not a list
    ({"count": 1, "names": ["a", 2]}, "names"),
])
def test_an_object_that_does_not_fit_is_refused_naming_the_field(data: dict[str, object], field: str) -> None:
    with pytest.raises(WireError, match=f"_Counts.{field}"):
        decode(_Counts, data)


def test_numbers_read_as_their_field_type() -> None:
    assert decode(_Counts, {"count": 2, "ratio": 1, "names": ["a"]}) == _Counts(2, 1.0, ("a",))


def test_unreadable_settings_are_refused(settings: Settings) -> None:
    with pytest.raises(WireError, match="HookCall.settings"):
        decode(HookCall, {"settings": {"docs_root": 3}})
    with pytest.raises(WireError, match="HookCall.settings"):
        decode(HookCall, {"settings": "nope"})


def test_a_search_call_whose_request_does_not_fit_is_refused(settings: Settings) -> None:
    """The search op's arguments cross as ``CliSearch.to_wire()``: a value the request schema
    refuses (out of bounds, wrong type, blank query) is a WireError naming the field, not a
    search with a default in its place."""
    good = json.loads(json.dumps(encode_object(SearchCall(settings, CliSearch(SearchRequest("install"))))))
    for bad in ({"top_k": 0}, {"top_k": "3"}, {"query": "  "}):
        data = {**good, "params": {**good["params"], "request": {**good["params"]["request"], **bad}}}
        with pytest.raises(WireError, match="SearchCall.params"):
            decode(SearchCall, data)
