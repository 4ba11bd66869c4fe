"""What a long question asks: the one rule that search and the prompt hook read a query by.

A question as users write it is often two sentences of context, a pasted error or log, and the
question at the end ("I moved my config to ~/.config. Now every run prints: <12 log lines>.
How do I point it at the new file?"). Searched whole, the log's timestamps, paths and level
words and the preamble's chatter outweigh the few words that are asked. :func:`focus` keeps:

* the *asked* part: the last sentence ending in ``?`` (with the sentence before it when the
  question alone is short: "Any idea why?"), else the last sentence opening with a question or
  request word ("how", "what", "is there", "please explain"...), else the prose sentences;
* from everything else (context sentences, log and code lines) only the *exact* tokens: flags
  (``--dry-run``), identifiers (``max_inflight``, ``os.path``, ``HttpClient``), error codes
  (``E0425``, ``ERR_CACHE_LOCK``, ``ECONNRESET``), quoted or backticked names, and multi-word
  proper names ("Spring Cloud Gateway"); never timestamps, numbers, hex ids or long paths.

The focused text is the asked part, then (on a line of its own, so the query still reads as
pasted text, see ``cues.pasted``) the kept tokens. A short query (one line, at most
``SHORT_SENTENCES`` sentences, or no question found in plain prose) is returned unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .cues import boost_identifier
from .query import looks_like_identifier, proper_names

#: A one-line query of at most this many sentences is searched as it is.
SHORT_SENTENCES = 2
#: A question of fewer words than this takes the sentence before it along ("How do I fix it?").
SHORT_QUESTION_WORDS = 6
#: At most this many exact tokens are kept from the context and the log.
MAX_CONTEXT_TOKENS = 16

#: Plain words kept from the first error line of a log.
ERROR_WORDS = 12
_ERROR_LINE = re.compile(r"(?i)\b(error|exception|failed|failure|panic|fatal|denied|refused|not found)\b")
_SENTENCE = re.compile(r"[^.?!。？！]+(?:[.?!。？！]+|$)")
_ASKS = re.compile(
    r"(?i)^\W*(how|what|what's|whats|why|where|when|which|who|whom|whose|can|could|should|would|is|are|does|"
    r"do|did|will|any|anyone|please|help|explain|show|tell|is there|are there)\b")
# Lines that are a log, a trace or a terminal transcript rather than prose.
_LOG_LINE = re.compile(
    r"""(?x)
    ^\s*(?:at\s+[\w$.<>]+\(|File\ "|Traceback\b|Caused\ by:|\.\.\.\ \d+\ more|[$#>]\s|\w+Error\b|\w+Exception\b)
    | \d{4}-\d{2}-\d{2}[T\ ]\d{2}:\d{2}          # 2026-03-14 12:00 / ISO timestamps
    | ^\s*\d{2}:\d{2}:\d{2}                       # 12:00:01 ...
    | ^\s*\[?(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|CRITICAL|panic|error|warning)\b[\]:]?
    | ^\s{4,}\S | ^\t                             # indented code
    | ^\s*(?:[-=]{3,}|[|+].*[|+])\s*$             # rules, table borders
    | ^\s*(?:-->|\^|\|)                           # compiler diagnostics' pointers
    """)
_LEVELS = frozenset("TRACE DEBUG INFO WARN WARNING ERROR FATAL CRITICAL PANIC".split())
_SPLIT = re.compile(r"[\s\[\](){}<>,;=]+")
_QUOTED = re.compile(r"\"([^\"\n]{2,60})\"|`([^`\n]{1,80})`|'([^'\n]{2,40})'")
_CODE_FENCE = re.compile(r"^\s*(```|~~~)")
_ERROR_CODE = re.compile(r"^(?:[A-Z]{1,5}\d{2,5}|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|E[A-Z]{4,})$")
# Incidental shapes: numbers, versions, hex ids, timestamps, long paths, file:line locators.
_NOISE = re.compile(r"^(?:[\d.:,_/-]+|0x[0-9a-fA-F]+|[0-9a-f]{7,}|.*/.*/.*/.*|.*\.\w+:\d+(?::\d+)?)$")


@dataclass(frozen=True)
class Focus:
    """``text``: what to search (the original when ``focused`` is False); ``asked``: the
    sentence(s) found to be the question; ``kept``: the exact tokens kept from the rest."""

    text: str
    asked: str
    kept: tuple[str, ...] = ()
    focused: bool = False


def _strip(chunk: str) -> str:
    return chunk.strip(",;:!?'\"“”‘’()[]{}<>").rstrip(".")


def _sentences(prose: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(prose) if s.strip()]


def _split(text: str) -> tuple[list[str], list[str]]:
    """(prose lines, log/code lines) of ``text``; a fenced block is all code."""
    prose: list[str] = []
    log: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _CODE_FENCE.match(line):
            fenced = not fenced
            continue
        if not line.strip():
            continue
        (log if fenced or _LOG_LINE.search(line) or _symbolic(line) else prose).append(line.strip())
    return prose, log


def _symbolic(line: str) -> bool:
    """A line that is mostly not letters (paths, numbers, punctuation): output, not prose."""
    chars = [ch for ch in line if not ch.isspace()]
    return sum(ch.isalpha() for ch in chars) < 0.6 * len(chars)


def _wordy(sentence: str) -> bool:
    return sum(1 for w in sentence.split() if w.isalpha()) >= 3


def _asked(sentences: list[str]) -> list[str] | None:
    """The question sentence(s) of ``sentences`` (module docstring), or None."""
    at = next((i for i in range(len(sentences) - 1, -1, -1) if sentences[i].rstrip().endswith(("?", "？"))), None)
    if at is None:
        at = next((i for i in range(len(sentences) - 1, -1, -1) if _ASKS.match(sentences[i])), None)
    if at is None:
        return None
    picked = [sentences[at]]
    if len(sentences[at].split()) < SHORT_QUESTION_WORDS and at > 0 and _wordy(sentences[at - 1]):
        picked.insert(0, sentences[at - 1])
    return picked


def exact_tokens(text: str) -> list[str]:
    """The exact tokens of ``text`` worth searching wherever they stand (module docstring), in
    order of first appearance, distinct."""
    out: list[str] = []
    for m in _QUOTED.finditer(text):
        inner = (m.group(1) or m.group(2) or m.group(3) or "").strip()
        if len(inner) >= 2 and not _NOISE.match(inner) and len(inner.split()) <= 4:
            out.append(inner)
    out += proper_names(_QUOTED.sub(" ", text))
    for raw in _SPLIT.split(_QUOTED.sub(" ", text)):
        chunk = _strip(raw)
        if len(chunk) < 3 or _NOISE.match(chunk) or chunk in _LEVELS:
            continue
        if chunk.startswith("-") or _ERROR_CODE.match(chunk) or (
                looks_like_identifier(chunk) and boost_identifier(chunk)):
            out.append(chunk)
    seen: set[str] = set()
    return [t for t in out if not (t in seen or seen.add(t))]  # type: ignore[func-returns-value]


def focus(text: str) -> Focus:
    """The focus of a query ``text`` (module docstring). Never raises."""
    prose, log = _split(text)
    sentences = [s for line in prose for s in _sentences(line)]
    if not log and (len(prose) <= 1 and len(sentences) <= SHORT_SENTENCES):
        return Focus(text, text)
    asked = _asked(sentences)
    if asked is None:
        if not log:
            return Focus(text, text)  # plain prose with no question in it: all of it is the ask
        asked = sentences
    if not asked:  # only a log: search it whole (``query._strongest`` keeps its telling terms)
        return Focus(text, text)
    asked_text = " ".join(asked)
    rest = "\n".join([s for s in sentences if s not in asked] + log)
    message = _error_message(log)
    if message and message not in asked_text:
        asked_text = f"{asked_text} {message}"
    have = set(exact_tokens(asked_text))
    kept = tuple(t for t in exact_tokens(rest) if t not in have and t not in asked_text)[:MAX_CONTEXT_TOKENS]
    searched = asked_text + ("\n" + " ".join(_quoted(t) for t in kept) if kept else "")
    return Focus(searched, asked_text, kept, True)


def _error_message(log: list[str]) -> str:
    """The words of the first error line of ``log`` ("cannot find value in this scope" of
    ``error[E0425]: cannot find value `x` in this scope``): an error's own message is what a
    troubleshooting section quotes. At most ``ERROR_WORDS`` plain words; "" when none."""
    for line in log:
        if _ERROR_LINE.search(line):
            words = [w for w in _SPLIT.split(_QUOTED.sub(" ", line)) if w.isalpha() and w.upper() not in _LEVELS]
            return " ".join(words[:ERROR_WORDS])
    return ""


def _quoted(token: str) -> str:
    """A kept token as the query analysis reads it as one: multi-word names in quotes."""
    return f'"{token}"' if " " in token else token
