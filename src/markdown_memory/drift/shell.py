"""Shell lines split into commands, each with its own words (docs/drift.md#ownership).

A pipe, ``&&``, ``||``, ``;``, ``&``, ``$(...)``, ``<(...)``, backticks and a quoted argument each start a new
command: in ``fzf --preview 'bat --color=always {}' | own --x``, ``--preview`` is fzf's,
``--color`` bat's, ``--x`` own's. A quoted value of an assignment (``export X='cmd --y'``,
``--opt='cmd --z'``) is a value, not a command. Wrappers are looked through to the command they
run: ``sudo``, ``env``, ``time``, ``exec``, ``nohup``, ``npx X``, ``uvx X``, ``pipx run X``,
``uv|pdm|poetry|hatch run X``, ``pnpm|npm exec X``, ``yarn|pnpm dlx X``, ``python -m X``,
``cargo run [--bin X] -- args`` (the args are X's), ``go run PKG args``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=")
_PREFIXES = frozenset({"sudo", "env", "time", "exec", "nohup", "command", "builtin", "doas"})
_INTERPRETERS = frozenset({"python", "python3", "py", "node", "bash", "sh", "zsh", "ruby", "perl", "deno", "bun",
                          "tsx", "ts-node"})
_RUNNERS = {"npx": 1, "bunx": 1, "uvx": 1, "pnpx": 1}  # runner -> words before the program
_RUN_SUB = {"uv": "run", "pdm": "run", "poetry": "run", "hatch": "run", "pipx": "run", "pnpm": "exec",
            "npm": "exec", "yarn": "dlx", "rye": "run", "pixi": "run"}


@dataclass
class Command:
    """One command of a shell line: ``word`` the program's name as the docs call it (basename of
    a path; ``python -m X`` gives ``X``), ``path`` the word as written when it was a path
    (``./scripts/x.sh``), ``args`` the unquoted words after it, ``envs`` the variables assigned
    before it (``APP_X=1 app``), ``via`` the runner looked through ("" when none)."""

    word: str = ""
    path: str = ""
    args: list[str] = field(default_factory=list)
    envs: list[str] = field(default_factory=list)
    via: str = ""


def _words(text: str, nested: list[str]) -> list[list[str]]:
    """Split ``text`` into segments of words at ``| || && ; &``; quoted arguments and ``$(...)``
    / backtick contents go to ``nested`` (each parsed later as a line of its own). A quoted part
    glued to ``=`` (a value) is dropped."""
    segments: list[list[str]] = [[]]
    word = ""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "'\"":
            j = text.find(c, i + 1)
            j = n if j < 0 else j
            inner = text[i + 1:j]
            if word.endswith("=") or word:
                word += "\0"  # a value glued to a word (`--opt='x'`, `X="y"`): not a command
            else:
                nested.append(inner)
                word = "\0"
            i = j + 1
            continue
        if c in "$<>" and text.startswith("(", i + 1) or c == "`":
            # `$(cmd)`, `<(cmd)`, `>(cmd)` (process substitution) and backticks hold a command
            close = "`" if c == "`" else ")"
            depth, j = 0, i + (1 if c == "`" else 2)
            start = j
            while j < n and not (text[j] == close and depth == 0):
                depth += 1 if text[j] == "(" and close == ")" else -1 if text[j] == ")" and depth else 0
                j += 1
            nested.append(text[start:j])
            word += "\0"
            i = j + 1
            continue
        if c in "|;&":
            if word:
                segments[-1].append(word)
                word = ""
            segments.append([])
            i += 2 if text[i:i + 2] in ("||", "&&", ";;") else 1
            continue
        if c.isspace():
            if word:
                segments[-1].append(word)
                word = ""
        else:
            word += c
        i += 1
    if word:
        segments[-1].append(word)
    return [s for s in segments if s]


def _resolve(words: list[str]) -> Command:
    cmd = Command()
    while words and (_ASSIGN.match(words[0]) or words[0] in _PREFIXES):
        if m := _ASSIGN.match(words[0]):
            cmd.envs.append(m.group(1))
        words = words[1:]
    if not words:
        return cmd
    first = words[0]
    rest = words[1:]
    if first in _RUNNERS and rest:
        cmd.via, first, rest = first, rest[0], rest[1:]
    elif _RUN_SUB.get(first) and rest and rest[0] == _RUN_SUB[first] and len(rest) > 1:
        cmd.via, first, rest = first, rest[1], rest[2:]
    elif first in ("python", "python3", "py") and len(rest) > 1 and rest[0] == "-m":
        cmd.via, first, rest = first, rest[1], rest[2:]
    elif first in _INTERPRETERS and rest and re.fullmatch(r"[\w./-]+\.(?:py|js|mjs|cjs|ts|sh|rb|pl)", rest[0]):
        cmd.via, first, rest = first, rest[0], rest[1:]  # `python tools/run.py --x`: the script's option
        cmd.path = first
    elif first == "cargo" and rest[:1] == ["run"]:
        pre, _, post = " ".join(rest[1:]).partition(" -- ")
        if " -- " not in " ".join(rest[1:]) and rest[-1:] != ["--"]:
            cmd.word, cmd.args = "cargo", rest
            return cmd
        m = re.search(r"--bin[= ](\S+)", pre)
        cmd.via, first, rest = "cargo", m.group(1) if m else "", post.split()
    elif first == "go" and rest[:1] == ["run"] and len(rest) > 1:
        cmd.via, first, rest = "go", "", rest[2:]
    cmd.path = cmd.path or (first if "/" in first else "")
    cmd.word = first.rstrip("/").rsplit("/", 1)[-1] if first else ""
    cmd.args = [w for w in rest if "\0" not in w or w.startswith("-")]
    cmd.args = [w.split("\0", 1)[0] for w in cmd.args]
    return cmd


def commands(text: str, depth: int = 0) -> list[Command]:
    """The commands of one shell line, left to right, nested ones (quoted arguments, ``$(...)``)
    after the command that holds them. ``word`` "" for ``cargo run``/``go run`` without a named
    binary (the repository's own program) is reported with ``via`` set."""
    nested: list[str] = []
    out = [_resolve(seg) for seg in _words(text, nested)]
    if depth < 3:
        for inner in nested:
            out.extend(commands(inner, depth + 1))
    return out
