"""The engine as the MCP server uses it: searches never block on a model that is still loading.

Test hook (not a user feature): ``MARKDOWN_MEMORY_TEST_SLOW_MODEL_SECONDS`` makes the server's
model warm-up sleep that many seconds before loading, to prove that the handshake and the first
search do not wait for the model.
"""

from __future__ import annotations

import logging
import os
import threading
import time

from .config import Settings
from .engine import Engine

log = logging.getLogger("markdown_memory.server")

#: How long a search waits for a model that is still loading before answering keyword-only.
MODEL_WAIT_SECONDS = 5.0


class ServerEngine(Engine):
    """An engine whose searches never block on a model that is still loading.

    The first call that wants vectors starts loading the model in a background thread and waits
    at most ``model_wait`` seconds; meanwhile searches are keyword-only and say so. Indexing
    waits for the model (it needs it to embed).
    """

    def __init__(self, settings: Settings, model_wait: float = MODEL_WAIT_SECONDS) -> None:
        super().__init__(settings)
        self.model_wait = model_wait
        self._model_ready = threading.Event()
        self._model_thread: threading.Thread | None = None
        self._model_start_lock = threading.Lock()
        #: set when an index run has parsed every file (it is about to embed, or done)
        self.parsed = threading.Event()
        #: set when the server shuts down: index runs stop waiting for the model
        self.stopping = threading.Event()

    def start_model_warmup(self) -> None:
        """Start loading the model in a daemon thread (once); no-op for ``--embedder none``."""
        if self.settings.embedder == "none":
            return
        with self._model_start_lock:
            if self._model_thread is None:
                self._model_thread = threading.Thread(target=self._load_model, name="mm-model-load", daemon=True)
                self._model_thread.start()

    def _load_model(self) -> None:
        try:
            delay = float(os.environ.get("MARKDOWN_MEMORY_TEST_SLOW_MODEL_SECONDS") or 0)
            if delay > 0:
                log.info("test hook: model load sleeps %.1f s", delay)
                time.sleep(delay)
            Engine.embedder(self)
        except Exception:  # Engine.embedder records expected failures itself
            log.exception("loading the embedding model failed")
        finally:
            self._model_ready.set()

    @property
    def model_loading(self) -> bool:
        return self._model_thread is not None and not self._model_ready.is_set()

    def embedder(self):  # type: ignore[override]
        if self.settings.embedder == "none":
            return None
        if self._embedder is not None or self._embedder_error is not None:
            return self._embedder
        self.start_model_warmup()
        self._model_ready.wait(self.model_wait)
        return self._embedder

    def _embedder_for_index(self):  # type: ignore[override]
        self.parsed.set()  # called by index_tree only after every file was parsed
        self.start_model_warmup()
        while not self._model_ready.wait(0.2):
            if self.stopping.is_set():
                return None
        return self._embedder

    def _keyword_only_message(self) -> str | None:
        message = super()._keyword_only_message()
        if message is None and self.model_loading:
            return (f"keyword-only for now: the {self.settings.embedder} model is still loading "
                    "(semantic search warming up); retry in a few seconds for semantic results")
        return message
