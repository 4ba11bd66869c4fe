"""Model download, verification and stamp, against a local fake Hub (no Hugging Face access).

``FakeHub`` is an ``http.server`` on 127.0.0.1 serving huggingface-hub's download routes for one
repository at one revision: ``HEAD``/``GET /{repo}/resolve/{revision}/{file}`` with ``X-Repo-Commit``,
``ETag`` and ``Content-Length``, and ``Range: bytes=N-`` answered with 206 (what hf_hub_download
uses to resume after a dropped connection). Knobs make it drop a connection half-way, flip a byte
or serve the wrong length, and it records every request.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("onnx")

from markdown_memory.embed import download as dl  # noqa: E402
from markdown_memory.embed import files as files_mod  # noqa: E402
from markdown_memory.embed.files import STAMP_NAME, stamp_is_current  # noqa: E402
from markdown_memory.embed.gemma import load_gemma  # noqa: E402
from markdown_memory.errors import EmbedderUnavailableError, ModelDownloadError  # noqa: E402
from test_embed_gemma import QUERY_PREFIX, build_tiny_gemma, expected_vector  # noqa: E402

SRC = Path(__file__).resolve().parents[1] / "src"


class FakeHub:
    def __init__(self, repo_id: str, revision: str, blobs: dict[str, bytes]) -> None:
        self.repo_id, self.revision, self.blobs = repo_id, revision, blobs
        self.requests: list[tuple[str, str, str | None]] = []  # (method, file, Range)
        self.drop_once: set[str] = set()  # first GET: half the body, then close
        self.corrupt_once: set[str] = set()  # first GET: one byte flipped
        self.wrong_size: set[str] = set()  # every HEAD/GET: 7 extra bytes
        self.delay = 0.0  # seconds to sleep before each GET body
        self.lock = threading.Lock()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def _file(self) -> str | None:
                prefix = f"/{hub.repo_id}/resolve/{hub.revision}/"
                path = self.path.split("?")[0]
                return path[len(prefix):] if path.startswith(prefix) and path[len(prefix):] in hub.blobs else None

            def _body(self, name: str) -> bytes:
                data = hub.blobs[name]
                return data + b"garbage" if name in hub.wrong_size else data

            def _headers(self, name: str, status: int, length: int, extra: dict[str, str]) -> None:
                import hashlib

                self.send_response(status)
                self.send_header("X-Repo-Commit", hub.revision)
                self.send_header("ETag", '"' + hashlib.sha256(hub.blobs[name]).hexdigest() + '"')
                self.send_header("Content-Length", str(length))
                self.send_header("Accept-Ranges", "bytes")
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()

            def do_HEAD(self):
                name = self._file()
                with hub.lock:
                    hub.requests.append(("HEAD", name or self.path, None))
                if name is None:
                    self.send_response(404)
                    self.send_header("X-Error-Code", "EntryNotFound")
                    self.end_headers()
                    return
                self._headers(name, 200, len(self._body(name)), {})

            def do_GET(self):
                name = self._file()
                rng = self.headers.get("Range")
                with hub.lock:
                    hub.requests.append(("GET", name or self.path, rng))
                    drop = name in hub.drop_once and not hub.drop_once.discard(name)
                    corrupt = name in hub.corrupt_once and not hub.corrupt_once.discard(name)
                if name is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                body = bytearray(self._body(name))
                if corrupt:
                    body[len(body) // 2] ^= 0xFF
                total = len(body)
                start = int(rng.split("=")[1].split("-")[0]) if rng else 0
                part = bytes(body[start:])
                if rng:
                    self._headers(name, 206, len(part), {"Content-Range": f"bytes {start}-{total - 1}/{total}"})
                else:
                    self._headers(name, 200, total, {})
                if hub.delay:
                    time.sleep(hub.delay)
                if drop:
                    self.wfile.write(part[: len(part) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.wfile.write(part)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def gets(self, name: str) -> list[str | None]:
        return [r for m, f, r in self.requests if m == "GET" and f == name]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(autouse=True)
def _hf_logs_to_current_stderr():
    """huggingface-hub binds its log handler to the stderr of its first use; under pytest's capture
    that stream is closed by the next test, so rebind it to each test's stderr."""
    import logging

    for handler in logging.getLogger("huggingface_hub").handlers:
        if isinstance(handler, logging.StreamHandler):
            handler.stream = sys.stderr  # not setStream(): it flushes the closed stream
    yield


@pytest.fixture
def tiny(tmp_path):
    manifest, table = build_tiny_gemma(tmp_path / "upstream")
    blobs = {s.path: (tmp_path / "upstream" / s.path).read_bytes() for s in manifest.files}
    return manifest, table, blobs


@pytest.fixture
def hub(tiny):
    manifest, _, blobs = tiny
    server = FakeHub(manifest.repo_id, manifest.revision, blobs)
    yield server
    server.close()


def dead_endpoint() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


def cache_dir(manifest) -> Path:
    return dl.models_root() / manifest.folder


def test_fresh_download_then_load(tiny, hub, capsys):
    manifest, table, blobs = tiny
    info = dl.ensure_model(manifest=manifest, endpoint=hub.url)
    assert info.dir == cache_dir(manifest)
    assert info.total_bytes == sum(len(b) for b in blobs.values())
    for spec in manifest.files:
        path = info.files[spec.path]
        assert path.is_file() and not path.is_symlink()
        assert path.read_bytes() == blobs[spec.path]
        assert len(hub.gets(spec.path)) == 1
    assert stamp_is_current(info.dir, manifest.files)
    # a second call only stats: no request, no lock needed
    n = len(hub.requests)
    dl.ensure_model(manifest=manifest, endpoint=hub.url)
    assert len(hub.requests) == n
    emb = load_gemma(manifest=manifest)
    import numpy as np

    np.testing.assert_allclose(emb.embed_query("hello"), expected_vector(table, QUERY_PREFIX + "hello"), atol=1e-5)
    assert capsys.readouterr().out == ""  # never anything on stdout


def test_download_model_summary(tiny, hub):
    manifest = tiny[0]
    text = dl.download_model("embeddinggemma", manifest=manifest, endpoint=hub.url)
    assert str(cache_dir(manifest)) in text and "MB" in text and "tiny-gemma:" in text


def test_hf_endpoint_env_is_read_at_call_time(tiny, hub, monkeypatch):
    manifest = tiny[0]
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    dl.ensure_model(manifest=manifest)
    assert hub.gets("tokenizer.json")


def test_resume_after_dropped_connection(tiny, hub, monkeypatch):
    """huggingface-hub resumes a dropped transfer with ``Range`` from the bytes it has written
    (whole 10 MB chunks in production; 4 KiB here so the 75 KB test file spans several)."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "DOWNLOAD_CHUNK_SIZE", 4096)
    manifest, _, blobs = tiny
    name = "onnx/model_q4.onnx_data"
    hub.drop_once.add(name)
    info = dl.ensure_model(manifest=manifest, endpoint=hub.url)
    assert info.files[name].read_bytes() == blobs[name]
    ranges = hub.gets(name)
    assert len(ranges) == 2 and ranges[0] is None
    offset = int(ranges[1].removeprefix("bytes=").rstrip("-"))  # resumed, not restarted
    assert 0 < offset <= len(blobs[name]) // 2 and offset % 4096 == 0


def test_corrupted_download_is_fetched_again(tiny, hub):
    manifest, _, blobs = tiny
    hub.corrupt_once.add("tokenizer.json")
    info = dl.ensure_model(manifest=manifest, endpoint=hub.url)
    assert info.files["tokenizer.json"].read_bytes() == blobs["tokenizer.json"]
    assert len(hub.gets("tokenizer.json")) == 2


def test_corrupted_local_byte_is_repaired(tiny, hub):
    manifest, _, blobs = tiny
    info = dl.ensure_model(manifest=manifest, endpoint=hub.url)
    path = info.files["onnx/model_q4.onnx_data"]
    data = bytearray(path.read_bytes())
    data[100] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(EmbedderUnavailableError, match="sha256"):
        load_gemma(manifest=manifest)  # loading never repairs or downloads
    assert len(hub.gets("onnx/model_q4.onnx_data")) == 1
    dl.ensure_model(manifest=manifest, endpoint=hub.url)
    assert path.read_bytes() == blobs["onnx/model_q4.onnx_data"]
    assert len(hub.gets("onnx/model_q4.onnx_data")) == 2
    assert len(hub.gets("tokenizer.json")) == 1  # good files are not fetched again


def test_wrong_size_fails_after_one_retry(tiny, hub):
    manifest = tiny[0]
    hub.wrong_size.add("tokenizer.json")
    with pytest.raises(ModelDownloadError) as info:
        dl.ensure_model(manifest=manifest, endpoint=hub.url)
    msg = str(info.value)
    assert "tokenizer.json has" in msg and "expected" in msg and "MARKDOWN_MEMORY_MODEL_DIR" in msg
    assert len(hub.gets("tokenizer.json")) == 2
    assert not (cache_dir(manifest) / STAMP_NAME).exists()


def test_unreachable_endpoint_fails_fast_with_offline_hint(tiny):
    manifest = tiny[0]
    start = time.monotonic()
    with pytest.raises(ModelDownloadError) as info:
        dl.ensure_model(manifest=manifest, endpoint=dead_endpoint())
    assert time.monotonic() - start < 5
    msg = str(info.value)
    assert "cannot reach" in msg and "keeping the onnx/ paths" in msg
    assert str(cache_dir(manifest)) in msg and "MARKDOWN_MEMORY_MODEL_DIR" in msg


def test_real_manifest_unreachable_hub_fails_fast(monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", dead_endpoint())
    start = time.monotonic()
    with pytest.raises(ModelDownloadError, match="offline"):
        dl.download_model("embeddinggemma")
    assert time.monotonic() - start < 5


_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from markdown_memory.embed.download import Manifest, ensure_model
from markdown_memory.embed.files import FileSpec
m = json.loads(sys.argv[2])
m["files"] = tuple(FileSpec(**f) for f in m["files"])
info = ensure_model(manifest=Manifest(**m), endpoint=sys.argv[3])
print(info.dir)
"""


def test_two_processes_download_once(tiny, hub):
    manifest = tiny[0]
    hub.delay = 0.3
    payload = json.dumps({**manifest.__dict__, "files": [f.__dict__ for f in manifest.files]})
    procs = [
        subprocess.Popen([sys.executable, "-c", _CHILD, str(SRC), payload, hub.url],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.strip() == str(cache_dir(manifest))
    for spec in manifest.files:
        assert len(hub.gets(spec.path)) == 1, hub.requests


def test_offline_copy_without_network_writes_stamp(tiny, tmp_path, monkeypatch):
    manifest, table, _ = tiny
    import shutil

    shutil.copytree(tmp_path / "upstream", cache_dir(manifest))
    monkeypatch.setenv("HF_ENDPOINT", dead_endpoint())
    info = dl.ensure_model(manifest=manifest)  # download=True, but nothing to fetch
    assert stamp_is_current(info.dir, manifest.files)
    emb = load_gemma(manifest=manifest)
    assert emb.embed_query("hello").shape == (768,)


def _count_hashes(monkeypatch) -> list[str]:
    seen: list[str] = []
    real = files_mod.sha256_file

    def counting(path):
        seen.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(files_mod, "sha256_file", counting)
    return seen


def test_stamp_skips_hashing_until_touch(tiny, hub, monkeypatch):
    manifest = tiny[0]
    info = dl.ensure_model(manifest=manifest, endpoint=hub.url)
    hashed = _count_hashes(monkeypatch)
    dl.ensure_model(manifest=manifest, download=False)
    assert hashed == []
    path = info.files["tokenizer.json"]
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # `touch`
    assert not stamp_is_current(info.dir, manifest.files)
    dl.ensure_model(manifest=manifest, download=False)
    assert sorted(hashed) == ["model_q4.onnx", "model_q4.onnx_data", "tokenizer.json"]
    assert stamp_is_current(info.dir, manifest.files)


def test_content_change_with_mtime_restored_is_detected(tiny, hub):
    manifest, _, blobs = tiny
    info = dl.ensure_model(manifest=manifest, endpoint=hub.url)
    path = info.files["tokenizer.json"]
    st = path.stat()
    time.sleep(0.05)  # ctime has jiffy granularity on some kernels
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x20  # same size
    with open(path, "r+b") as fh:  # rewrite in place: same inode
        fh.write(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_mtime_ns == st.st_mtime_ns and path.stat().st_size == st.st_size
    assert not stamp_is_current(info.dir, manifest.files)
    with pytest.raises(EmbedderUnavailableError, match="tokenizer.json fails sha256"):
        dl.ensure_model(manifest=manifest, download=False)
    dl.ensure_model(manifest=manifest, endpoint=hub.url)  # repair
    assert path.read_bytes() == blobs["tokenizer.json"]


def test_stale_folders_logged_once_not_deleted(tiny, hub, caplog, monkeypatch):
    manifest = tiny[0]
    old = dl.models_root() / "embeddinggemma-300m-onnx-000000000000"
    old.mkdir(parents=True)
    (old / "x.bin").write_bytes(b"x" * 2_000_000)
    monkeypatch.setattr(dl, "_logged_stale", False)
    with caplog.at_level("WARNING", logger="markdown_memory.embed"):
        dl.ensure_model(manifest=manifest, endpoint=hub.url)
        dl.ensure_model(manifest=manifest, endpoint=hub.url)
    stale = [r for r in caplog.records if "other model folders" in r.getMessage()]
    assert len(stale) == 1 and str(old) in stale[0].getMessage() and "2.0 MB" in stale[0].getMessage()
    assert (old / "x.bin").exists()


def test_cli_download_model_against_fake_hub(tiny, hub, monkeypatch, capsys):
    from markdown_memory import cli

    manifest = tiny[0]
    monkeypatch.setitem(dl.MANIFESTS, "embeddinggemma", manifest)
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    assert cli.main(["--download-model"]) == 0
    out = capsys.readouterr().out
    assert str(cache_dir(manifest)) in out and "MB" in out
    assert stamp_is_current(cache_dir(manifest), manifest.files)


def test_cli_download_model_unreachable_exits_nonzero(monkeypatch, capsys):
    from markdown_memory import cli

    monkeypatch.setenv("HF_ENDPOINT", dead_endpoint())
    start = time.monotonic()
    assert cli.main(["--download-model"]) != 0
    assert time.monotonic() - start < 5
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "cannot reach" in captured.err and "MARKDOWN_MEMORY_MODEL_DIR" in captured.err


def test_download_model_none_and_minilm():
    assert "no model" in dl.download_model("none")
    try:
        from markdown_memory.embed.minilm import verify_minilm_files

        verify_minilm_files()
    except EmbedderUnavailableError:
        pytest.skip("minilm packages not installed")
    summary = dl.download_model("minilm")
    assert "minilm: verified" in summary
    # it says which graph runs: the int8 one derived into the cache, with its size
    assert "int8 arithmetic" in summary and str(dl.models_root() / "derived") in summary and "MB)" in summary
