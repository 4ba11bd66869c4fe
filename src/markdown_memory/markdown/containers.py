"""Docs-site containers: blocks whose body is Markdown, read as containers, not as indented code.

Site generators wrap tabs, admonitions and callouts in their own syntax, and their bodies are
often indented. A CommonMark parser reads a body indented by 4 spaces after a blank line as an
indented code block: a fenced ```` ```bash ```` inside a tab becomes text of a code block with no
language, an admonition's prose is classed as code (case 052). Two shapes cover the dialects:

- **Indented bodies** (the body is every following line that is blank or indented at least 4
  more than the marker): MkDocs / Python-Markdown admonitions ``!!! note "Title"``, pymdownx
  details ``??? tip`` and ``???+ tip`` (mdit-py-plugins' ``admon`` plugin), and pymdownx content
  tabs ``=== "Linux"`` / ``===+ "Linux"`` (:func:`_tab`).
- **Paired markers** (an opener line and its closer line; only when the closer exists, so a stray
  marker never swallows the rest of a file): Docusaurus / VitePress ``:::note`` / ``::: tip`` /
  ``::: code-group`` ... ``:::`` (colon counts pair; MyST's ``:::{note}`` too), pymdownx blocks
  ``/// tab | Linux`` ... ``///``, MDX components on their own lines
  (``<Tabs>``, ``<TabItem value="x">`` ... ``</TabItem>``), Hugo shortcodes
  ``{{< tab "Linux" >}}`` ... ``{{< /tab >}}`` and ``{{% notice %}}`` ... ``{{% /notice %}}``, and
  mdBook directives ``{{#tabs}}`` ... ``{{#endtabs}}`` (:func:`_paired`), and MyST directive
  fences of prose directives ```` ```{note} ```` ... ```` ``` ```` (:func:`_myst`). Their bodies are read
  as written, indentation removed up to the body's own least indent (authors indent inside
  components for readability; MDX has no indented code at all).

A container's label (``"Linux"``, an admonition's title, ``label="npm"``) is a paragraph of its
own; its body's blocks are nested (``level`` > 0): a heading inside a container is a passage, not
a section (case 011). Fenced code inside a container keeps its language.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.ruler import RuleOptionsType
from markdown_it.rules_block import StateBlock
from mdit_py_plugins.admon import admon_plugin

#: ``=== "Label"`` / ``===+ "Label"`` (pymdownx.tabbed; ``===!`` starts a new tab group)
_TAB = re.compile(r'^===[+!]{0,2}[ \t]+"([^"\n]*)"[ \t]*$')
#: one regex per paired dialect: (family, opener, closer); ``name`` names the pairing key
_PAIRED: tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...] = (
    ("colon", re.compile(r"^(?P<name>:{3,})[ \t]*(?P<rest>(?:[A-Za-z][\w-]*|\{[\w-]+\}).*)$"),
     re.compile(r"^(?P<name>:{3,})[ \t]*$")),
    ("slash", re.compile(r"^(?P<name>/{3,})[ \t]*(?P<rest>[A-Za-z][\w-]*.*)$"), re.compile(r"^(?P<name>/{3,})[ \t]*$")),
    ("jsx", re.compile(r"^<(?P<name>[A-Z][\w.]*)(?P<rest>(?:[ \t][^<>]*)?)(?<!/)>[ \t]*$"),
     re.compile(r"^</(?P<name>[A-Z][\w.]*)[ \t]*>[ \t]*$")),
    ("hugo", re.compile(r"^\{\{(?:<[ \t]*(?P<name>[\w-]+)(?P<rest>[^/<>]*)>|%[ \t]*(?P<pname>[\w-]+)(?P<prest>[^/%]*)%)\}\}[ \t]*$"),
     re.compile(r"^\{\{(?:<[ \t]*/[ \t]*(?P<name>[\w-]+)[ \t]*>|%[ \t]*/[ \t]*(?P<pname>[\w-]+)[ \t]*%)\}\}[ \t]*$")),
    ("mdbook", re.compile(r"^\{\{#(?P<name>(?!end)[\w-]+)(?P<rest>[^}]*)\}\}[ \t]*$"),
     re.compile(r"^\{\{#end(?P<name>[\w-]+)[ \t]*\}\}[ \t]*$")),
)
#: the attributes that name a tab or callout (``<TabItem value="x" label="Linux">``: "Linux")
_NAMED = re.compile(r"""\b(?:label|title|name)=["']([^"'\n]*)""")
#: MyST directive fences whose body is Markdown (```{note}, ```{admonition} Title, ```{tab-item} Linux);
#: others (```{code-block} python, ```{literalinclude}, ```{math}) stay code
_MYST = re.compile(r"^(?P<fence>`{3,}|~{3,})\{(?P<name>[\w-]+)\}(?P<rest>[^`]*)$")
MYST_PROSE = frozenset({
    "admonition", "note", "tip", "hint", "important", "warning", "caution", "attention", "danger", "error",
    "seealso", "dropdown", "tab-item", "tab-set", "card", "grid", "grid-item", "grid-item-card", "margin",
    "sidebar", "topic", "epigraph", "div", "versionadded", "versionchanged", "deprecated", "todo", "tabbed",
})
_QUOTED = re.compile(r'"([^"\n]*)"|\'([^\'\n]*)\'')
_PAIRS = "markdown_memory_container_pairs"
_MAX_LABEL = 200


def container_plugin(md: MarkdownIt) -> MarkdownIt:
    """Install the container rules on ``md`` (before fences, so a container's own lines are never
    paragraph text and its body is parsed as blocks). Returns ``md``."""
    admon_plugin(md)
    alt: RuleOptionsType = {"alt": ["paragraph", "reference", "blockquote", "list"]}
    md.block.ruler.before("fence", "mm_tab", _tab, alt)
    md.block.ruler.before("fence", "mm_myst", _myst, alt)
    md.block.ruler.before("html_block", "mm_paired", _paired, alt)
    return md


def _line(state: StateBlock, line: int) -> str:
    return state.src[state.bMarks[line] + state.tShift[line]:state.eMarks[line]]


def _push_label(state: StateBlock, line: int, label: str) -> None:
    """The container's label as a paragraph of its own (the passage a tab's name is found by)."""
    label = label.strip()[:_MAX_LABEL]
    if not label:
        return
    token = state.push("paragraph_open", "p", 1)
    token.map = [line, line + 1]
    token = state.push("inline", "", 0)
    token.content, token.map, token.children = label, [line, line + 1], []
    state.push("paragraph_close", "p", -1)


def _nest(state: StateBlock, start: int, body_end: int, end: int, indent: int, info: str, label: str) -> None:
    """Push a container of lines [start, end) whose body [start + 1, body_end) is read at block
    indent ``indent``; the parse continues at ``end``."""
    old = (state.parentType, state.lineMax, state.blkIndent)
    token = state.push("container_open", "div", 1)
    token.info, token.map, token.block = info, [start, end], True
    _push_label(state, start, label)
    state.parentType, state.lineMax, state.blkIndent = "container", body_end, indent
    state.md.block.tokenize(state, start + 1, body_end)
    state.parentType, state.lineMax, state.blkIndent = old
    state.push("container_close", "div", -1).block = True
    state.line = end


def _tab(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """pymdownx content tab: ``=== "Label"`` then lines blank or indented 4 past the marker."""
    if state.sCount[start] - state.blkIndent >= 4:
        return False
    m = _TAB.match(_line(state, start))
    if m is None:
        return False
    if silent:
        return True
    indent = state.sCount[start] + 4
    line, last = start + 1, start
    while line < end:
        if not state.isEmpty(line):
            if state.sCount[line] < indent:
                break
            last = line
        line += 1
    _nest(state, start, last + 1, last + 1, indent, "tab", m.group(1))
    return True


def _myst(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """A MyST directive fence of a prose directive (:data:`MYST_PROSE`) up to its closing fence
    (same character, at least as long): the body is Markdown; ``:key: value`` option lines are
    kept as text. Without a closing fence it is not one (the fence rule takes it)."""
    if state.sCount[start] - state.blkIndent >= 4:
        return False
    m = _MYST.match(_line(state, start))
    if m is None or m.group("name").lower() not in MYST_PROSE:
        return False
    fence = m.group("fence")
    closer = start + 1
    while closer < end:
        text = _line(state, closer)
        if (text.startswith(fence) and not text.strip().strip(fence[0])
                and state.sCount[closer] - state.blkIndent < 4):
            break
        closer += 1
    else:
        return False
    if silent:
        return True
    indents = [state.sCount[k] for k in range(start + 1, closer) if not state.isEmpty(k)]
    indent = max(state.blkIndent, min(indents, default=state.blkIndent))
    _nest(state, start, closer, closer + 1, indent, "myst", m.group("rest").strip())
    return True


def _pairs(state: StateBlock) -> dict[int, tuple[str, int, str]]:
    """opener line -> (family, closer line, label) for the whole source, paired once per parse
    with a stack per (family, name): linear, whatever the number of unclosed markers."""
    cached = state.env.get(_PAIRS)
    if cached is not None and cached[0] is state.src:
        return cached[1]  # type: ignore[no-any-return]
    pairs: dict[int, tuple[str, int, str]] = {}
    stacks: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for number, raw in enumerate(state.src.split("\n")):
        text = raw.lstrip(" \t>")
        if not text or text[0] not in ":<{/":
            continue
        for family, opener, closer in _PAIRED:
            m = closer.match(text)
            if m is not None:
                stack = stacks.get((family, _name(m)))
                if stack:
                    line, label = stack.pop()
                    pairs[line] = (family, number, label)
                break
            m = opener.match(text)
            if m is not None:
                stacks.setdefault((family, _name(m)), []).append((number, _label(family, m)))
                break
    state.env[_PAIRS] = (state.src, pairs)
    return pairs


def _name(m: re.Match[str]) -> str:
    """The pairing key of an opener or closer (a Hugo ``{{% %}}`` pair is not a ``{{< >}}`` one)."""
    groups = m.groupdict()
    return groups["name"] or f"%{groups.get('pname')}"


def _label(family: str, m: re.Match[str]) -> str:
    """The words a reader sees on the opener: its ``label``/``title``/``name`` attributes, else its
    distinct quoted values (a tab's name, a title), else for ``:::note Title`` / ``:::note[Title]`` the text after the type."""
    groups = m.groupdict()
    rest = groups.get("rest") or groups.get("prest") or ""
    quoted = _NAMED.findall(rest) or [a or b for a, b in _QUOTED.findall(rest)]
    if any(quoted):
        return " ".join(dict.fromkeys(q for q in quoted if q))
    if family == "slash":  # pymdownx blocks: /// tab | Linux
        return rest.partition("|")[2].strip()
    if family == "colon":
        return rest.partition(" ")[2].strip() or rest.partition("[")[2].rstrip("] \t")
    return ""


def _paired(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """A paired container (``:::``, MDX component, Hugo shortcode, mdBook directive) whose closer
    is at most ``end``: the body in between, read at its own least indentation."""
    if state.sCount[start] - state.blkIndent >= 4:
        return False
    first = state.src[state.bMarks[start] + state.tShift[start]:state.bMarks[start] + state.tShift[start] + 1]
    if first not in (":", "<", "{", "/"):
        return False
    found = _pairs(state).get(start)
    if found is None or found[1] >= end:
        return False
    if silent:
        return True
    family, closer, label = found
    indents = [state.sCount[k] for k in range(start + 1, closer) if not state.isEmpty(k)]
    indent = max(state.blkIndent, min(indents, default=state.blkIndent))
    _nest(state, start, closer, closer + 1, indent, family, label)
    return True

