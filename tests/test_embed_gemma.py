"""The EmbeddingGemma embedder's input/output handling, end to end on a tiny stand-in model.

``build_tiny_gemma`` writes a real ONNX graph with the pinned model's interface (inputs
``input_ids``/``attention_mask`` int64, output ``sentence_embedding`` float32 ``[b, 768]``, weights
in an external ``model_q4.onnx_data`` file) and a word-level ``tokenizer.json`` with ``<bos>``/``<eos>``.
The graph mean-pools rows of a random table, so the expected vector of any input can be computed
here from the word ids alone: that checks the prompts, truncation, padding and normalisation.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from markdown_memory.embed import download as dl  # noqa: E402
from markdown_memory.embed.base import Embedder  # noqa: E402
from markdown_memory.embed.files import STAMP_NAME, FileSpec, sha256_file  # noqa: E402
from markdown_memory.embed.gemma import QUERY_PREFIX, load_gemma  # noqa: E402
from markdown_memory.errors import EmbedderUnavailableError  # noqa: E402

DIM = 768
SPECIAL = ["<pad>", "<eos>", "<bos>", "<unk>"]
WORDS = ["task:", "search", "result", "|", "query:", "title:", "none", "text:", "install", "linux",
         "how", "do", "i", "on", "pricing", "plans", "setup", "guide", "hello", "world", ">"]
VOCAB = {w: i for i, w in enumerate(SPECIAL + WORDS)}
REVISION = "0123456789abcdef0123456789abcdef01234567"


def build_tiny_gemma(folder: Path, seed: int = 0) -> tuple[dl.Manifest, np.ndarray]:
    """Write onnx/model_q4.onnx(+_data) and tokenizer.json into ``folder``; return (manifest, table)."""
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    (folder / "onnx").mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.WordLevel(VOCAB, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(
        single="<bos> $A <eos>", special_tokens=[("<bos>", VOCAB["<bos>"]), ("<eos>", VOCAB["<eos>"])]
    )
    tok.save(str(folder / "tokenizer.json"))

    table = np.random.default_rng(seed).standard_normal((len(VOCAB), DIM)).astype(np.float32)
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["emb"], axis=0),
        helper.make_node("Cast", ["attention_mask"], ["maskf"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["maskf", "axis_last"], ["mask3"]),
        helper.make_node("Mul", ["emb", "mask3"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "axis1"], ["summed"], keepdims=0),
        helper.make_node("ReduceSum", ["maskf", "axis1"], ["count"], keepdims=1),
        helper.make_node("Div", ["summed", "count"], ["sentence_embedding"]),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny_gemma",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", DIM])],
        initializer=[
            numpy_helper.from_array(table, "table"),
            numpy_helper.from_array(np.array([-1], dtype=np.int64), "axis_last"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save_model(model, str(folder / "onnx" / "model_q4.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="model_q4.onnx_data", size_threshold=1024)
    names = ("onnx/model_q4.onnx", "onnx/model_q4.onnx_data", "tokenizer.json")
    files = tuple(FileSpec(n, (folder / n).stat().st_size, sha256_file(folder / n)) for n in names)
    manifest = dl.Manifest(
        preset="embeddinggemma", repo_id="test-org/tiny-gemma", revision=REVISION,
        folder=f"tiny-gemma-{REVISION[:12]}", onnx_file=names[0], tokenizer_file=names[2], files=files,
        weights_prefix="tiny-gemma",
    )
    return manifest, table


def expected_vector(table: np.ndarray, text: str, max_len: int = 512) -> np.ndarray:
    """What the pipeline should produce for ``text``: <bos> words <eos>, truncated, mean, normalised."""
    ids = [VOCAB["<bos>"]] + [VOCAB.get(w, VOCAB["<unk>"]) for w in text.split()][: max_len - 2] + [VOCAB["<eos>"]]
    v = table[ids].mean(axis=0)
    return (v / np.linalg.norm(v)).astype(np.float32)


@pytest.fixture
def tiny(tmp_path: Path):
    src = tmp_path / "src-model"
    manifest, table = build_tiny_gemma(src)
    cache = dl.models_root() / manifest.folder
    shutil.copytree(src, cache)
    return manifest, table, cache


def test_load_and_embed_end_to_end(tiny):
    manifest, table, cache = tiny
    emb = load_gemma(threads=1, manifest=manifest)
    assert isinstance(emb, Embedder)
    assert emb.name == "embeddinggemma" and emb.dimension == DIM
    assert emb.weights_id == "tiny-gemma:" + ":".join(s.sha256[:12] for s in manifest.files)
    assert (cache / STAMP_NAME).exists()

    q = emb.embed_query("how do i install on linux")
    assert q.shape == (DIM,) and q.dtype == np.float32
    # the model sees EmbeddingGemma's retrieval-query prompt in front of the query (spelled out
    # here, not taken from the module, so a changed or dropped prompt fails), not the bare query
    np.testing.assert_allclose(q, expected_vector(table, "task: search result | query: how do i install on linux"),
                               atol=1e-5)
    assert float(q @ expected_vector(table, "how do i install on linux")) < 0.99

    doc = emb.document_text("setup > linux", "install guide")
    assert doc == "title: setup > linux | text: install guide"
    assert emb.document_text("", "pricing plans") == "title: none | text: pricing plans"
    vecs = emb.embed_texts([doc])
    np.testing.assert_allclose(vecs[0], expected_vector(table, doc), atol=1e-5)


def test_batches_keep_order_and_truncate_at_512(tiny):
    manifest, table, _ = tiny
    emb = load_gemma(threads=1, manifest=manifest)
    texts = ["hello", "install " * 700, "world hello search", "", "pricing plans " * 50] * 10
    out = emb.embed_texts(texts)
    assert out.shape == (len(texts), DIM)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    for text, row in zip(texts, out):
        np.testing.assert_allclose(row, expected_vector(table, text), atol=1e-5)
    assert emb.embed_texts([]).shape == (0, DIM)


def test_missing_model_names_command_and_folder():
    with pytest.raises(EmbedderUnavailableError) as info:
        load_gemma()
    msg = str(info.value)
    assert "markdown-memory --download-model" in msg
    assert str(dl.models_root() / dl.GEMMA_MANIFEST.folder) in msg
    assert "onnx/model_q4.onnx_data" in msg and "MARKDOWN_MEMORY_MODEL_DIR" in msg


def test_model_dir_override_flat_layout(tmp_path, monkeypatch):
    src = tmp_path / "built"
    manifest, table = build_tiny_gemma(src)
    flat = tmp_path / "flat"
    flat.mkdir()
    for spec in manifest.files:
        shutil.copy(src / spec.path, flat / os.path.basename(spec.path))
    monkeypatch.setenv("MARKDOWN_MEMORY_MODEL_DIR", str(flat))
    emb = load_gemma(manifest=manifest)
    np.testing.assert_allclose(emb.embed_query("hello"), expected_vector(table, QUERY_PREFIX + "hello"), atol=1e-5)
    assert not (dl.models_root() / manifest.folder).exists()  # nothing written to the cache


def test_override_dir_with_bad_file_is_unavailable(tmp_path, monkeypatch):
    manifest, _ = build_tiny_gemma(tmp_path / "m")
    path = tmp_path / "m" / "tokenizer.json"
    path.write_bytes(path.read_bytes()[:-10])
    monkeypatch.setenv("MARKDOWN_MEMORY_MODEL_DIR", str(tmp_path / "m"))
    with pytest.raises(EmbedderUnavailableError, match="tokenizer.json has .* bytes, expected"):
        load_gemma(manifest=manifest)


def test_unloadable_verified_graph_is_a_load_error_not_a_download(tmp_path, monkeypatch):
    manifest, _ = build_tiny_gemma(tmp_path / "m")
    bad = tmp_path / "m" / "onnx" / "model_q4.onnx"
    bad.write_bytes(b"this is not an onnx protobuf")
    files = tuple(FileSpec(s.path, (tmp_path / "m" / s.path).stat().st_size, sha256_file(tmp_path / "m" / s.path))
                  for s in manifest.files)
    manifest = dl.Manifest(**{**manifest.__dict__, "files": files})
    monkeypatch.setenv("MARKDOWN_MEMORY_MODEL_DIR", str(tmp_path / "m"))
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # any network use would fail loudly
    with pytest.raises(EmbedderUnavailableError, match="onnxruntime could not load verified model file"):
        load_gemma(manifest=manifest)
