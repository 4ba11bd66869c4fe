"""The hook's gate: which search hits, if any, answer the prompt well enough to be injected.

Two tests, both measured on the two dev sets and eval/hook-quiet-prompts.jsonl
(scripts/bench_hook.py prints the figures; docs/prompt-hook.md has them):

* The prompt asks something (:func:`asks_docs`): not a slash command (``/compact``) or a shell
  line (``!make``), and its first word, after a polite opening ("please", "can you"), is not
  a task verb or a reply ("run the tests", "fix the build", "refactor ...", "thanks", "ok"),
  and it does not speak of the user's own code ("our", "this repo").
  Agents are told to *do* things far more often than to *look up* things; only the second
  gains from documentation in the prompt.
* The section holds the prompt (:func:`passes`): the search's confidence is not ``none``, and
  the section's path, breadcrumb and text hold at least MIN_COVERED distinct content words of
  the prompt (another form of a word counts: ``timeouts`` for ``timeout``). A prompt of fewer
  content words passes only with confidence ``high`` (a rare identifier of the prompt is in
  the section) and every word held. With keyword search alone the engine's confidence is
  ``low`` for almost any prompt ("hi" included); the count of words held is what separates a
  question its docs answer from chatter that shares a word with some page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..text import WORD, fts_text

if TYPE_CHECKING:  # pragma: no cover
    from ..models import Hit

#: distinct content words of the prompt the section must hold
MIN_COVERED = 3

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


def content_words(text: str) -> set[str]:
    """The prompt's words that carry its topic: keyword-index forms (case-folded, CJK as
    bigrams) that are not stop words, of three letters or more (any length for CJK)."""
    from ..search.focus import focus  # the search package: only once a prompt is searched
    from ..search.query import STOPWORDS

    text = focus(text).text  # a pasted log's words are not the prompt's topic
    return {w for w in WORD.findall(fts_text(text)) if w not in STOPWORDS and (len(w) >= 3 or not w.isascii())}


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


def covered(words: set[str], hit: Hit) -> set[str]:
    """The ``words`` that the hit's path, breadcrumb and text hold (or another form of)."""
    from ..search.query import stem_prefix

    held = set(WORD.findall(fts_text(f"{hit.file_path}\n{hit.heading_path}\n{hit.content or hit.preview}")))
    out = set()
    for w in words:
        stem = stem_prefix(w)
        if w in held or (stem is not None and any(h.startswith(stem) for h in held)):
            out.add(w)
    return out


def passes(words: set[str], hit: Hit, confidence: str) -> bool:
    """True when ``hit`` holds enough of the prompt's content ``words`` (see module docstring)."""
    if confidence == "none" or not words:
        return False
    held = len(covered(words, hit))
    if held >= MIN_COVERED:
        return True
    return confidence == "high" and held == len(words)


def select(prompt: str, hits: tuple[Hit, ...], confidence: str) -> list[Hit]:
    """The hits with text that pass the gate, best first; empty unless the best hit with text
    passes (a weaker section is never injected in place of a better one that failed)."""
    if not asks_docs(prompt):
        return []
    words = content_words(prompt)
    with_text = [h for h in hits if h.content is not None]
    if not with_text or not passes(words, with_text[0], confidence):
        return []
    return [h for h in with_text if passes(words, h, confidence)]


def why_not(prompt: str, hits: tuple[Hit, ...], confidence: str) -> str:
    """Why :func:`select` kept nothing for ``prompt``, as one clause for the debug log."""
    words = content_words(prompt)
    with_text = [h for h in hits if h.content is not None]
    if not with_text:
        return "the search found no section with text"
    if confidence == "none":
        return f"the search's confidence is none (best: {with_text[0].file_path} > {with_text[0].heading_path})"
    held = covered(words, with_text[0])
    return (f"the best section ({with_text[0].file_path} > {with_text[0].heading_path}) holds {len(held)} of the "
            f"prompt's {len(words)} content words ({', '.join(sorted(held)) or 'none'}); it needs {MIN_COVERED}, "
            f"or all of them with confidence high (it is {confidence})")
