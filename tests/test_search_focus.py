"""Questions as users write them (search/focus.py): context sentences and a pasted log around
the question do not move the answer; a short query is searched as typed. Ranking with the real
MiniLM model on tests/fixtures/search, and keyword-only."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import indexed_engine, top
from markdown_memory.models import SearchRequest
from markdown_memory.search.focus import focus

FIXTURES = Path(__file__).parent / "fixtures" / "search"

QUESTIONS = [
    ("how can I make big file transfers go faster?", ("faq.md", "Frequently Asked Questions > Why are my uploads slow?")),
    ("is my data protected before it leaves my computer?", ("faq.md", "Frequently Asked Questions > Does widget encrypt my data?")),
    ("is HTTPS_PROXY respected?", ("config.md", "Proxy settings")),
    ("what does --dry-run do?", ("cli.md", "Widget Command Line > Flags")),
]
PREAMBLES = [
    "Hi there! I have been using this tool at work for about a month and my whole team loves it. "
    "We are migrating our deployment scripts this week and I got stuck on one thing.",
    "Sorry if this is a dumb question, I searched the issue tracker and the wiki first. Our manager "
    "wants the pipeline finished before Friday.",
]
LOGS = [
    "2026-03-14 12:00:01,234 INFO  [scheduler] job 4411 started on worker-7 (pid 18233)\n"
    "2026-03-14 12:00:02,101 WARN  [scheduler] queue depth 312 exceeds soft limit 300\n"
    "2026-03-14 12:00:09,877 INFO  [scheduler] job 4411 finished in 8.6 s, exit status 0\n"
    "2026-03-14 12:00:10,002 DEBUG [gc] sweep freed 1,204 objects from /var/lib/app/cache/shard-03",
    "Traceback (most recent call last):\n"
    '  File "/home/me/project/run.py", line 88, in <module>\n'
    "    main()\n"
    '  File "/home/me/project/run.py", line 41, in main\n'
    "    result = pipeline.execute(batch, workers=4)\n"
    "RuntimeError: worker pool exhausted after 3 restarts",
]


@pytest.fixture(scope="module")
def engine(tmp_path_factory, minilm):
    root = tmp_path_factory.mktemp("focus-docs") / "docs"
    shutil.copytree(FIXTURES, root)
    eng = indexed_engine(root, "minilm", minilm)
    yield eng
    eng.close()


@pytest.fixture(scope="module")
def keyword_engine(tmp_path_factory):
    root = tmp_path_factory.mktemp("focus-docs-kw") / "docs"
    shutil.copytree(FIXTURES, root)
    eng = indexed_engine(root, "none")
    yield eng
    eng.close()


def _long_forms(question: str) -> list[str]:
    return ([f"{p} {question}" for p in PREAMBLES] + [f"{log}\n{question}" for log in LOGS]
            + [f"{PREAMBLES[0]}\n{LOGS[0]}\n{question}"])


@pytest.mark.parametrize("question, expected", QUESTIONS)
def test_context_and_pasted_logs_do_not_push_the_answer_down(engine, question, expected):
    assert top(engine.search(SearchRequest(question))) == expected
    for text in _long_forms(question):
        assert top(engine.search(SearchRequest(text))) == expected, text


@pytest.mark.parametrize("question, expected", QUESTIONS[2:])
def test_long_prompts_keep_their_answer_keyword_only(keyword_engine, question, expected):
    assert top(keyword_engine.search(SearchRequest(question))) == expected
    for text in _long_forms(question):
        assert top(keyword_engine.search(SearchRequest(text))) == expected, text


@pytest.mark.parametrize("query", [
    "how do I set the log level", "WIDGET_TIMEOUT_SECONDS", "--no-cache", "数据库迁移",
    "What is the default timeout? And can I change it per request?", "The sync stopped. Any idea why?",
])
def test_a_short_query_is_searched_as_typed(query):
    assert focus(query).text == query
    assert not focus(query).focused


def test_the_question_is_found_and_the_logs_exact_tokens_kept():
    text = ("I moved the config last week. Since then every run prints:\n"
            "2026-03-14 12:00:01 ERROR [main] failed to open /home/me/a/b/c.toml: ENOENT\n"
            "    at loadConfig (src/config.js:12:5)\n"
            "How do I point it at the new file with --config?")
    f = focus(text)
    assert f.focused
    assert f.asked.startswith("How do I point it at the new file with --config?")
    assert "ENOENT" in f.text and "loadConfig" in f.text and "--config" in f.text
    for noise in ("2026", "12:00:01", "c.toml", "config.js:12:5", "last week", "ERROR"):
        assert noise not in f.text.split("\n")[-1], noise


def test_an_error_code_in_a_compiler_message_is_kept():
    f = focus("error[E0425]: cannot find value `x` in this scope\n --> src/main.rs:2:5\nwhat does this mean")
    assert "E0425" in f.text and "cannot find value in this scope" in f.text
    assert "main.rs" not in f.text
