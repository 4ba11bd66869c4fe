"""The stdio relay's replay (mcp/relay.py), with links that stand in for service sessions: when a
link dies, the next one gets initialize (its reply swallowed), initialized and every request not
yet answered, in order; answered and cancelled requests are not sent again; the agent sees each
answer once."""

from __future__ import annotations

import io
import json
import queue
import threading
from typing import Any

from markdown_memory.mcp.relay import Link, Relay


class FakeLink(Link):
    """A session that records what it is sent; ``answer``/``die`` drive what it sends back."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.sent: list[dict[str, Any]] = []
        self._out: queue.Queue[bytes] = queue.Queue()
        self.ended = False

    def send(self, line: bytes) -> None:
        if self.ended:
            raise BrokenPipeError("gone")
        self.sent.append(json.loads(line))

    def readline(self) -> bytes:
        # blocks until the test sends something: a session the test leaves open keeps its
        # (daemon) pump waiting, instead of failing a later test with a stray thread error
        return self._out.get()

    def answer(self, request_id: Any) -> None:
        self._out.put((json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"n": request_id}}) + "\n").encode())

    def die(self) -> None:
        self.ended = True
        self._out.put(b"")

    def end_input(self) -> None:
        self._out.put(b"")

    def close(self) -> None:
        self.ended = True


class Output(io.BytesIO):
    """stdout of the relay: the lines it wrote, and an event per line."""

    def __init__(self) -> None:
        super().__init__()
        self.wrote = threading.Semaphore(0)

    def flush(self) -> None:
        self.wrote.release()

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.getvalue().splitlines()]


def line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode()


def request(request_id: int, method: str = "tools/call") -> bytes:
    return line({"jsonrpc": "2.0", "id": request_id, "method": method, "params": {}})


def test_a_dead_session_is_resumed_with_what_was_unanswered() -> None:
    first, second = FakeLink("first"), FakeLink("second")
    links = iter([second])
    out = Output()
    relay = Relay(lambda: next(links), lambda: FakeLink("child"), out)
    relay.start(first)
    relay.forward(request(0, "initialize"))
    first.answer(0)
    assert out.wrote.acquire(timeout=10)
    relay.forward(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    relay.forward(request(1))
    first.answer(1)
    assert out.wrote.acquire(timeout=10)
    relay.forward(request(2))
    relay.forward(request(3))
    relay.forward(line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}))
    first.die()
    relay.forward(request(4))  # sent after the death: on the new session
    # the new session got initialize, initialized, then the unanswered request 2 and the new 4
    for _ in range(100):
        if [m.get("id") for m in second.sent if "id" in m] == [0, 2, 4]:
            break
        threading.Event().wait(0.05)
    assert [m.get("method") for m in second.sent] == ["initialize", "notifications/initialized", "tools/call",
                                                     "tools/call"]
    assert [m.get("id") for m in second.sent if "id" in m] == [0, 2, 4]
    second.answer(0)  # the replayed initialize's reply: swallowed
    second.answer(2)
    second.answer(4)
    assert out.wrote.acquire(timeout=10) and out.wrote.acquire(timeout=10)
    assert [m["id"] for m in out.messages()] == [0, 1, 2, 4]  # each answer once, initialize's once
    assert relay.switches == 1


def test_no_service_to_resume_on_runs_the_child() -> None:
    from markdown_memory.service.client import ServiceUnavailable

    first, child = FakeLink("first"), FakeLink("child")

    def refuse() -> Link:
        raise ServiceUnavailable("none")

    out = Output()
    relay = Relay(refuse, lambda: child, out)
    relay.start(first)
    relay.forward(request(0, "initialize"))
    relay.forward(request(5))
    first.die()
    for _ in range(100):
        if len(child.sent) == 2:
            break
        threading.Event().wait(0.05)
    assert [m.get("id") for m in child.sent] == [0, 5]
    child.answer(0)
    child.answer(5)
    assert out.wrote.acquire(timeout=10)
    assert [m["id"] for m in out.messages()] == [5]
