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

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token


@dataclass(frozen=True)
class Reference:
    """One name a section gives as code. ``name`` as written (``--dry-run``, ``FOO_BAR``,
    ``src/app.py``, ``Client.stream()``); ``kind`` flag | env | path | name | import; ``line``
    1-based in the file; ``command`` the shell command word a flag or env var was given with
    ("" when alone); ``module`` an import's module (``pkg.mod``), else ""."""

    name: str
    kind: str
    line: int
    command: str = ""
    module: str = ""


SHELL_LANGS = frozenset({"sh", "bash", "shell", "console", "shell-session", "zsh", "shellsession", "sh-session",
                         "text", "", "none", "cmd", "powershell", "ps1", "fish"})
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
                               "flags", "envvar", "envvars"})
_PLACEHOLDER_PREFIX = re.compile(r"^(?:your|my|some|example)[_-]", re.IGNORECASE)
_PLACEHOLDER_MARK = re.compile(r"[<>{}\[\]*$…]|\.\.\.|XXX|_HERE\b|^YOUR_|^MY_", re.IGNORECASE)

_FLAG = re.compile(r"^--([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)(?:[= ][^\s]*)?$")
_FLAG_ANY = re.compile(r"(?<![\w-])--([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)")
_ENV = re.compile(r"^\$?\{?([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\}?$")
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
    return MarkdownIt("commonmark")


#: files every project of a kind has: a path ending in one is the reader's project, not this one
CONVENTIONAL_FILES = frozenset({"conftest.py", "settings.py", "app.py", "main.py", "manage.py", "wsgi.py", "asgi.py",
                                "urls.py", ".env", "Dockerfile", "docker-compose.yml", "Procfile"})


def is_placeholder(name: str) -> bool:
    """True for a name that stands for the reader's own value (``<name>``, ``YOUR_TOKEN``, ``foo``)."""
    if _PLACEHOLDER_MARK.search(name) or _PLACEHOLDER_PREFIX.match(name.lstrip("-$./")):
        return True
    parts = [p.lower() for p in re.split(r"[^A-Za-z0-9]+", name) if p]
    return any(p in PLACEHOLDER_WORDS for p in parts)


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


def _span_line(lines: list[str], start: int, end: int, content: str) -> int:
    """0-based line (within ``lines[start:end]``) holding the code span ``content``."""
    for i in range(start, min(end, len(lines))):
        if content in lines[i]:
            return i
    return start


def _shell_refs(line: str, lineno: int, console: bool, commands: list[tuple[int, str]] | None = None) -> list[Reference]:
    """References on one shell line: the flags and assigned env vars of its command. The command
    word (even a well-known one) is appended to ``commands`` as ``(line, word)``."""
    text = line.strip()
    if console or text.startswith(("$ ", "> ", "% ")):
        if not text.startswith(("$ ", "% ")):
            return []  # a console block's output, or a prompt continuation
        text = text[2:].strip()
    if not text or text.startswith("#"):
        return []
    words = text.split()
    envs: list[str] = []
    if words and words[0] in ("export", "set", "setx", "unset"):
        return []  # sets a variable for whatever runs next (see below)
    while words and (_ASSIGN.match(words[0]) or words[0] in ("sudo", "env")):
        m = _ASSIGN.match(words[0])
        if m:
            envs.append(m.group(1))
        words = words[1:]
    command = words[0] if words else ""
    if command and commands is not None:
        commands.append((lineno, command))
    if command in KNOWN_COMMANDS or (command and not re.fullmatch(r"[\w.-]+", command)):
        return []
    # only a variable given to a command is the command's (`APP_MODE=1 app run`); `export X=1`
    # alone sets something for whatever runs next, often another tool (`FZF_DEFAULT_COMMAND`)
    refs = [Reference(e, "env", lineno, command) for e in envs
            if command and e not in KNOWN_ENV and not is_placeholder(e)]
    if command:
        rest = " ".join(words[1:])
        refs.extend(Reference("--" + m.group(1), "flag", lineno, command) for m in _FLAG_ANY.finditer(rest)
                    if not is_placeholder(m.group(1)))
    return refs


def span_reference(content: str, lineno: int, commands: list[tuple[int, str]] | None = None) -> list[Reference]:
    """The references of one code span (see the module doc for the shapes); a span that is a
    command line appends its command word to ``commands``."""
    text = content.strip()
    if not text or is_placeholder(text):
        return []
    if " " in text:
        return _shell_refs(text, lineno, console=False, commands=commands)
    if text in KNOWN_COMMANDS and commands is not None:  # "the `tree` command with `--fromfile`"
        commands.append((lineno, text))
        return []
    if m := _FLAG.match(text):
        return [Reference("--" + m.group(1), "flag", lineno)]
    if m := _ENV.match(text):
        return [] if m.group(1) in KNOWN_ENV else [Reference(m.group(1), "env", lineno)]
    if "://" not in text and (m := _PATH.match(text)):
        path = m.group(1) or m.group(2)
        return [] if path.rsplit("/", 1)[-1] in CONVENTIONAL_FILES else [Reference(path, "path", lineno)]
    if m := _CALL.match(text):
        return [Reference(m.group(1) + "()", "name", lineno)]
    if (m := _DOTTED.match(text)) and not _FILE_SUFFIX.search(text):
        return [Reference(m.group(1), "name", lineno)]
    return []


def _block_refs(lang: str, content: str, first: int, start_line: int,
                commands: list[tuple[int, str]]) -> list[Reference]:
    refs: list[Reference] = []
    for i, line in enumerate(content.split("\n")):
        lineno = start_line + first + i
        if lang in SHELL_LANGS:
            refs.extend(_shell_refs(line, lineno, console=lang in ("console", "shell-session", "shellsession",
                                                                  "sh-session"), commands=commands))
        elif lang in PYTHON_LANGS and (m := _FROM_IMPORT.match(line.removeprefix(">>> "))):
            for name in re.split(r"[\s,]+", m.group(2)):
                if name and name != "as" and not is_placeholder(name):
                    refs.append(Reference(name, "import", lineno, module=m.group(1)))
                    if " as " in m.group(2):
                        break  # `import a as b`: only the first name is reliably a module member
    return refs


def section_references(text: str, start_line: int) -> list[Reference]:
    """Every reference of a section's text (its first line is file line ``start_line``), in
    line order; the same name on the same line once."""
    tokens = _parser().parse(text)
    lines = text.split("\n")
    refs: list[Reference] = []
    commands: list[tuple[int, str]] = []
    for tok in tokens:
        if tok.type == "inline" and tok.map and tok.children:
            for child in tok.children:
                if child.type == "code_inline":
                    line = _span_line(lines, tok.map[0], tok.map[1], child.content)
                    refs.extend(span_reference(child.content, start_line + line, commands))
    for lang, content, first in _code_blocks(tokens):
        refs.extend(_block_refs(lang, content, first, start_line, commands))
    # an upper-case name alone (`MAX_RETRIES`, `ORT_DISABLE_ALL`) is as often a constant of some
    # library as a variable: it counts as one only where the section speaks of the environment
    env_context = bool(_ENV_CONTEXT.search(text))
    seen: set[tuple[str, int]] = set()
    out = []
    for ref in sorted(refs, key=lambda r: r.line):
        if ref.kind == "env" and not ref.command and not env_context:
            continue
        if ref.kind == "flag" and not ref.command:
            # a flag alone belongs to the last command named before it in the section (`cargo
            # outdated` ... `--aggressive`): another tool's flag is not the project's
            before = [c for line, c in commands if line <= ref.line]
            if before and before[-1] in KNOWN_COMMANDS:
                continue
            if before:
                ref = Reference(ref.name, ref.kind, ref.line, before[-1])
        if (ref.name, ref.line) not in seen:
            seen.add((ref.name, ref.line))
            out.append(ref)
    return out
