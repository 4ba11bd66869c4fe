"""Shared fixtures: a temp docs root, an engine over it, the real MiniLM model, the CLI run
in-process, and an indexed slice of the shared eval corpus.

Every test gets its own database (``MARKDOWN_MEMORY_DB`` is never the user's) and its own
model cache root, so nothing outside temp folders is written (the int8 MiniLM graph, derived
once per session, is shared through a symlink).

Each run is isolated from every other run on the machine: ``pytest_configure`` makes one private
folder per run (``mm-tests-XXXX`` in the system temp dir), points pytest's base temp there
(instead of the shared ``pytest-of-USER`` root that every run prunes and resets) and points
``TMPDIR`` (so ``tempfile`` here and in child processes) into it; it is removed just after the
run ends, by a detached ``rm -rf`` (``_remove_later``), so pytest exits with its summary.
``--basetemp`` given on the command line is kept. Tests that another user must reach (case 022,
run as ``nobody``) make a temp folder of their own inside it (the run folder is mode 0755).
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
# The workplace's shared material sits beside the checkout; MARKDOWN_MEMORY_SHARED_DIR points
# elsewhere (e.g. a clone made in another folder).

# Property tests run the same examples on every run (CI must not fail on a new random draw);
# MM_HYPOTHESIS_RANDOM=1 explores fresh examples while developing, and a failure found that way
# becomes an @example of its test.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("repeatable", derandomize=True, database=None)
_hypothesis_settings.register_profile("explore")
_hypothesis_settings.load_profile("explore" if os.environ.get("MM_HYPOTHESIS_RANDOM") == "1" else "repeatable")

SHARED = Path(os.environ.get("MARKDOWN_MEMORY_SHARED_DIR") or Path(__file__).resolve().parents[2] / "shared")
EVAL_CORPUS = SHARED / "eval-corpus"
EVAL_QUERIES = SHARED / "eval-queries-dev.jsonl"


#: This run's private temp folder (set by pytest_configure).
RUN_ROOT: Path | None = None


@pytest.hookimpl(tryfirst=True)  # before pytest's tmpdir plugin reads --basetemp
def pytest_configure(config: pytest.Config) -> None:
    global RUN_ROOT
    RUN_ROOT = Path(tempfile.mkdtemp(prefix="mm-tests-"))
    RUN_ROOT.chmod(0o755)
    atexit.register(_remove_later, RUN_ROOT)
    if config.option.basetemp is None:
        config.option.basetemp = str(RUN_ROOT / "pytest")
    tmp = RUN_ROOT / "tmp"
    tmp.mkdir(mode=0o755)
    os.environ["TMPDIR"] = str(tmp)
    tempfile.tempdir = None  # tempfile reads TMPDIR again
    # no resident service for the whole run, module- and session-scoped fixtures included (they
    # are set up before the per-test ``_isolated_env``); tests that want one switch it on
    os.environ["MARKDOWN_MEMORY_SERVICE"] = "off"
    os.environ["MARKDOWN_MEMORY_RUNTIME_DIR"] = str(RUN_ROOT / "run")
    # Tests play a user pressing Ctrl-C at a terminal. A run started with `&` by a non-interactive
    # shell (CI's two suites at once) inherits SIGINT ignored, and an ignored signal stays ignored
    # in every child: the CLI would never see the Ctrl-C. A handler, unlike SIG_IGN, is reset to
    # the default on exec, so the children get the terminal's behaviour back.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _remove_later(folder: Path) -> None:
    """Remove this run's temp root after pytest has exited: a whole run leaves ~100,000 files
    (databases, model links, docs copies), and deleting them in this process kept pytest alive
    for tens of seconds after its summary on a busy machine. A detached ``rm -rf`` in its own
    session does it instead; where there is no ``rm``, it is removed here."""
    try:
        subprocess.Popen(["rm", "-rf", "--", str(folder)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        shutil.rmtree(folder, True)


def run_temp(prefix: str) -> Path:
    """A fresh folder inside this run's private temp root."""
    return Path(tempfile.mkdtemp(prefix=prefix))


_derived: Path | None = None


def derived_models() -> Path:
    """One folder of derived graphs (the int8-arithmetic MiniLM, ~2 s to build) for the whole run."""
    global _derived
    if _derived is None:
        _derived = run_temp("mm-test-derived-")
    return _derived


def link_derived(models: Path) -> Path:
    """Create model cache root ``models`` whose ``derived/`` folder is the session's shared one;
    returns ``models``."""
    models.mkdir(parents=True, exist_ok=True)
    link = models / "derived"
    if not link.exists():
        link.symlink_to(derived_models(), target_is_directory=True)
    return models


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("mm-home")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    # the HTTP token and root registry (mcp/http_access.py) of the test, not the user's
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("MARKDOWN_MEMORY_MODEL_CACHE", str(home / "models"))
    # No test reaches a resident service by accident (one per user, shared by every run on the
    # machine): commands work in process unless a test turns the service on with its own
    # runtime folder (tests/test_service*.py).
    monkeypatch.setenv("MARKDOWN_MEMORY_SERVICE", "off")
    monkeypatch.setenv("MARKDOWN_MEMORY_RUNTIME_DIR", str(home / "run"))
    link_derived(home / "models")
    for name in ("MARKDOWN_MEMORY_DB", "MARKDOWN_MEMORY_DOCS_DIR", "CLAUDE_PROJECT_DIR", "MARKDOWN_MEMORY_EMBEDDER",
                 "MARKDOWN_MEMORY_EXCLUDE", "MARKDOWN_MEMORY_AUTO_INDEX", "MARKDOWN_MEMORY_WATCH", "MARKDOWN_MEMORY_CONFIG_DIR",
                 "MARKDOWN_MEMORY_HTTP_PORT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def docs_root(tmp_path: Path) -> Path:
    """A copy of tests/fixtures/guide (small hand-written docs) in a temp dir."""
    root = tmp_path / "docs"
    shutil.copytree(FIXTURES / "guide", root)
    return root


def indexed_engine(root: Path, embedder: str, minilm=None):
    """An Engine over the docs already in ``root``, its database beside it
    (``root.parent / "index.db"``), indexed with no failed file. With ``embedder="minilm"`` the
    session's model (the ``minilm`` fixture) is shared instead of loaded again."""
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine

    eng = Engine(Settings.load(root, root.parent / "index.db", embedder),
                 embedder=minilm if embedder == "minilm" else None)
    report = eng.index()
    assert not report.failed, report.failed
    return eng


def top(answer) -> tuple[str, str]:
    """``(file_path, heading_path)`` of a search answer's (``SearchAnswer``) first hit."""
    hit = answer.results[0]
    return hit.file_path, hit.heading_path


@pytest.fixture(scope="session")
def minilm(tmp_path_factory: pytest.TempPathFactory):
    """The real all-MiniLM-L6-v2 int8 embedder (loaded once per test session).

    A session fixture is set up before the autouse ``_isolated_env`` of the test that first asks
    for it, so the model cache it builds into is set here (a folder of its own, sharing the
    session's derived graphs): not the user's cache, which every pytest run on the machine shares."""
    from markdown_memory.embed import get_embedder

    models = link_derived(tmp_path_factory.mktemp("mm-session-models"))
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MARKDOWN_MEMORY_MODEL_CACHE", str(models))
        for name in ("MARKDOWN_MEMORY_INT8_COMPUTE", "MARKDOWN_MEMORY_MINILM_DIR"):
            env.delenv(name, raising=False)
        return get_embedder("minilm")


@pytest.fixture
def make_engine(tmp_path: Path, minilm) -> Callable[..., object]:
    """``make_engine(root, embedder="minilm")`` -> Engine with a private database."""
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine

    engines = []

    def factory(root: Path, embedder: str = "minilm", db: Path | None = None):
        settings = Settings.load(root, db or (tmp_path / f"index-{len(engines)}.db"), embedder)
        # the session-wide model is shared instead of loaded again
        engine = Engine(settings, embedder=minilm if embedder == "minilm" else None)
        engines.append(engine)
        return engine

    yield factory
    for e in engines:
        e.close()


@dataclass
class CliResult:
    """What a CLI run left: exit status and the text it wrote to stdout and stderr."""

    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def cli_main(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., CliResult]:
    """``cli_main(*args, env=None, cwd=None) -> CliResult``: ``markdown_memory.cli.main(args)``
    in this process, with ``env`` set (a value of None unsets the variable) and in ``cwd`` for the
    run, its stdout and stderr captured. Same argv, environment, output and exit status as the
    console script without a Python start and imports per command; tests about the process
    itself (entry point, a closed pipe, another user, signals) still run a subprocess."""
    from markdown_memory.cli import main

    root = logging.getLogger()

    def call(*args: str, env: dict[str, str | None] | None = None, cwd: Path | None = None) -> CliResult:
        # main's logging.basicConfig configures a root logger with no handler, as in a fresh
        # process: pytest's capture handlers are set aside for the run, so log lines land on the
        # captured stderr (where tests count them) at the level the command line asks for
        handlers, level = list(root.handlers), root.level
        with monkeypatch.context() as patch:
            for key, value in (env or {}).items():
                if value is None:
                    patch.delenv(key, raising=False)
                else:
                    patch.setenv(key, value)
            if cwd is not None:
                patch.chdir(cwd)
            capsys.readouterr()
            for handler in handlers:
                root.removeHandler(handler)
            try:
                code = main(list(args))
            finally:
                for handler in list(root.handlers):
                    root.removeHandler(handler)
                for handler in handlers:
                    root.addHandler(handler)
                root.setLevel(level)
            out, err = capsys.readouterr()
        return CliResult(code, out, err)

    return call


def require_eval_corpus() -> None:
    if not EVAL_CORPUS.is_dir() or not EVAL_QUERIES.is_file():
        pytest.skip(f"shared eval corpus not found at {EVAL_CORPUS} (only present beside the project checkout)")


#: The eval-corpus sub-folders of the quick eval (tests/test_eval_quick.py; its frozen baselines
#: eval/baseline-quick-*.json are for exactly these) and of the MCP eval (test_server_eval.py).
EVAL_QUICK_FOLDERS = ["httpx", "ripgrep", "runbooks"]


@pytest.fixture(scope="session")
def eval_quick_db(tmp_path_factory: pytest.TempPathFactory, minilm) -> Path:
    """A database of ``EVAL_QUICK_FOLDERS`` of the shared eval corpus indexed with the session's
    MiniLM (~25 s, so once per session). Tests only read it: one that serves it through another
    process or could write to it copies it first (``copy_db``)."""
    require_eval_corpus()
    return index_folders(EVAL_CORPUS, EVAL_QUICK_FOLDERS, tmp_path_factory.mktemp("eval-quick") / "index.db", minilm)


def index_folders(corpus: Path, folders: list[str], db: Path, minilm) -> Path:
    """``db`` holding the given sub-folders of ``corpus`` indexed with the session's MiniLM, no
    file failed."""
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine

    eng = Engine(Settings.load(corpus, db, "minilm"), embedder=minilm)
    try:
        for folder in folders:
            report = eng.index(folder)
            assert not report.failed, report.failed
    finally:
        eng.close()
    return db


def score_queries(corpus: Path, db: Path, embedder: str, minilm, queries: list[dict]) -> tuple[list, dict]:
    """(per-question results, summary) of ``queries`` over the index ``db`` of ``corpus``, scored
    by ``markdown_memory.evaluation`` as ``markdown-memory eval`` does (``embedder`` "minilm"
    shares the session's model; "none" is keyword-only)."""
    from markdown_memory import evaluation
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine

    eng = Engine(Settings.load(corpus, db, embedder), embedder=minilm if embedder == "minilm" else None)
    try:
        results = evaluation.run_queries(eng, queries)
    finally:
        eng.close()
    return results, evaluation.summarise(results)


def copy_db(db: Path, dest: Path) -> Path:
    """Copy the closed SQLite database ``db`` (and a WAL file, if one is left) to ``dest``."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(db, dest)
    wal = Path(str(db) + "-wal")
    if wal.exists():
        shutil.copyfile(wal, str(dest) + "-wal")
    return dest


def _minilm_installed() -> bool:
    from markdown_memory.embed.minilm import verify_minilm_files
    from markdown_memory.errors import EmbedderUnavailableError

    try:
        verify_minilm_files()
        return True
    except EmbedderUnavailableError:
        return False


#: Marks a test module or test that needs the real MiniLM files installed (skips otherwise).
requires_minilm = pytest.mark.skipif(not _minilm_installed(), reason="minilm packages not installed")
