"""The names a section gives as code, with the line each is on (see docs/drift.md).

Shapes that count (anything else in a code span or block is not a reference):

* ``flag``: a long option ``--dry-run`` (``=VALUE`` dropped) alone in a code span, or on a
  shell line (code span or ``sh``/``bash``/``console`` block) whose command is not a well-known
  tool. Short options (``-n``) are not checked: one letter is held by almost any code.
* ``env``: an upper-case name with an underscore (``APP_TIMEOUT``, ``$APP_TIMEOUT``) alone in a
  code span of a section that speaks of the environment ("environment", "variable", "env"), or
  assigned to a command on a shell line (``APP_TIMEOUT=5 app run``; not ``export`` lines).
* ``path``: a relative path with a ``/`` (``src/app/config.py``, ``config/``) alone in a code
  span; bare file names (``app.py``) are too often the reader's own files.
* ``name``: a called name (``parse_args()``, ``Client.stream()``) or a dotted name
  (``Client.stream``, ``server.max_connections``) alone in a code span.
* ``import``: a name imported in a Python block from a module (``from pkg.mod import name``).

Names the docs define themselves are collected by ``definitions`` (definitions, assignments
and imports in any code block of the docs root) and are never references; placeholders
(``<name>``, ``{id}``, ``YOUR_TOKEN``, ``foo``, ``example``) never are either.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .owners import Owners
from .shell import Command, commands


@dataclass(frozen=True)
class Reference:
    """One name a section gives as code. ``name`` as written (``--dry-run``, ``FOO_BAR``,
    ``src/app.py``, ``Client.stream()``); ``kind`` flag | env | path | name | import; ``line``
    1-based in the file; ``command`` the shell command word a flag or env var was given with
    ("" when alone); ``module`` an import's module (``pkg.mod``), else ""; ``rule`` why a flag or
    variable is the repository's own: ``shell`` (given to ``command`` on a shell line),
    ``sentence`` / ``section`` (the nearest command named there is ``command``), ``document``
    (the file or heading names ``command``), ``prefix`` (the variable's first part is ``command``),
    ``script`` (``command`` is a path the checker confirms), "" (a variable no command claims:
    the checker asks the code about its first part)."""

    name: str
    kind: str
    line: int
    command: str = ""
    module: str = ""
    rule: str = ""


SHELL_LANGS = frozenset({"sh", "bash", "shell", "console", "shell-session", "zsh", "shellsession", "sh-session",
                         "text", "", "none", "cmd", "powershell", "ps1", "fish", "txt", "plain", "plaintext",
                         "output", "help"})
#: blocks that hold prose or output as often as commands: a line is a command only when its first
#: word is an own or well-known command (or after a `$ ` prompt, or `Usage:`)
PLAIN_LANGS = frozenset({"text", "", "none", "txt", "plain", "plaintext", "output", "help"})
PYTHON_LANGS = frozenset({"python", "py", "python3", "pycon", "ipython"})

#: tools whose flags and variables are not the project's
KNOWN_COMMANDS = frozenset("""
git pip pip3 pipx python python3 py uv uvx poetry pdm hatch conda mamba virtualenv venv tox nox pytest
coverage mypy ruff black isort flake8 pylint pre-commit npm npx yarn pnpm node deno bun cargo rustup rustc
rustfmt go make cmake docker podman kubectl helm brew apt apt-get yum dnf pacman choco winget snap
curl wget ssh scp rsync tar unzip zip gzip ls cd cp mv rm mkdir rmdir touch cat echo printf grep egrep
sed awk find xargs sort uniq head tail less more chmod chown sudo env export source set unset which
gunicorn uvicorn hypercorn waitress nginx apache2 systemctl service openssl gpg jq yq sqlite3 psql mysql
redis-cli java javac mvn gradle dotnet ruby gem bundle rake php composer perl bash sh zsh fish vim nano
code open start time nohup watch tee diff patch ln du df kill ps top gh hub twine build sphinx-build
mkdocs gcc clang ld strip file test true false exit cls dir copy del set-location tree fzf xclip emacs vi
nvim parallel entr
""".split())

#: environment variables of the system and common tools, not the project's
KNOWN_ENV = frozenset("""
PATH HOME USER SHELL PWD LANG LC_ALL TERM TMPDIR TEMP TMP EDITOR PAGER PYTHONPATH PYTHONHASHSEED
PYTHONUNBUFFERED PYTHONDONTWRITEBYTECODE PYTHONWARNINGS VIRTUAL_ENV CONDA_PREFIX RUST_LOG RUST_BACKTRACE
RUSTFLAGS CARGO_HOME CC CXX CFLAGS LDFLAGS LD_LIBRARY_PATH NODE_ENV NODE_OPTIONS GOPATH GOOS GOARCH
HTTP_PROXY HTTPS_PROXY NO_PROXY ALL_PROXY XDG_CONFIG_HOME XDG_DATA_HOME XDG_CACHE_HOME GITHUB_TOKEN CI
SSL_CERT_FILE SSL_CERT_DIR REQUESTS_CA_BUNDLE CURL_CA_BUNDLE DISPLAY COLUMNS LINES NO_COLOR FORCE_COLOR
""".split())

PLACEHOLDER_WORDS = frozenset({"foo", "bar", "baz", "qux", "quux", "spam", "eggs", "ham", "example", "examples",
                               "sample", "dummy", "placeholder", "xyz", "xxx", "yourapp", "myapp", "myproject",
                               "yourproject", "mypackage", "mymodule", "something", "whatever", "vars", "var",
                               "flags", "envvar", "envvars", "variable", "variables"})
_PLACEHOLDER_PREFIX = re.compile(r"^(?:your|my|some|example)[_-]", re.IGNORECASE)
_PLACEHOLDER_MARK = re.compile(r"[<>{}\[\]*$…]|\.\.\.|XXX|_HERE\b|^YOUR_|^MY_", re.IGNORECASE)

_FLAG = re.compile(r"^--([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)(?:[= ][^\s]*)?$")
_FLAG_ANY = re.compile(r"(?<![\w-])--([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)")
_ENV_SPAN = re.compile(r"^(?:\$|\$env:|%)?\{?([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\}?%?(?:\s*=\s*\S*)?$")
_ASSIGN = re.compile(r"^(?:export\s+|set\s+|setx\s+|\$env:)?([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)=")
_PATH = re.compile(r"^(?:\./)?([A-Za-z0-9_][\w.-]*(?:/[\w.-]+)+)/?$|^(?:\./)?([A-Za-z0-9_][\w.-]*)/$")
_CALL = re.compile(r"^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\((?:[^()]{0,40})\)$")
_DOTTED = re.compile(r"^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)$")
_FILE_SUFFIX = re.compile(r"\.(?:py|pyi|rs|toml|ya?ml|json|cfg|ini|js|mjs|ts|tsx|go|c|h|cpp|hpp|sh|txt|md|rst|lock|pem|crt|key|cert|log|db|csv|xml|"
                          r"html|css|sql|env|conf|java|rb|php|cs|kt|swift)$")
_FROM_IMPORT = re.compile(r"^\s*from\s+([A-Za-z_][\w.]*)\s+import\s+\(?([\w\s,]+)\)?")

_DEFINE = re.compile(
    r"\b(?:def|class|fn|func|function|struct|enum|trait|type|interface|let|const|var|mod|module|alias)\s+"
    r"(?:mut\s+)?([A-Za-z_]\w*)")
_ASSIGNED = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(?::\s*[\w\[\], .|]+)?\s*=(?!=)", re.MULTILINE)
_ALIAS = re.compile(r"\bas\s+([A-Za-z_]\w*)")
_QUOTED = re.compile(r"[\"']([\w.-]+)[\"']")
_ENV_CONTEXT = re.compile(r"environ|\benv\b|variable|\$[A-Z]", re.IGNORECASE)
_FILE_WORD = re.compile(r"[\w./-]+\.\w{1,5}\b")
_PARAM = re.compile(r"\b([A-Za-z_]\w*)\s*[=:]")


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")  # a table cell is a sentence of its own


#: files every project of a kind has: a path ending in one is the reader's project, not this one
CONVENTIONAL_FILES = frozenset({"conftest.py", "settings.py", "app.py", "main.py", "manage.py", "wsgi.py", "asgi.py",
                                "urls.py", ".env", "Dockerfile", "docker-compose.yml", "Procfile", "app.js", "index.js",
                                "server.js", "main.js", "app.ts", "index.ts", "server.ts"})
#: `owner/site.example.io`: a repository or host named like a domain, not a file
_DOMAIN_TAIL = re.compile(r"\.(?:io|com|org|net|dev|app|sh|co|me|ai)$")


def _code_blocks(tokens: list[Token]) -> Iterator[tuple[str, str, int]]:
    """``(lang, content, first content line 0-based)`` of every fenced or indented block."""
    for tok in tokens:
        if tok.type in ("fence", "code_block") and tok.map:
            lang = tok.info.strip().split()[0].lower() if tok.info.strip() else ""
            first = tok.map[0] + (1 if tok.type == "fence" else 0)
            yield lang, tok.content, first


def definitions(texts: Iterable[str]) -> set[str]:
    """Names the docs define themselves: in any code block of ``texts``, the names after
    ``def``/``class``/``fn``/``let``/..., assigned names, ``as`` aliases, keyword arguments and
    mapping keys, quoted strings (an example's own ``"--port"`` or ``"APP_MODE"``) and file names
    (``my_app.py``). Imported names are not definitions: they name the project's (or another
    package's) code. Shape: a set of strings; a quoted ``--flag`` is stored as written."""
    found: set[str] = set()
    for text in texts:
        for lang, content, _first in _code_blocks(_parser().parse(text)):
            if lang in SHELL_LANGS:
                continue  # a shell line uses names (`APP_MODE=1 app run`), it defines none
            for rx in (_DEFINE, _ASSIGNED, _ALIAS, _PARAM, _QUOTED):
                for m in rx.finditer(content):
                    found.add(m.group(1))
                    found.update(m.group(1).split("."))
            found.update(m.group() for m in _FILE_WORD.finditer(content))
    return found


#: tools named in prose ("git's `--color-moved`"): a flag next to one is that tool's
PROSE_TOOLS = frozenset("""
git npm npx yarn pnpm pip pip3 pipx cargo rustup docker podman kubectl helm curl wget brew gh ssh tmux vim nvim
emacs bash zsh fish node deno bun python python3 poetry conda make cmake gcc clang pytest tox nox mypy black
ruff less bat fzf rg ripgrep grep sed awk jq systemctl sudo tig hg svn mercurial nginx gpg openssl gunicorn uvicorn
""".split())

#: `--options`, `--arguments`: prose for "the options", not an option
_GENERIC_OPTIONS = frozenset({"option", "options", "argument", "arguments", "args", "flag", "flags", "opts", "switches"})
#: a table cell that holds options only (`` `-p` or `--port` ``, `` `--gzip`, `-g` ``)
_OPTIONS_CELL = re.compile(r"(?:`-[^`]+`|\s|,|/|\bor\b)+")
#: an option listing outside a table: a definition-list term (pandoc man pages: "`-a`, `--all`"
#: over ": Show hidden files"; a trailing "[if built with git]" note allowed) or a labelled line
#: ("CLI flags: `-T`, `--skip-tasks`"); its options are the document subject's like a table's
_OPTION_LABEL = re.compile(r"^(?:[-*+]\s+)?(?:[\w ]{0,24}\b)?(?:flags?|options?|switch(?:es)?)\s*:\s*", re.IGNORECASE)
_TERM_NOTE = re.compile(r"\s*\[[^\]]*\]\s*$")


def _option_entry(content: str) -> bool:
    """True when an inline's ``content`` is one entry of an option listing (see ``_OPTION_LABEL``)."""
    first, _, rest = content.strip().partition("\n")
    if rest.lstrip().startswith((": ", ":\t")):
        return bool(_OPTIONS_CELL.fullmatch(_TERM_NOTE.sub("", first).strip() or "x"))
    label = _OPTION_LABEL.match(first)
    return label is not None and not rest and bool(_OPTIONS_CELL.fullmatch(first[label.end():].strip() or "x"))
_MAN_PAGE = re.compile(r"^([A-Za-z][\w.+-]*)\((\d)[a-z]*\)$")
_MAN_IN_PROSE = re.compile(r"\b([A-Za-z][\w.+-]*)\((\d)[a-z]*\)")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_WORD = re.compile(r"[A-Za-z][\w+-]*[A-Za-z0-9]|[A-Za-z]")
_HTML_CODE = re.compile(r"<(code|pre|kbd|samp)\b[^>]*>(.*?)</\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
CONSOLE_LANGS = frozenset({"console", "shell-session", "shellsession", "sh-session"})


@dataclass
class _Item:
    """One thing of a section in reading order: a named command (``word``, ``own``) or a
    reference that has no command of its own yet (a flag or variable alone in a span)."""

    order: int
    sentence: int
    line: int
    word: str = ""
    own: bool = False
    ref: Reference | None = None
    pos: int = 0  # character offset in its paragraph
    kind: str = "span"  # span | prose | block: where a command was named
    path: str = ""  # a command given by path (a script the checker confirms)
    listing: bool = False  # a flag in the first cell of a table row: an options table


@dataclass
class _Walk:
    """The state of one section's walk: ``items`` in order, sentences counted, shell refs."""

    owners: Owners
    items: list[_Item] = field(default_factory=list)
    sentence: int = 0
    pos: int = 0
    where: str = "span"
    usage: str = ""  # the program of the current block's `Usage:` line
    first_cell: bool = False  # reading the first cell of a table row

    def command(self, word: str, line: int, kind: str = "", path: str = "") -> None:
        if word:
            self.items.append(_Item(len(self.items), self.sentence, line, word, self.owners.is_own(word), None,
                                    self.pos, kind or self.where, path))

    def lone(self, ref: Reference) -> None:
        self.items.append(_Item(len(self.items), self.sentence, ref.line, ref=ref, pos=self.pos,
                                listing=self.first_cell))


def is_placeholder(name: str) -> bool:
    """True for a name that stands for the reader's own value (``<name>``, ``YOUR_TOKEN``, ``foo``,
    ``--FLAG``: an upper-case long option is a placeholder, options are lower-case)."""
    if _PLACEHOLDER_MARK.search(name) or _PLACEHOLDER_PREFIX.match(name.lstrip("-$./")):
        return True
    if re.fullmatch(r"--?[A-Z][A-Z0-9_-]*", name) or name.lstrip("-") in _GENERIC_OPTIONS and name.startswith("--"):
        return True
    parts = [p.lower() for p in re.split(r"[^A-Za-z0-9]+", name) if p]
    return any(p in PLACEHOLDER_WORDS for p in parts)


def _span_line(lines: list[str], start: int, end: int, content: str) -> int:
    """0-based line (within ``lines[start:end]``) holding the code span ``content``."""
    probe = content.strip().split("\n")[0][:60]
    for i in range(start, min(end, len(lines))):
        if probe in lines[i]:
            return i
    return start


def _command_refs(cmd: Command, lineno: int) -> list[Reference]:
    """The flags and variables one shell command gives, with rule ``shell``; the caller keeps
    those of the repository's own commands."""
    word = cmd.word or cmd.via  # `cargo run -- --x`, `go run . --x`: the repository's program
    refs = [Reference(e, "env", lineno, word, rule="shell") for e in cmd.envs
            if e not in KNOWN_ENV and not is_placeholder(e) and re.fullmatch(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+", e)]
    for arg in cmd.args:
        if m := _FLAG_ANY.match(arg):
            if not is_placeholder(arg.split("=", 1)[0]):
                refs.append(Reference("--" + m.group(1), "flag", lineno, word, rule="shell"))
    return refs


def _owned_shell(walk: _Walk, text: str, lineno: int) -> list[Reference]:
    """The references of one shell line that belong to the repository's own commands; every
    command word is recorded as named."""
    out: list[Reference] = []
    for cmd in commands(text):
        word = cmd.word or ("" if cmd.via in ("cargo", "go") else cmd.word)
        own = walk.owners.is_own(cmd.word) or (cmd.via in ("cargo", "go") and not cmd.word)
        if cmd.word in ("make", "just") and cmd.args[:1] and cmd.args[0] in walk.owners.recipes:
            own, word = True, f"{cmd.word} {cmd.args[0]}"
        if cmd.path and not own:
            # a script of the repository given by path: the checker confirms the file
            refs = [replace(r, command=cmd.path.removeprefix("./"), rule="script") for r in _command_refs(cmd, lineno)]
            out.extend(refs)
            walk.command(cmd.word, lineno, path=cmd.path.removeprefix("./"))
            continue
        if word and re.fullmatch(r"[\w.+-]+", cmd.word):  # not `Header-Name:` or `{x}`
            walk.command(cmd.word, lineno)
        if own:
            out.extend(replace(r, command=word or cmd.via) for r in _command_refs(cmd, lineno))
    return out


def _shell_line(walk: _Walk, line: str, lineno: int, console: bool, plain: bool = False) -> list[Reference]:
    text = line.strip()
    prompt = text.startswith(("$ ", "% "))
    if console or text.startswith(("$ ", "> ", "% ")):
        if not text.startswith(("$ ", "% ")):
            if console and text.startswith("-"):
                return _shell_line(walk, text, lineno, False)  # help output listing the options
            return []  # a console block's output, or a prompt continuation
        text = text[2:].strip()
    if not text or text.startswith("#"):
        return []
    if text.startswith("-"):
        # `-s, --side-by-side  Show ...`: a line of an option listing (help output); its options
        # belong to the command the listing is of (the nearest named, else the document's)
        head = re.split(r"\s{2,}|\t", text, maxsplit=1)[0]
        found = [Reference("--" + m.group(1), "flag", lineno) for m in _FLAG_ANY.finditer(head)
                 if not is_placeholder("--" + m.group(1))]
        if walk.usage:  # the listing's own `Usage: prog [OPTIONS]` line says whose options they are
            own = walk.owners.is_own(walk.usage)
            return [replace(r, command=walk.usage, rule="usage") for r in found] if own else []
        for ref in found:
            walk.lone(ref)
        return []
    if text.lower().startswith("usage:"):
        text = text[6:].strip()
        walk.usage = text.split()[0].rsplit("/", 1)[-1] if text else ""
    elif plain and not prompt and not (walk.owners.is_own(text.split()[0]) or text.split()[0] in KNOWN_COMMANDS):
        return []  # a line of output or prose in a plain block, not a command
    words = text.split()
    if not words:
        return []
    if words[0] in ("export", "set", "setx", "$env:") or _ASSIGN.match(text) and len(words) == 1:
        # `export APP_X=1`: a variable for whatever runs next; its owner is the section's
        m = _ASSIGN.match(" ".join(words[1:]) if words[0] in ("export", "set", "setx") else text)
        if m and m.group(1) not in KNOWN_ENV and not is_placeholder(m.group(1)):
            walk.lone(Reference(m.group(1), "env", lineno))
        return []
    return _owned_shell(walk, text, lineno)


def _span(walk: _Walk, content: str, lineno: int) -> list[Reference]:
    """The references of one code span (see the module doc for the shapes); a span that names a
    command (a command line, a man page ``name(1)``, an own or well-known command word) is
    recorded as named."""
    text = content.strip()
    if not text or is_placeholder(text):
        return []
    if m := _MAN_PAGE.match(text):
        walk.command(m.group(1), lineno)
        return []
    words = [w for w in re.split(r"[\s,|/]+", text) if w]
    if len(words) > 1 and all(w.startswith("-") for w in words):  # `--json, -j`: one option's forms
        for w in words:
            if (m := _FLAG.match(w)) and not is_placeholder(w):
                walk.lone(Reference("--" + m.group(1), "flag", lineno))
        return []
    if " " in text:
        if _FLAG.match(text) or _ENV_SPAN.match(text):
            pass  # `--max-size 10`, `APP_X = 1`: one name with its value
        else:
            return _shell_line(walk, text, lineno, console=False)
    if walk.owners.is_own(text) or text in KNOWN_COMMANDS:  # "the `tree` command with `--fromfile`"
        walk.command(text, lineno)
        return []
    if m := _FLAG.match(text):
        walk.lone(Reference("--" + m.group(1), "flag", lineno))
        return []
    if m := _ENV_SPAN.match(text):
        if m.group(1) not in KNOWN_ENV:
            walk.lone(Reference(m.group(1), "env", lineno))
        return []
    if "://" not in text and (m := _PATH.match(text)):
        path = m.group(1) or m.group(2)
        tail = path.rsplit("/", 1)[-1]
        return [] if tail in CONVENTIONAL_FILES or _DOMAIN_TAIL.search(tail) else [Reference(path, "path", lineno)]
    if m := _CALL.match(text):
        return [Reference(m.group(1) + "()", "name", lineno)]
    if (m := _DOTTED.match(text)) and not _FILE_SUFFIX.search(text):
        return [Reference(m.group(1), "name", lineno)]
    return []


def _prose(walk: _Walk, text: str, lineno: int) -> None:
    """Commands named in prose (an own name, a well-known tool, a man page) and sentence ends."""
    pos, base = 0, walk.pos
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    for end in [*ends, len(text)] if not ends or ends[-1] < len(text) else ends:
        chunk = text[pos:end]
        for m in _MAN_IN_PROSE.finditer(chunk):
            walk.pos = base + pos + m.start()
            walk.command(m.group(1), lineno, "span")  # `less(1)` names a command as plainly as code
        for m in _WORD.finditer(chunk):
            w = m.group()
            if len(w) > 3 and w.lower().replace("_", "-") in walk.owners.foreign:
                # "the download uses huggingface-hub, so `HF_TOKEN` applies": a dependency named in
                # the sentence is another program, as plainly as a man page
                walk.pos = base + pos + m.start()
                walk.command(w, lineno, "span")
                continue
            if walk.owners.names_word(w) or w.lower() in PROSE_TOOLS and (w.islower() or w.istitle()):
                walk.pos = base + pos + m.start()
                walk.command(walk.owners.names_word(w) or w.lower(), lineno, "prose")
        if end in ends:  # "... `pyproject.toml`." ends a sentence even at the end of a text piece
            walk.sentence += 1
        pos = end
    walk.pos = base


def _inline(walk: _Walk, tok: Token, lines: list[str], start_line: int) -> list[Reference]:
    refs: list[Reference] = []
    assert tok.map is not None
    in_code = ""
    walk.pos, walk.where = 0, "span"
    for child in tok.children or []:
        line = start_line + _span_line(lines, tok.map[0], tok.map[1], child.content)
        _child(walk, child, line, refs, in_code)
        in_code = _code_state(child, in_code)
        walk.pos += len(child.content) + 2  # after the child: its words sit at walk.pos + offset
    walk.sentence += 1  # a paragraph, list item, heading or cell ends a sentence
    return refs


def _code_state(child: Token, in_code: str) -> str:
    """The text gathered inside an HTML ``<code>`` after ``child`` ("" outside one)."""
    if child.type == "html_inline" and re.match(r"<(code|kbd|samp)\b", child.content, re.IGNORECASE):
        return " "
    if child.type == "html_inline" and re.match(r"</(code|kbd|samp)\b", child.content, re.IGNORECASE):
        return ""
    return in_code + child.content if in_code else ""


def _child(walk: _Walk, child: Token, line: int, refs: list[Reference], in_code: str) -> None:
    """Read one inline child: a code span, the end of an HTML ``<code>``, or prose."""
    if child.type == "code_inline":
        refs.extend(_span(walk, child.content, line))
    elif child.type == "html_inline" and re.match(r"</(code|kbd|samp)\b", child.content, re.IGNORECASE):
        refs.extend(_span(walk, html.unescape(in_code.strip()), line))
    elif not in_code and child.type == "text":
        _prose(walk, child.content, line)


def _block_refs(walk: _Walk, lang: str, content: str, first_line: int) -> list[Reference]:
    refs: list[Reference] = []
    walk.where, walk.usage = "block", ""
    if lang in SHELL_LANGS:
        logical, at = "", first_line
        for i, line in enumerate(content.split("\n")):
            if not logical:
                at = first_line + i
            if line.rstrip().endswith("\\"):
                logical += line.rstrip()[:-1] + " "
                continue
            logical += line
            found = _shell_line(walk, logical, at, console=lang in CONSOLE_LANGS, plain=lang in PLAIN_LANGS)
            span = content.split("\n")[at - first_line: i + 1]
            for ref in found:  # the physical line of a continued command that holds the name
                hit = next((k for k, text in enumerate(span) if ref.name in text), 0)
                refs.append(replace(ref, line=at + hit))
            logical = ""
            walk.sentence += 1
    elif lang in PYTHON_LANGS:
        for i, line in enumerate(content.split("\n")):
            if m := _FROM_IMPORT.match(line.removeprefix(">>> ")):
                for name in re.split(r"[\s,]+", m.group(2)):
                    if name and name != "as" and not is_placeholder(name):
                        refs.append(Reference(name, "import", first_line + i, module=m.group(1)))
                        if " as " in m.group(2):
                            break  # `import a as b`: only the first name is reliably a module member
    walk.sentence += 1
    walk.where = "span"
    return refs


def _html_block(walk: _Walk, content: str, first_line: int) -> list[Reference]:
    """``<code>``/``<pre>`` inside an HTML block: spans and blocks like Markdown's own."""
    refs: list[Reference] = []
    for m in _HTML_CODE.finditer(content):
        inner = html.unescape(_TAG.sub("", m.group(2)))
        line = first_line + content.count("\n", 0, m.start(2))
        if m.group(1).lower() == "pre" or "\n" in inner.strip():
            refs.extend(_block_refs(walk, "", inner.strip("\n"), line))
        else:
            refs.extend(_span(walk, inner, line))
        walk.sentence += 1
    return refs


#: a command named in prose counts for a span this close to it (characters): "Git's `--color-moved`"
PROSE_REACH = 40


def _nearest(it: _Item, cmds: list[_Item]) -> tuple[_Item | None, str]:
    """The command a lone flag or variable belongs to, and the rule: the nearest named in its
    sentence (a prose mention only within PROSE_REACH), else the last command of a shell block
    before it in the section, else the first after it, else the last command span before it;
    ``(None, "")`` when none."""
    same = [c for c in cmds if c.sentence == it.sentence and (c.kind != "prose" or abs(c.pos - it.pos) <= PROSE_REACH)]
    if same:
        return min(same, key=lambda c: (abs(c.order - it.order), c.order > it.order)), "sentence"
    before = [c for c in cmds if c.kind == "block" and c.order < it.order]
    after = [c for c in cmds if c.kind == "block" and c.order > it.order]
    if before or after:  # the example above it, else the one below it
        return (before[-1] if before else after[0]), "section"
    spans = [c for c in cmds if c.kind == "span" and c.order < it.order]
    if spans:  # "Load it from `guix shell`. ... Other options include `--file`": still guix's
        return spans[-1], "section"
    return None, ""


def _resolve_lone(walk: _Walk, context: str) -> list[Reference]:
    """Give each flag or variable alone in a span its command (``_nearest``), else the document's
    subject: an own name in ``context`` (file and heading path), else the repository itself when it
    defines commands (its docs speak of it unless they name another program); keep those whose
    command is the repository's own (rule sentence / section / document). A variable whose first
    part is an own name is own (rule prefix); a variable with no command and no subject stays a
    candidate (rule "") that the checker keeps when the code reads others of its first part."""
    cmds = [it for it in walk.items if it.ref is None]
    out: list[Reference] = []
    doc_owner = next((walk.owners.names_word(w) for w in _WORD.findall(context) if walk.owners.names_word(w)), "")
    if not doc_owner:
        doc_owner = walk.owners.primary or min(walk.owners.commands, default="(repository)")
    for it in walk.items:
        ref = it.ref
        if ref is None:
            continue
        if ref.kind == "env" and walk.owners.is_prefix(ref.name):
            out.append(replace(ref, command=ref.name.split("_", 1)[0].lower(), rule="prefix"))
            continue
        near, rule = _nearest(it, cmds)
        if it.listing and (rule != "sentence" or near is not None and near.line != it.line):
            # an options table row or listing entry: a command on its own line (cell, term), else the
            # document's subject; not a row above, nor the words of its description below
            near = None
        if near is None:
            if ref.kind == "env" and all(c.own for c in cmds):
                out.append(ref)  # no other program named here: the checker asks the code about its first part
            elif ref.kind == "flag":  # a table whose rows start with options lists the subject's options
                out.append(replace(ref, command=doc_owner, rule="listing" if it.listing else "document"))
            continue
        if near.own:
            out.append(replace(ref, command=near.word, rule=rule))
        elif near.path:
            out.append(replace(ref, command=near.path, rule="script"))
    return out


def section_references(text: str, start_line: int, owners: Owners | None = None, context: str = "") -> list[Reference]:
    """Every reference of a section's text (its first line is file line ``start_line``), in
    line order; the same name on the same line once. Flags and environment variables are kept
    only when the docs present them as the repository's own (``owners``; see the module doc);
    ``context`` (file path and heading path) names the document's subject."""
    walk = _Walk(owners or Owners())
    tokens = _parser().parse(text)
    lines = text.split("\n")
    refs: list[Reference] = []
    cell = -1
    for tok in tokens:
        if tok.type == "tr_open":
            cell = -1
        elif tok.type in ("th_open", "td_open"):
            cell += 1
        if tok.type == "inline" and tok.map and tok.children:
            walk.first_cell = cell == 0 and bool(_OPTIONS_CELL.fullmatch(tok.content.strip())) \
                or _option_entry(tok.content)
            refs.extend(_inline(walk, tok, lines, start_line))
            walk.first_cell = False
        elif tok.type in ("fence", "code_block") and tok.map:
            lang = tok.info.strip().split()[0].lower() if tok.info.strip() else ""
            refs.extend(_block_refs(walk, lang, tok.content, start_line + tok.map[0] + (tok.type == "fence")))
        elif tok.type == "html_block" and tok.map:
            refs.extend(_html_block(walk, tok.content, start_line + tok.map[0]))
    refs.extend(_resolve_lone(walk, context))
    # an upper-case name alone (`MAX_RETRIES`, `ORT_DISABLE_ALL`) is as often a constant of some
    # library as a variable: it counts as one only where the section speaks of the environment
    env_context = bool(_ENV_CONTEXT.search(text))
    seen: set[tuple[str, int]] = set()
    out = []
    for ref in sorted(refs, key=lambda r: r.line):
        if ref.kind == "env" and ref.rule not in ("shell", "prefix") and not env_context:
            continue
        if (ref.name, ref.line) not in seen:
            seen.add((ref.name, ref.line))
            out.append(ref)
    return out
