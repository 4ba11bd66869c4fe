"""Loading the configured embedder at most once, in the foreground or in the background.

``ModelLoader(preset, threads)`` loads on the first call that needs a vector (a CLI process).
``ModelLoader(..., background=True)`` (the MCP server) loads in a daemon thread started by
:meth:`ModelLoader.start` or by the first :meth:`for_search`, which waits at most
``wait_seconds`` and meanwhile answers None (keyword-only, and ``loading`` says why); an index
run waits for the model (:meth:`for_index`) unless asked to stop. A model passed in
(``embedder=``) is used as it is: tests share one loaded model this way.

Test hook (not a user feature): ``MARKDOWN_MEMORY_TEST_SLOW_MODEL_SECONDS`` makes a background
load sleep that many seconds first, to prove that the handshake and the first search do not
wait for the model.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import EmbedderUnavailableError, ModelNotInstalledError, sentence_of
from ..text import short_cause
from .base import Embedder
from .query_cache import QueryVectorCache

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

log = logging.getLogger("markdown_memory.embed")

#: How long a search waits for a model that is still loading before answering keyword-only.
MODEL_WAIT_SECONDS = 5.0
#: How often an index run waiting for the model checks whether it was asked to stop (seconds).
STOP_POLL_SECONDS = 0.2


class SharedModels:
    """The models of one process keyed by (preset, threads), each loaded once however many
    loaders ask for it: the resident service serves many docs roots (one engine each) and loads
    each preset once (:func:`share_models`). A failed load is not kept (the next asks again)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key_locks: dict[tuple[str, int | None], threading.Lock] = {}
        self._models: dict[tuple[str, int | None], Embedder] = {}

    def get(self, preset: str, threads: int | None, load: Callable[[str, int | None], Embedder]) -> Embedder:
        """The model of ``preset`` and ``threads``, loaded by ``load(preset, threads)`` on the first
        call (concurrent first calls wait for one load). Raises what ``load`` raises."""
        key = (preset, threads)
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            model = self._models.get(key)
            if model is None:
                model = load(preset, threads)
                self._models[key] = model
            return model

    def __len__(self) -> int:
        with self._lock:
            return len(self._models)


#: the process's shared models, or None (the default: each loader loads its own)
_shared: SharedModels | None = None


def share_models(enabled: bool = True) -> SharedModels | None:
    """Turn on (or off) one model per (preset, threads) for every loader of this process from
    now on; returns the cache (None when turned off). The resident service turns it on."""
    global _shared
    _shared = (_shared or SharedModels()) if enabled else None
    return _shared


class ModelLoader:
    """The embedder of one preset (see module docstring). Thread-safe."""

    def __init__(self, preset: str, threads: int | None = None, *, embedder: Embedder | None = None,
                 background: bool = False, wait_seconds: float = MODEL_WAIT_SECONDS) -> None:
        self.preset = preset
        self.threads = threads
        self.background = background
        self.wait_seconds = wait_seconds
        self._embedder = embedder
        self._error: str | None = None
        self._not_installed = False
        self._warned = False  # the keyword-only note was printed (for_search)
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self.query_vectors = QueryVectorCache()
        if embedder is not None or preset == "none":
            self._ready.set()

    # -- state ----------------------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder | None:
        """The loaded model, or None (not loaded yet, keyword-only, or it failed: ``error``)."""
        return self._embedder

    @property
    def error(self) -> str | None:
        """Why the model cannot load, with the fix (None: loaded, not tried, or keyword-only)."""
        return self._error

    @property
    def not_installed(self) -> bool:
        """True when the load failed because the model's files are not there at all."""
        return self._not_installed

    @property
    def loading(self) -> bool:
        """True while a background load is under way."""
        return self._thread is not None and not self._ready.is_set()

    @property
    def settled(self) -> bool:
        """True once the model loaded or failed (or was never wanted)."""
        return self._embedder is not None or self._error is not None or self.preset == "none"

    # -- loading ----------------------------------------------------------------------------
    def load(self) -> Embedder | None:
        """Load now in this thread (at most once); None when the preset is "none" or the load
        failed (``error`` says why). Never raises."""
        if self.preset == "none":
            return None
        with self._lock:
            if not self.settled:
                from . import get_embedder

                try:
                    if _shared is not None:
                        self._embedder = _shared.get(self.preset, self.threads, get_embedder)
                    else:
                        self._embedder = get_embedder(self.preset, self.threads)
                except EmbedderUnavailableError as exc:
                    self._error = sentence_of(exc)  # a ProgramSentence stays one: each answer words it for its reader
                    self._not_installed = isinstance(exc, ModelNotInstalledError)
                    log.info("%s", exc)  # a search says it on stderr (for_search)
                except Exception as exc:  # onnxruntime/tokenizers failures on verified files
                    self._error = f"the {self.preset} model failed to load: {exc}"
                    log.info("%s", self._error)
            self._ready.set()
        return self._embedder

    def start(self) -> None:
        """Background mode: start loading in a daemon thread (once). Otherwise a no-op."""
        if not self.background or self.settled:
            return
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._load_in_background, name="mm-model-load", daemon=True)
                self._thread.start()

    def _load_in_background(self) -> None:
        try:
            delay = float(os.environ.get("MARKDOWN_MEMORY_TEST_SLOW_MODEL_SECONDS") or 0)
            if delay > 0:
                log.info("test hook: model load sleeps %.1f s", delay)
                time.sleep(delay)
            self.load()
        except Exception:  # load() records expected failures itself
            log.exception("loading the embedding model failed")
        finally:
            self._ready.set()

    def for_search(self) -> Embedder | None:
        """The model for a query vector: loads it (foreground), or starts the background load
        and waits at most ``wait_seconds`` for it."""
        if self.settled or not self.background:
            found = self.load() if not self.settled else self._embedder
        else:
            self.start()
            self._ready.wait(self.wait_seconds)
            found = self._embedder
        self.note_keyword_only()
        return found

    def note_keyword_only(self) -> None:
        """A search's stderr note, once, when the model could not load (read, links and map
        refresh the index but do not search: they say nothing); the full fix is in `status` and
        `--download-model`."""
        if self._error and not self._warned:
            self._warned = True
            log.warning("keyword-only search: %s", short_cause(self._error, 300))

    def query_vector(self, embedder: Embedder, query: str) -> np.ndarray:
        """float32 ``[dimension]`` vector of ``query`` from ``embedder`` (the one :meth:`for_search`
        returned), through the process's :class:`.query_cache.QueryVectorCache`: a repeated
        query is not embedded again."""
        return self.query_vectors.vector(embedder, query)

    def for_index(self, should_stop: Callable[[], bool] | None = None) -> Embedder | None:
        """The model for an index run: waits for it; None when it cannot load or when
        ``should_stop()`` turns true while a background load is still going."""
        if not self.background:
            return self.load()
        self.start()
        while not self._ready.wait(STOP_POLL_SECONDS):
            if should_stop is not None and should_stop():
                return None
        return self._embedder

    def expected_weights_id(self) -> str | None:
        """``weights_id`` of the loaded model, else what the preset would load when that is
        known without loading it (None: unknown, or keyword-only)."""
        if self._embedder is not None:
            return self._embedder.weights_id
        if self.preset == "none":
            return None
        from .base import expected_weights_id

        return expected_weights_id(self.preset)
