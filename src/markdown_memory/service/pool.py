"""The service's engines: one ``Engine(settings, background=True)`` per docs root database,
created on first use and kept for the service's life, so each root has one writer (its catch-up
and index runs) and one in-memory vector cache however many clients use it.

The key is the client's settings in wire form (``Settings.to_wire()``: the database path plus
every setting), so two clients that differ in a setting (an exclude glob, the embedder) get their
own engine. Each embedding model is loaded once for the process however many roots use it
(``embed.loader.share_models``).

Importing this module imports the engine (numpy, sqlite-vec, ...): the service does so only on
the first request that needs an engine, after its socket is bound.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable

from ..config import Settings
from ..embed.loader import share_models
from ..engine import Engine

log = logging.getLogger("markdown_memory.service")

#: called with each new engine (the watcher hooks in here); returns a callable that stops what it
#: started (called at shutdown), or None
EngineHook = Callable[[Engine], Callable[[], object] | None]


class Pool:
    """Engines by settings (see module docstring). Thread-safe."""

    def __init__(self, on_new_engine: EngineHook | None = None) -> None:
        share_models(True)
        self._lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}
        self._engines: dict[str, Engine] = {}
        self._stoppers: list[Callable[[], object]] = []
        self._on_new_engine = on_new_engine

    @staticmethod
    def key(settings: Settings) -> str:
        """The pool key of ``settings``: its wire form as canonical JSON."""
        return json.dumps(settings.to_wire(), sort_keys=True)

    def engine(self, settings: Settings, *, foreground: bool = False) -> Engine:
        """The engine for ``settings`` (created on first use; concurrent first calls for one key
        wait for one creation, other keys are not held up). ``foreground``: the CLI's kind (its
        ``search`` indexes changed files before answering and says so, as in process; no watcher
        of its own), kept beside the background engine of the MCP sessions and the hook. Raises
        what ``Engine`` raises."""
        key = ("cli " if foreground else "") + self.key(settings)
        with self._lock:
            engine = self._engines.get(key)
            if engine is not None:
                return engine
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                engine = self._engines.get(key)
            if engine is not None:
                return engine
            # a foreground engine keeps the passage vectors in memory too: the same neighbours and
            # distances as the CLI's vec0 scan (store/vectors.knn re-scores its shortlist exactly)
            engine = Engine(settings, vectors_in_memory=True) if foreground else Engine(settings, background=True)
            log.info("serving %s (database %s, embedder %s)", settings.docs_root, settings.db_path,
                     engine.settings.embedder)
            hook = None if foreground else self._on_new_engine
            stopper = hook(engine) if hook is not None else None
            with self._lock:
                self._engines[key] = engine
                if stopper is not None:
                    self._stoppers.append(stopper)
            return engine

    def engines(self) -> list[Engine]:
        """Every engine made so far."""
        with self._lock:
            return list(self._engines.values())

    def roots(self) -> list[str]:
        """The docs roots served (sorted, each once)."""
        return sorted({str(engine.root) for engine in self.engines()})

    def busy(self) -> bool:
        """True while any engine's index run is going (the service is not idle then)."""
        return any(engine.indexing for engine in self.engines())

    def shutdown(self, timeout: float) -> bool:
        """Stop watchers and every engine's background work; True when all stopped within
        ``timeout`` seconds each."""
        with self._lock:
            stoppers, self._stoppers = self._stoppers, []
        for stop in stoppers:
            try:
                stop()
            except Exception as exc:  # noqa: BLE001 - the others still get stopped
                log.warning("a watcher did not stop cleanly: %s", exc)
        engines = self.engines()
        for engine in engines:
            engine.request_stop()
        return all([engine.shutdown(timeout) for engine in engines])
