"""The hook's gate: which search hits, if any, answer the prompt well enough to be injected.

Two tests, both measured on the two dev sets and eval/hook-quiet-prompts.jsonl
(scripts/bench_hook.py prints the figures; docs/prompt-hook.md has them):

* The prompt asks something (:func:`asks_docs`): not a slash command (``/compact``) or a shell
  line (``!make``), and its first word, after a polite opening ("please", "can you"), is not
  a task verb or a reply ("run the tests", "fix the build", "refactor ...", "thanks", "ok"),
  and it does not speak of the user's own code ("our", "this repo").
  Agents are told to *do* things far more often than to *look up* things; only the second
  gains from documentation in the prompt.
* The answer is likely right (:func:`select`): the first hit with text has a calibrated
  ``p_answer`` (search/calibration.py) at or above the hook's bar for the search's mode, the
  lowest at which the hook's added text held an answering section >= 85% of the time on the
  dev sets' left-out projects (docs/prompt-hook.md has the curve). Below it the hook says
  nothing. Keyword-only, no bar reaches 85% (the calibration's ``hook`` bar is null), so the
  hook run in process (keyword-only) injects nothing and says why at debug level; the resident
  service, searching with vectors, injects. A long prompt (context, a pasted log, the question at the end) is searched by what
  it asks (search/focus.py), as every search is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..text import WORD, fts_text

if TYPE_CHECKING:  # pragma: no cover
    from ..models import Hit, SearchAnswer

#: First words of a prompt that asks the agent to do something (or answers it), not to look
#: something up: the imperative verbs of coding tasks, git chores and replies.
TASK_WORDS = frozenset("""
    add apply build bump change check clean close commit configure continue convert copy create debug delete
    deploy document edit extract finish fix format generate go implement improve install keep lint make merge
    migrate move open optimise optimize port proceed publish pull push rebase redo refactor remove rename replace
    rerun reset resolve restart retry revert review rewrite run save set simplify split squash start stop
    summarise summarize tag test translate try undo update upgrade use write
    benchmark bisect draft expose handle increase log mock read wait wire
    hi hello hey thanks thank ok okay yes no nope yep sure great cool good nice perfect lgtm
""".split())
#: Words that make the prompt about the user's own code or project ("where do we validate
#: tokens in this repo?", "which of our services ..."), which the docs root does not describe.
OWN_CODE = frozenset("our ours repo codebase".split())
#: Polite or connecting openings skipped before the first word is judged ("please run ...");
#: "can", "could", "would" and "will" only when "you" follows ("can you run ..." is a task,
#: "can I run ..." a question).
OPENINGS = frozenset("please pls kindly now then also and so let lets just".split())
ASKING = frozenset("can could would will".split())
#: The share of injected texts that must hold an answering section (issue 34; scripts/calibrate.py
#: picks each mode's bar for it, or none when no bar reaches it).
HOOK_PRECISION = 0.85


def asks_docs(prompt: str) -> bool:
    """True when the prompt may be a question the docs answer (see module docstring)."""
    text = prompt.strip()
    if not text or text[0] in "/!":
        return False
    words = [w for w in WORD.findall(fts_text(text)) if w.isascii() and len(w) > 1]
    while words and (words[0] in OPENINGS or (words[0] in ASKING and words[1:2] == ["you"])):
        words = words[2:] if words[0] in ASKING else words[1:]
    if OWN_CODE.intersection(words):
        return False
    return not words or words[0] not in TASK_WORDS


def select(answer: SearchAnswer) -> list[Hit]:
    """The hits with text of ``answer`` (the search of a prompt) to add to the prompt, best first;
    empty unless the first hit with text clears the hook's bar (module docstring). The prompt
    was let through by :func:`asks_docs` before it was searched (``respond``, the hook
    command), not judged again here."""
    from ..search.calibration import hook_bar

    bar = hook_bar(not answer.keyword_only)
    with_text = [h for h in answer.results if h.content is not None]
    if bar is None or not with_text or (with_text[0].p_answer or 0.0) < bar:
        return []
    return with_text


def why_not(answer: SearchAnswer) -> str:
    """Why :func:`select` kept nothing of ``answer``, as one clause for the debug log."""
    from ..search.calibration import hook_bar

    bar = hook_bar(not answer.keyword_only)
    with_text = [h for h in answer.results if h.content is not None]
    if not with_text:
        return "the search found no section with text"
    best = with_text[0]
    if bar is None:  # no keyword-only bar reached the hook's precision on the left-out projects
        mode = "keyword-only" if answer.keyword_only else "vector"
        return (f"{mode}: no answer sure enough (no {mode} bar reached {HOOK_PRECISION:.0%} precision on the "
                f"left-out projects; best: {best.file_path} > {best.heading_path}, probability "
                f"{best.p_answer or 0.0:.2f}); the resident service with vectors injects")
    return (f"the best section ({best.file_path} > {best.heading_path}) answers with probability "
            f"{best.p_answer or 0.0:.2f}, below the hook's bar {bar:.2f}")
