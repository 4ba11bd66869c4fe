"""``markdown-memory hook``, run as Claude Code and Codex run a ``UserPromptSubmit`` hook: a
process with the hook JSON on stdin, whose stdout is empty or exactly the one answer object,
exit status 0 whatever happens (issue 15).

The hook injects only an answer whose calibrated ``p_answer`` clears its mode's bar (>= 85%
precision on the left-out projects, issue 34). Keyword-only no bar reaches that, so the hook
run in process (keyword-only) says nothing and gives its reason at debug level; what it injects
is tested through the resident service's ``hook`` op, which searches with vectors (MiniLM)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, copy_db, indexed_engine
from damage import overwrite_keyword_index_root

HOOK = [sys.executable, "-m", "markdown_memory.cli", "hook"]
TIMEOUT_QUESTION = "How long does the client wait for a server to answer before it gives up on the connection?"


@pytest.fixture(scope="module")
def _guide_index(tmp_path_factory: pytest.TempPathFactory, minilm) -> tuple[Path, Path]:
    """(docs root, database): a copy of tests/fixtures/guide indexed with the session's MiniLM,
    once for the module (no test here changes the docs)."""
    root = tmp_path_factory.mktemp("hook-guide") / "docs"
    shutil.copytree(FIXTURES / "guide", root)
    indexed_engine(root, "minilm", minilm).close()
    return root, root.parent / "index.db"


@pytest.fixture
def indexed(_guide_index: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """(docs root, database) of tests/fixtures/guide indexed with the session's MiniLM: the
    module's docs root and a copy of its database of the test's own (a hook writes its log)."""
    root, db = _guide_index
    return root, copy_db(db, tmp_path / "index.db")


def payload(prompt: str, cwd: Path, session: str = "session-1", **extra: str) -> str:
    return json.dumps({"session_id": session, "transcript_path": str(cwd / "t.jsonl"), "cwd": str(cwd),
                       "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt, **extra})


def run_hook(stdin: str, db: Path | None, *args: str, env_extra: dict[str, str] | None = None) -> tuple[dict | None, str]:
    """Run the hook process; returns (the answer object or None, stderr). Asserts exit 0 and
    that stdout is empty or exactly one JSON line of the documented form."""
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"} | (env_extra or {})
    if db is not None:
        env["MARKDOWN_MEMORY_DB"] = str(db)
    done = subprocess.run([*HOOK, *args], input=stdin, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) <= 1, done.stderr
    if not done.stdout:
        return None, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    answer = json.loads(lines[0])
    assert list(answer) == ["hookSpecificOutput"]
    assert answer["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert set(answer["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    return answer, done.stderr


def debug_reason(stdin: str, db: Path, *args: str, env_extra: dict[str, str] | None = None) -> str:
    """Run the hook in process at --log-level DEBUG; asserts exit 0 and nothing injected (the
    keyword-only hook is silent) and returns its stderr (the reason, naming the best section)."""
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"} | (env_extra or {})
    env["MARKDOWN_MEMORY_DB"] = str(db)
    done = subprocess.run([*HOOK[:-1], "--log-level", "DEBUG", "hook", *args], input=stdin, capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 0 and done.stdout == "", (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    return done.stderr


class _Service:
    """The resident service as its ``hook`` op uses it: an engine of the request's settings that
    searches with the model it loaded once (here the session's MiniLM)."""

    def __init__(self, minilm) -> None:
        self.minilm = minilm

    def engine(self, settings):
        from markdown_memory.engine import Engine

        return Engine(settings, embedder=self.minilm)


def service_hook(indexed: tuple[Path, Path], minilm, stdin: str, max_tokens: int = 800) -> dict | None:
    """What a hook client sending ``stdin`` gets from the resident service (op ``hook``,
    hook/service_op.py), searching ``indexed`` with MiniLM: the answer object or None. The
    client reads the payload and runs the gate; the service answers what passes."""
    from markdown_memory.config import Settings
    from markdown_memory.hook import gate, parse
    from markdown_memory.hook.payload import answer as hook_answer
    from markdown_memory.hook.service_op import HookCall
    from markdown_memory.hook.service_op import answer as hook_op

    root, db = indexed
    asked = parse(stdin)
    if not gate.asks_docs(asked.prompt):  # the client's gate: such a prompt never reaches the service
        return None
    out = hook_op(_Service(minilm), HookCall(Settings.load(root, db, "minilm"), asked.prompt,  # type: ignore[arg-type]
                                             asked.session_id, asked.client, max_tokens))
    assert out.failure is None, out.failure
    if not out.context:
        return None
    answer = json.loads(hook_answer(out.context))
    assert set(answer["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    return answer


def context(answer: dict | None) -> str:
    assert answer is not None, "the hook added nothing"
    return str(answer["hookSpecificOutput"]["additionalContext"])


def test_a_docs_question_gets_its_section_with_path_and_breadcrumb_then_not_again_in_that_session(indexed, minilm):
    root, db = indexed
    first = service_hook(indexed, minilm, payload(TIMEOUT_QUESTION, root))
    text = context(first)
    assert text.startswith(f"markdown-memory found these sections in its index of {root}")
    assert "## configuration.md · Configuration > Network timeouts (lines 18-21)" in text
    assert "The client waits 30 seconds" in text  # the section's own text
    # the same session asks again: that section is not injected twice
    again = service_hook(indexed, minilm, payload(TIMEOUT_QUESTION, root))
    assert again is None or "Network timeouts" not in context(again)
    # another session on the same root gets it
    other = service_hook(indexed, minilm, payload(TIMEOUT_QUESTION, root, session="session-2"))
    assert "Configuration > Network timeouts" in context(other)
    # the session memory lives beside the database, never in the docs root
    state = db.parent / "index.db.hook-sessions"
    assert len(list(state.glob("*.json"))) == 2
    assert not any("hook" in p.name for p in root.rglob("*"))


def test_keyword_only_in_process_the_hook_says_nothing_and_why(indexed):
    """Issue 34: the hook injects only above the bar giving >= 85% precision on the left-out
    projects, and no keyword-only bar reaches it. In process (keyword-only) the hook finds the
    section but injects nothing; at debug level it says why and names what it found."""
    root, db = indexed
    answer, err = run_hook(payload(TIMEOUT_QUESTION, root), db)
    assert answer is None and err == ""
    reason = debug_reason(payload(TIMEOUT_QUESTION, root), db)
    assert "keyword-only: no answer sure enough" in reason
    assert "configuration.md > Configuration > Network timeouts" in reason


def test_codex_payload_gets_the_same_answer_form(indexed, minilm):
    root, _db = indexed
    answer = service_hook(indexed, minilm, payload("Why does the server not start? The log shows EADDRINUSE", root,
                                                   turn_id="turn-1", model="gpt-5"))
    assert "## ops/troubleshooting.md · Troubleshooting > The server does not start" in context(answer)


@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]", '{"hook_event_name": "Stop", "prompt": "hi"}',
                                   '{"session_id": "s", "prompt": 42}'])
def test_a_broken_or_foreign_payload_prints_nothing_and_exits_0(stdin, indexed):
    answer, err = run_hook(stdin, indexed[1])
    assert answer is None
    assert err.startswith("markdown-memory hook: ignored the hook input")


def test_quiet_prompts_get_nothing(indexed, cli_main, monkeypatch):
    """Tasks, chores and chatter: nothing is added even when their words are in the docs
    ("run", "server", "logs", "upload" are)."""
    root, db = indexed
    quiet = ["run the tests", "please fix the failing build", "can you restart the server and check the logs?",
             "thanks!", "/compact", "refactor the upload retry loop into its own function", "git status",
             "commit this with a good message"]
    for prompt in quiet:
        monkeypatch.setattr(sys, "stdin", _Stdin(payload(prompt, root)))
        res = cli_main("hook", env={"MARKDOWN_MEMORY_DB": str(db)})
        assert res.returncode == 0 and res.stdout == "", (prompt, res.stdout)
    answer, _ = run_hook(payload("run the tests", root), db)
    assert answer is None


def test_a_never_indexed_root_gets_indexed_in_the_background_and_a_later_prompt_is_answered(docs_root, tmp_path):
    """Issue 27 point 2: the hook on a new project said "run index (or start the MCP server)"
    and did nothing. Now it starts a detached index run, says so in one line, and returns
    without waiting; a later prompt gets the section."""
    from markdown_memory.store.testing import peek_count

    db = tmp_path / "none-yet" / "index.db"
    started = time.monotonic()
    answer, err = run_hook(payload(TIMEOUT_QUESTION, docs_root), db)
    assert answer is None and time.monotonic() - started < 30
    assert "started indexing it in the background" in err, err
    deadline = time.monotonic() + 120
    later = ""
    while "Network timeouts" not in later and time.monotonic() < deadline:
        time.sleep(0.5)
        if peek_count(db, "documents") >= 4:  # keyword-only in process: it finds the section, says why it is quiet
            later = debug_reason(payload(TIMEOUT_QUESTION, docs_root, session="session-2"), db)
    assert "configuration.md > Configuration > Network timeouts" in later


def test_with_auto_index_off_the_hint_names_a_command_that_builds_what_search_uses(docs_root, tmp_path, cli_main,
                                                                                   minilm, monkeypatch):
    """The hint's command, run as written, builds a hybrid index when a model is installed
    (it built a keyword-only one)."""
    import shlex

    from markdown_memory import embed

    db = tmp_path / "none-yet" / "index.db"
    answer, err = run_hook(payload(TIMEOUT_QUESTION, docs_root), db, env_extra={"MARKDOWN_MEMORY_AUTO_INDEX": "0"})
    assert answer is None and "no index for" in err and not db.parent.exists()
    command = shlex.split(err.split("`")[1])
    assert command[1:] == ["index", str(docs_root)]
    monkeypatch.setattr(embed, "get_embedder", lambda name, *a, **k: minilm)
    done = cli_main(*command[1:], "--json", env={"MARKDOWN_MEMORY_DB": str(db)})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["keyword_only"] is False and report["vectors_embedded"] > 0


def test_docs_dir_flag_wins_over_the_payload_cwd_and_budget_is_kept(indexed, minilm, tmp_path):
    root, db = indexed
    reason = debug_reason(payload(TIMEOUT_QUESTION, tmp_path), db, "--docs-dir", str(root), "--max-tokens", "100")
    assert "configuration.md > Configuration > Network timeouts" in reason
    text = context(service_hook(indexed, minilm, payload(TIMEOUT_QUESTION, root), max_tokens=100))
    from markdown_memory.text import count_tokens

    assert count_tokens(text) <= 100
    assert "Configuration > Network timeouts" in text


def test_claude_project_dir_wins_over_a_subfolder_cwd(indexed):
    """Claude Code gives hooks CLAUDE_PROJECT_DIR; a session whose working directory is a
    subfolder must search the project's index (the one its MCP server built), not look for one
    of the subfolder."""
    root, db = indexed
    sub = root / "ops"
    assert sub.is_dir()
    reason = debug_reason(payload(TIMEOUT_QUESTION, sub), db, env_extra={"CLAUDE_PROJECT_DIR": str(root)})
    assert "configuration.md > Configuration > Network timeouts" in reason


def test_a_bad_option_still_exits_0(indexed):
    root, db = indexed
    answer, err = run_hook(payload(TIMEOUT_QUESTION, root), db, "--max-tokens", "lots")
    assert answer is None and "--max-tokens" in err


def test_unknown_arguments_never_exit_2(indexed):
    """Trial finding: `hook --bogus`, `hook extra` and `--embedder nope hook` exited 2 (argparse),
    which blocks the user's prompt. Unknown arguments after `hook` are ignored with one stderr
    line and the hook still searches; an unusable global option answers nothing, status 0."""
    root, db = indexed
    for n, extra in enumerate((["--bogus"], ["extra"], ["--max-tokens", "300", "--newer-option=1"])):
        answer, err = run_hook(payload(TIMEOUT_QUESTION, root, session=f"lenient-{n}"), db, *extra)
        assert answer is None and "ignored unrecognized arguments" in err, (extra, err)
        reason = debug_reason(payload(TIMEOUT_QUESTION, root, session=f"lenient-{n}"), db, *extra)
        assert "configuration.md > Configuration > Network timeouts" in reason, extra
    env = dict(os.environ, MARKDOWN_MEMORY_DB=str(db))
    done = subprocess.run([*HOOK[:-1], "--embedder", "nope", "hook"], input=payload(TIMEOUT_QUESTION, root),
                          capture_output=True, text=True, env=env, timeout=120)
    assert (done.returncode, done.stdout) == (0, "") and "--embedder" in done.stderr


def test_a_database_of_another_root_answers_nothing(indexed, tmp_path):
    _root, db = indexed
    other = tmp_path / "other"
    other.mkdir()
    answer, err = run_hook(payload(TIMEOUT_QUESTION, other), db)
    assert answer is None and err.startswith("markdown-memory hook: added nothing")


def test_session_files_older_than_a_day_are_removed(tmp_path):
    from markdown_memory.hook.seen import MAX_AGE_SECONDS, SessionMemory, state_dir

    db = tmp_path / "index.db"
    old = SessionMemory(db, "old-session")
    old.add([("a.md", "A")])
    assert old.seen() == {("a.md", "A")}
    assert old.path is not None
    stale = time.time() - MAX_AGE_SECONDS - 60
    os.utime(old.path, (stale, stale))
    SessionMemory(db, "new-session").add([("b.md", "B")])
    assert not old.path.exists()
    assert [p.name for p in state_dir(db).glob("*.json")] == [SessionMemory(db, "new-session").path.name]  # type: ignore[union-attr]


class _Stdin:
    """A stand-in for sys.stdin holding ``text``."""

    def __init__(self, text: str) -> None:
        self.text = text

    def read(self) -> str:
        return self.text


def test_bench_hook_prints_every_figure(tmp_path, capsys):
    """scripts/bench_hook.py end to end on the guide fixture (keyword-only index built by it)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("markdown_memory_bench_hook", Path(__file__).resolve().parents[1]
                                                  / "scripts" / "bench_hook.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    guide = Path(__file__).parent / "fixtures" / "guide"
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"query": TIMEOUT_QUESTION, "expect": [{"path": "configuration.md", "line": 20}]})
                         + "\n" + json.dumps({"query": "How do I export tasks to a calendar?", "expect": []}) + "\n")
    out = tmp_path / "bench.json"
    assert bench.main(["--set", f"guide={guide}:{questions}", "--db-dir", str(tmp_path / "db"),
                       "--latency-runs", "2", "--json-out", str(out)]) == 0
    printed = capsys.readouterr().out
    # the bench's hook is keyword-only, which injects nothing (no keyword-only bar reaches 85%)
    assert "hit 0.0% of 1 questions" in printed and "quiet injected" in printed and "p95" in printed
    figures = json.loads(out.read_text())["sets"]["guide"]
    assert figures["quality"]["hit"] == 0.0 and figures["quality"]["quiet"] >= 40
    assert {"questions", "quiet", "all"} <= set(figures["latency"])


def test_concurrent_hooks_of_one_session_lose_no_section(tmp_path):
    """Two hooks of one session at once (Codex launches matching hooks concurrently): each
    write is kept, under the session's lock."""
    import threading

    from markdown_memory.hook.seen import SessionMemory

    db = tmp_path / "index.db"
    threads = [threading.Thread(target=SessionMemory(db, "same").add, args=([(f"{i}.md", "H")],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert SessionMemory(db, "same").seen() == {(f"{i}.md", "H") for i in range(8)}
    assert SessionMemory(db, "other").seen() == set()


def test_the_hook_leaves_the_library_log_level_as_it_was(indexed, cli_main, monkeypatch):
    """The hook quiets the library's logs for its own run only: a command run after it in the
    same process (tests, library use) still logs warnings."""
    import logging

    logger = logging.getLogger("markdown_memory")
    before = logger.level
    monkeypatch.setattr(sys, "stdin", _Stdin(payload(TIMEOUT_QUESTION, indexed[0])))
    assert cli_main("hook", env={"MARKDOWN_MEMORY_DB": str(indexed[1])}).returncode == 0
    assert logger.level == before


@pytest.mark.parametrize("asked, used", [("0", 100), ("5", 100), ("-3", 100), ("100000", 20000)])
def test_an_out_of_range_budget_is_clamped_and_said_on_one_stderr_line(indexed, minilm, cli_main, monkeypatch, asked,
                                                                       used):
    """Trial finding: `hook --max-tokens 0/5/-3/100000` was clamped silently (docs: 100-20,000).
    The hook still answers (never exit 2) and says which budget it used."""
    from markdown_memory.text import count_tokens

    root, db = indexed
    monkeypatch.setattr(sys, "stdin", _Stdin(payload(TIMEOUT_QUESTION, root, session=f"clamp-{asked}")))
    res = cli_main("hook", f"--max-tokens={asked}", env={"MARKDOWN_MEMORY_DB": str(db)})
    assert res.returncode == 0
    assert res.stderr.splitlines() == [f"markdown-memory hook: --max-tokens {asked} is outside 100-20000; used {used}"]
    assert res.stdout == ""  # keyword-only in process: silent (test_keyword_only_in_process_...)
    text = context(service_hook(indexed, minilm, payload(TIMEOUT_QUESTION, root, session=f"clamp-{asked}"), used))
    assert "Configuration > Network timeouts" in text and count_tokens(text) <= used


def test_debug_log_says_why_a_prompt_got_nothing(indexed):
    """Trial: "how do I configure validators in pydantic?" got nothing, with no reason even at
    --log-level DEBUG. Each skip now says why on stderr at debug level (and only there)."""
    root, db = indexed
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"} | {"MARKDOWN_MEMORY_DB": str(db)}
    for prompt, why in [("what is the weather on the moon in summer?", "hook added nothing: "),
                        ("run the tests", "hook skipped the prompt: it is a command, a reply or a task")]:
        done = subprocess.run([*HOOK[:-1], "--log-level", "DEBUG", "hook"], input=payload(prompt, root),
                              capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0 and done.stdout == ""
        assert why in done.stderr, done.stderr
        quiet, err = run_hook(payload(prompt, root), db)
        assert quiet is None and err == ""


def test_questions_about_the_users_own_code_and_more_task_verbs_get_nothing(indexed, minilm):
    """Quiet prompts of eval/hook-quiet-prompts.jsonl that got sections: a question about the
    user's own code ("our", "this repo") and tasks opening with a verb the list lacked (through
    the service, which would inject a docs question)."""
    root, db = indexed
    for prompt in ["which of our services still set the client timeout?",
                   "how is the network timeout configured in this repo?",
                   "mock the server in the tests so the timeout is not hit",
                   "read the logs and tell me why the connection timed out"]:
        assert service_hook(indexed, minilm, payload(prompt, root)) is None, prompt
        assert "hook skipped the prompt" in debug_reason(payload(prompt, root), db), prompt
    assert context(service_hook(indexed, minilm, payload(TIMEOUT_QUESTION, root)))  # a docs question gets its section


def test_the_client_makes_the_hook_s_lines_of_the_service_s_reply(tmp_path, monkeypatch):
    """The service answers data (the text to add, or a failure's cause); the hook client prints
    the lines the hook prints in process: the agent's answer object, or the one stderr line."""
    from markdown_memory import messages
    from markdown_memory.config import Settings
    from markdown_memory.hook import parse, remote
    from markdown_memory.hook.payload import answer
    from markdown_memory.hook.service_op import HookReply
    from markdown_memory.service import client

    replies = [HookReply(context="## a.md · A\ntext"), HookReply(failure="database is locked"), HookReply()]
    sent = []

    def call(op, request, reply_type, **_kw):
        assert op == "hook" and reply_type is HookReply
        sent.append(request)
        return replies.pop(0)

    monkeypatch.setattr(client, "mode", lambda: "auto")
    monkeypatch.setattr(client, "call", call)
    asked = parse(payload("how do I set the timeout?", tmp_path, session="s9", turn_id="t1"))
    settings = Settings.load(tmp_path, tmp_path / "i.db", "none")
    assert remote.via_service(settings, asked, 700) == (answer("## a.md · A\ntext"), None)
    assert remote.via_service(settings, asked, 700) == (None, messages.hook_failed("database is locked"))
    assert remote.via_service(settings, asked, 700) == (None, None)
    first = sent[0]
    assert (first.prompt, first.session_id, first.client, first.max_tokens) == (asked.prompt, "s9", "codex", 700)


def test_damage_the_service_s_hook_meets_is_moved_aside_at_once(tmp_path):
    """The hook op answers a failure line for a damaged database (never raises for a prompt),
    and the damaged file goes aside now, as under the MCP tools: later prompts search the rebuild."""
    from types import SimpleNamespace

    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine
    from markdown_memory.hook.service_op import HookCall, answer

    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(300):  # enough pages that the keyword index has a root page of its own
        (docs / f"topic{i}.md").write_text(f"# Topic {i}\n\nThe zebrafish{i} setting controls part {i}.\n\n"
                                           f"## Details\n\n{'Words about this part. ' * 20}\n")
    db = tmp_path / "index.db"
    engine = Engine(Settings.load(docs, db, "none"))
    try:
        engine.index()
        engine.close()  # this thread's connection: the hook's search opens the file as it is on disk
        overwrite_keyword_index_root(db)  # opening the file still works
        service = SimpleNamespace(engine=lambda settings: engine)
        reply = answer(service, HookCall(engine.settings, "what does the zebrafish7 setting control?"))  # type: ignore[arg-type]
        assert reply.context is None and reply.failure
        assert list(tmp_path.glob("index.db.corrupt-*")), "the damaged file was not moved aside"
    finally:
        engine.shutdown()
