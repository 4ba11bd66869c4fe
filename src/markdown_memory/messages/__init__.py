"""The sentences answers carry: what is wrong with the index or the model, and what to do.

One place for each wording, so the CLI and the MCP server say the same thing. Each function
is pure: it gets the facts and returns one sentence (or None when there is nothing to say).
By audience: this module holds what both a person and an agent read (answers, status; a
:class:`Context` says who reads, with an explicit ``reader.Reader``), ``agent.py`` what only
an agent reads (tool refusals and progress, the hook), ``cli.py`` what only a person at a
terminal reads; both are re-exported here. A search answer's sentences are made from its
typed notes (``models.notes``) by :func:`render_notes`. This package sits low: it imports
only ``config``, ``models``, ``reader`` and ``text``; the facts that live above it (which
preset can load, which made some vectors, which file names are Markdown) come as arguments.
``setup``'s sentences are in ``messages_setup``.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..config import DEFAULT_EMBEDDER
from ..models import IndexCounts, IndexProgress
from ..models.notes import (
    BusyElsewhere,
    NoConfidentMatch,
    NoDocumentsUnder,
    NoFilterMatch,
    Note,
    PartlyKeywordOnly,
    QueryCut,
    Said,
    StaleHits,
    VectorsPending,
)
from ..models.notes import OtherVectors as OtherVectors  # re-exported: embed/choice.py builds it
from ..reader import ProgramSentence, Reader, for_reader, working_folder
from ..reader import program as program  # re-exported: every sentence that names the command uses it
from ..text import short_cause
from .agent import HOOK_CUT as HOOK_CUT
from .agent import MAP_RESOURCE as MAP_RESOURCE
from .agent import hook_bad_payload as hook_bad_payload
from .agent import hook_budget_clamped as hook_budget_clamped
from .agent import hook_failed as hook_failed
from .agent import hook_ignored as hook_ignored
from .agent import hook_lead as hook_lead
from .agent import hook_no_index as hook_no_index
from .agent import hook_stdin as hook_stdin
from .agent import hook_usage as hook_usage
from .agent import index_in_progress as index_in_progress
from .agent import invalid_argument as invalid_argument
from .agent import map_unavailable as map_unavailable
from .agent import tool_progress as tool_progress
from .cli import dashed_query_hint as dashed_query_hint
from .cli import progress_line as progress_line
from .cli import query_after_dashes as query_after_dashes


@dataclass(frozen=True)
class Context:
    """What every message depends on: the docs root, the embedder preset (``chosen``: why, when
    nothing named it, see ``embed/choice.py``), whether a background indexer keeps the index
    current (the MCP server with auto-index), and whether the reader is an agent calling MCP
    tools (``agent``) or a person at the CLI: each is told the commands it can run;
    ``by_env``: MARKDOWN_MEMORY_EMBEDDER named the preset, not ``--embedder``; ``reader``: who
    reads (their program and folder, ``reader.Reader``; None: this process's, at the time)."""

    root: Path
    embedder: str
    background: bool
    agent: bool = False
    chosen: str | None = None
    by_env: bool = False
    reader: Reader | None = None

    def for_reader(self, reader: Reader) -> Context:
        """This context as ``reader`` reads it (their program, folder and audience)."""
        return replace(self, reader=reader, agent=reader.agent)

    @property
    def program(self) -> str:
        """The command the reader types (shell-quoted)."""
        return self.reader.program if self.reader is not None else program()


def prepend_note(note: str, message: str | None) -> str:
    """``note`` first, then the answer's other ``message`` if any: ``"note; message"``."""
    return f"{note}; {message}" if message else note


def append_note(message: str | None, note: str) -> str:
    """The answer's ``message`` if any, then ``note`` (one of less weight): ``"message; note"``."""
    return f"{message}; {note}" if message else note


def _root_argument(ctx: Context) -> str:
    """`` <root>`` (shell-quoted) unless the docs root is the reader's working directory: a
    command pasted from another folder must index this root, not the folder it is pasted in."""
    try:
        cwd = ctx.reader.cwd if ctx.reader is not None else working_folder()
        if cwd is not None and cwd.resolve() == Path(ctx.root).resolve():
            return ""
    except OSError:
        pass
    return " " + shlex.quote(str(ctx.root))


def index_hint(ctx: Context) -> str:
    """How to run an index for this root with this embedder: for an agent the MCP tool (and the
    CLI command), for a person the CLI command (with ``--embedder`` when it is not the default,
    which a bare command would use, and the root unless it is the working directory)."""
    flag = "" if ctx.embedder == DEFAULT_EMBEDDER else f" --embedder {ctx.embedder}"
    command = f"`{ctx.program}{flag} index{_root_argument(ctx)}`"
    return f"call index_directory (or run {command})" if ctx.agent else f"run {command}"


def keyword_only(ctx: Context, *, vec_available: bool, model_error: str | None, not_installed: bool,
                 loading: bool, instead: str | None = None) -> str | None:
    """Why search has no vectors, when the cause is known without looking at the index:
    keyword-only by choice, sqlite-vec missing, the model not installed or failing, or still
    loading in the background. Short on purpose: it rides on every answer. ``instead``: a
    preset that loads here without a download, offered when the model is not installed (None:
    none is, or it is the configured one)."""
    if ctx.embedder == "none":
        how = "MARKDOWN_MEMORY_EMBEDDER=none" if ctx.by_env else "--embedder none"
        return f"keyword-only by choice ({how}); vectors are not computed"
    if not vec_available:
        return ("keyword-only: sqlite-vec cannot be loaded by this Python; install `sqlean.py` "
                "(pip install sqlean.py) to enable vector search")
    if model_error:
        if not_installed:
            other = (f", or use `--embedder {instead}` (no download; for the MCP server set "
                     f"MARKDOWN_MEMORY_EMBEDDER={instead} in its registration)"
                     if instead and instead != ctx.embedder else "")
            return (f"keyword-only: the {ctx.embedder} model is not installed; run "
                    f"`{ctx.program} --download-model`{other}")
        return f"keyword-only: {short_cause(for_reader(model_error, ctx.program) or '')} (`{ctx.program} status` shows how to fix it)"
    if loading:
        return (f"keyword-only for now: the {ctx.embedder} model is still loading "
                "(semantic search warming up); retry in a few seconds for semantic results")
    return None


def vectors_pending() -> str:
    return "keyword-only: vectors are still being computed for this index"


def partly_keyword_only(ctx: Context, pending: int, passages: int) -> str:
    """A hybrid search over an index where ``pending`` of ``passages`` have no vector yet (a run
    was stopped, or new text waits for its embedding): their sections are found by keywords only."""
    how = ("they are being computed in the background" if ctx.background else
           f"{index_hint(ctx)} to compute them")
    return f"search is partly keyword-only: {pending} of {passages} passages have no vector yet; {how}"


def other_vectors(ctx: Context, other: OtherVectors) -> str:
    """Why search is keyword-only when the stored vectors are not the configured model's, and
    the fix: another preset's vectors name the flag that uses them, and the re-index that
    replaces them only when the configured model can load (else that run keeps them)."""
    how = index_hint(ctx)
    configured = ctx.embedder
    itself = " (the server starts it by itself)" if ctx.background else ""
    maker = other.maker
    loads = other.configured_loads
    if maker and maker != configured:
        fix = f"or {how} to re-embed them with {configured}{itself}" if loads else (
            f"they are kept while the {configured} model cannot load here")
        use = (f"run with `--embedder {maker}` (MARKDOWN_MEMORY_EMBEDDER={maker}) to use them" if other.maker_loads
               else f"the {maker} model cannot load here either (install it again to use them)")
        return (f"keyword-only: the index's vectors were made by the {maker} model ({other.weights_id}), not the "
                f"configured {configured}; {use}; {fix}")
    fix = f"{how} to re-embed them{itself}" if loads else f"they are kept while the {configured} model cannot load here"
    return (f"keyword-only: the index's vectors were made by another build of the {configured} model "
            f"({other.weights_id}); {fix}")


def empty_index(ctx: Context, *, indexing: bool, ever_indexed: bool, moved: str | None = None,
                files_found: int | None = None, suffixes: Sequence[str] = ()) -> str:
    """Why a search found nothing when the index holds no document at all: the damaged database
    was moved aside to ``moved`` and is being rebuilt, the root was never indexed (and how to
    index it), its first run is under way, or the last run found nothing (``files_found``: the
    Markdown files its walk listed, 0 when there were none at all; ``suffixes``: the Markdown
    extensions, ``files.walk.MARKDOWN_SUFFIXES``)."""
    root = str(ctx.root)
    if moved and (indexing or ctx.background):
        return (f"the index database was damaged and was moved aside to {moved}; it is being rebuilt from the files "
                "in the background, so no document is searchable yet (this says nothing about what the docs "
                "cover); search again shortly")
    if moved:
        return (f"the index database was damaged and was moved aside to {moved}; {index_hint(ctx)} to rebuild "
                "it, then search again")
    if indexing:
        return (f"the docs root {root!r} is being indexed and no document is searchable yet (this says nothing "
                "about what the docs cover); search again shortly")
    if not ever_indexed:
        return (f"the docs root {root!r} has not been indexed yet, so no document was searched (this says "
                f"nothing about what the docs cover); {index_hint(ctx)} to index it, then search again")
    if files_found == 0:
        return (f"the index of the docs root {root!r} holds no documents: the last index run found no Markdown "
                f"file there (files count as Markdown by their extension: {', '.join(suffixes)})")
    return (f"the index of the docs root {root!r} holds no documents: the last index run found no Markdown "
            f"file it could index there (its failures are in `{ctx.program} status`)")


def query_cut(length: int, limit: int) -> str:
    """A search query of ``length`` characters, over ``limit``: only its first ``limit`` were
    searched (``engine.Engine.search``, for the CLI and the MCP tool alike)."""
    return (f"the query is {length:,} characters long; only its first {limit:,} were searched "
            "(pass the words, identifier or error line that matter)")


QUOTE_CHARS, QUOTED_FRAGMENTS = 40, 3  # a message never echoes the query at length (issue 26)


def quote_query(fragments: list[str]) -> str:
    """The one rule for quoting query text in a message: the first ``QUOTED_FRAGMENTS``, each cut
    to ``QUOTE_CHARS`` characters (an ellipsis marks a cut), quoted; "and N more" for the rest."""
    shown = [f"'{f if len(f) <= QUOTE_CHARS else f[:QUOTE_CHARS - 1] + '…'}'" for f in fragments[:QUOTED_FRAGMENTS]]
    return ", ".join(shown) + (f" and {len(fragments) - len(shown)} more" if len(fragments) > len(shown) else "")


def no_confident_match(absent: list[str]) -> str:
    """A search with no confident hit; ``absent``: query identifiers no document contains."""
    note = "no confident match: nothing in the docs clearly answers this query"
    return note + ("; no document mentions " + quote_query(absent) if absent else "")


def no_documents_under(ctx: Context, prefix: str) -> str:
    how = "list_documents" if ctx.agent else f"`{ctx.program} list`"
    return f"no indexed documents under {prefix!r}; list the indexed paths with {how}"


def stale_hits(ctx: Context, flagged: int) -> str:
    """Hits whose file changed on disk since it was indexed (flagged ``stale``)."""
    reader = "read_section" if ctx.agent else f"`{ctx.program} read`"
    how = ("they are re-indexed automatically; search again shortly" if ctx.background else
           f"{index_hint(ctx)} to refresh the index ({reader} reads a file's current text)")
    return (f"{flagged} hit(s) marked stale: their file changed on disk since it was indexed, so their "
            f"text and lines may be outdated; {how}")


def busy_elsewhere(ctx: Context, documents: int, vectors: int) -> str:
    """An answer made while another process is indexing the same docs root."""
    return (f"another index run is in progress for this docs root, so results may be incomplete until it "
            f"finishes ({documents} documents and {vectors} vectors indexed so far); "
            f"search again when `{ctx.program} status` no longer says indexing")


def list_busy_elsewhere() -> str:
    return ("another index run is in progress for this docs root, so the list may be "
            "incomplete until it finishes")


def offset_past_end(offset: int, total: int) -> str:
    return f"offset {offset} is past the end: {total} documents in all; pass an offset below {total}"


def empty_folder(ctx: Context, rel: str, directory: str) -> str:
    """Why folder ``rel`` (as the caller typed it: ``directory``) lists no document: it does
    not exist, it is a file, or nothing in it is indexed."""
    target = ctx.root / rel
    if not target.exists():
        return f"{directory!r} does not exist under the docs root {str(ctx.root)!r}"
    if not target.is_dir():
        return (f"{rel!r} is a file, not a folder; {'list_documents' if ctx.agent else f'`{ctx.program} list`'} "
                "takes a folder under the docs root")
    return (f"nothing under {rel!r} is indexed (it holds no Markdown files, they are excluded, or they are not "
            f"indexed yet: {index_hint(ctx)})")


def file_too_large(size: int, limit: int) -> str:
    """Why a file is not indexed: its size and the limit (bytes), and how to raise the limit."""
    from ..text import human_size

    return (f"{human_size(size)} is over the {human_size(limit, exact=True)} file size limit; not indexed (raise the limit "
            "with --max-file-mb or MARKDOWN_MEMORY_MAX_FILE_MB to index it)")


def not_a_folder_to_index(directory: str, link: str | None, root: Path) -> str:
    """index_directory / ``Engine.index`` on a path that is not a real folder in the root;
    ``link``: the symlinked folder on its way (its target is never named)."""
    if link is not None:
        return (f"{link!r} is a symbolic link, and linked folders are never followed (each real file is "
                "indexed once); index the real folder it points to inside the docs root, or the whole root")
    return f"{directory!r} is not a directory inside the docs root {str(root)!r}"


def index_busy(root: Path) -> str:
    return f"another index run is in progress for {str(root)!r}; try again when it finishes"


def status_sentence(ctx: Context, *, counts: IndexCounts, changed: int, indexing: bool,
                    progress: IndexProgress | None, ever_indexed: bool, keyword_only: bool,
                    moved: str | None, other_build: OtherVectors | None, known_cause: str | None,
                    model_problem: str | None, files_found: int | None = None) -> str | None:
    """The one sentence of ``status`` an agent should act on, most urgent first (None when
    healthy). ``files_found``: how many Markdown files the last full walk found (None: unknown). ``known_cause``: :func:`keyword_only`'s answer; ``other_build``: the stored
    vectors when another model made them; ``model_problem``: why the configured preset cannot
    load, from its files (``embed.base.model_problem``), None when they are in place."""
    how = index_hint(ctx)
    if moved and (indexing or ctx.background):
        return (f"the index database was damaged and was moved aside to {moved}; it is being rebuilt, "
                "so results are incomplete until that finishes")
    if moved:
        return f"the index database was damaged and was moved aside to {moved}; {how} to rebuild it"
    if indexing:
        done = ""
        if progress:
            unit = "files" if progress.phase == "parse" else "passages embedded"
            done = f" ({progress.done}/{progress.total} {unit})"
        first = " for the first time" if not ever_indexed else ""
        return (f"indexing{first} in progress{done}: results may be incomplete until it finishes; "
                "search again shortly")
    if not ever_indexed and counts.documents:
        of = f" of {files_found} files" if files_found is not None and files_found >= counts.documents else ""
        return (f"the last index run did not finish ({counts.documents}{of or ' documents'} indexed so far); "
                f"{how} to complete it")
    if not ever_indexed:
        if ctx.background:
            return "the docs root has not been indexed yet; indexing starts with the first search"
        return f"the docs root has not been indexed yet; {how}"
    if changed:
        if ctx.background:
            return (f"{changed} indexed file(s) changed on disk and are re-indexed automatically "
                    "within seconds; hits from them may be outdated until then")
        return f"{changed} indexed file(s) changed on disk; {how} to refresh them"
    if other_build and not known_cause:
        return other_vectors(ctx, other_build)
    if keyword_only:
        if known_cause:
            return known_cause
        if model_problem:
            return f"keyword-only: {for_reader(model_problem, ctx.program)}; then re-index"
        return f"no vectors yet: {how} to compute them"
    if counts.pending_vectors:
        waiting = (f"{counts.pending_vectors} of {counts.passages} passages still wait for vectors; "
                   "search is partly keyword-only")
        # a background server embeds them in its next run; otherwise only an index run does
        return waiting if ctx.background else f"{waiting}; {how} to compute them"
    return None


# -- search filters (store/scope.py) ----------------------------------------------------------
def _filters_text(filters: dict[str, object], tags_mode: str) -> str:
    parts = []
    for name, value in filters.items():
        if name == "tags" and isinstance(value, tuple):
            joined = (" and " if tags_mode == "all" else " or ").join(repr(t) for t in value)
            parts.append(f"tags {joined}")
        else:
            parts.append(f"{name} {value!r}")
    return ", ".join(parts)


def no_filter_match(ctx: Context, empty: list[str], filters: dict[str, object], tags_mode: str) -> str:
    """A search whose filters (``filters``: name -> value of each one set, the path prefix
    aside; ``store.scope.Scope.filters``) leave nothing to search: ``empty`` names those that
    match nothing on their own (``store.scope.empty_filters``); [] means only their combination
    does. A filter without a sentence of its own here gets the generic one."""
    lister = "list_documents" if ctx.agent else f"`{ctx.program} list`"
    name = empty[0] if empty else None
    value = filters.get(name) if name else None
    if name == "tags" and isinstance(value, tuple):
        mode = "every one of" if tags_mode == "all" and len(value) > 1 else "any of" if len(value) > 1 else ""
        what = f"{mode} the tags {', '.join(repr(t) for t in value)}" if mode else f"the tag {value[0]!r}"
        return (f"filter tags matched nothing: no indexed document carries {what} (nested tags included); "
                f"{lister} shows each document's tags")
    if name == "kind":
        return f"filter kind matched nothing: no indexed section holds a {value} block; search without kind"
    if name == "lang":
        return (f"filter lang matched nothing: no indexed code block is marked {value!r}; "
                "search with kind 'code' and no lang, or another language name")
    if name is not None:
        return f"filter {name} matched nothing: no indexed section matches {name} {value!r}; search without {name}"
    return (f"the filters {_filters_text(filters, tags_mode)} match nothing together "
            "(each matches something alone); drop one of them")


#: each note's sentence (``models.notes``): a new note type gets its line here
NOTE_SENTENCES: dict[type, Any] = {
    Said: lambda ctx, n: n.text,
    QueryCut: lambda ctx, n: query_cut(n.length, n.limit),
    StaleHits: lambda ctx, n: stale_hits(ctx, n.count),
    PartlyKeywordOnly: lambda ctx, n: partly_keyword_only(ctx, n.pending, n.passages),
    BusyElsewhere: lambda ctx, n: busy_elsewhere(ctx, n.documents, n.vectors),
    NoConfidentMatch: lambda ctx, n: no_confident_match(list(n.absent)),
    VectorsPending: lambda ctx, n: vectors_pending(),
    OtherVectors: lambda ctx, n: other_vectors(ctx, n),
    NoDocumentsUnder: lambda ctx, n: no_documents_under(ctx, n.prefix),
    NoFilterMatch: lambda ctx, n: no_filter_match(ctx, list(n.empty), dict(n.filters), n.tags_mode),
}


def render_notes(ctx: Context, notes: tuple[Note, ...]) -> str | None:
    """An answer's ``message``: its notes' sentences for the reader of ``ctx``, in order,
    joined by ``"; "`` (None: no note)."""
    return "; ".join(NOTE_SENTENCES[type(n)](ctx, n) for n in notes) or None


def no_tagged_documents(ctx: Context, tags: tuple[str, ...]) -> str:
    """``list_documents`` with a tag filter no document (under the folder) carries."""
    lister = "list_documents" if ctx.agent else f"`{ctx.program} list`"
    return (f"filter tags matched nothing: no indexed document here carries {' or '.join(repr(t) for t in tags)} "
            f"(nested tags included); {lister} without tags shows each document's tags")


def bad_filter(name: str, value: str, choices: tuple[str, ...]) -> str:
    """A filter value outside its choices (a QueryError's sentence)."""
    return f"{name} {value!r} is not one of {', '.join(repr(c) for c in choices)}; pass one of them"


def lang_needs_code(kind: str) -> str:
    """``lang`` given with a block kind other than code."""
    return f"lang filters code blocks, but kind is {kind!r}; pass kind 'code' or no kind with lang"


# -- the docs map (reading/map.py) ------------------------------------------------------------
#: what each coarser level of the docs map leaves out
MAP_OMITS = {
    "children": "headings below the top level",
    "headings": "every heading (documents only)",
    "documents": "the documents themselves (folders with their counts instead)",
    "subfolders": "the documents and sub-folders (top-level folders with their counts instead)",
    "everything": "every document and folder",
}


def count_of(n: int, noun: str) -> str:
    """``"1 document"``, ``"1,204 documents"``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def map_summary(documents: int, tokens: int) -> str:
    """The docs map's ``> summary`` line."""
    return (f"{count_of(documents, 'Markdown document')} ({tokens:,} tokens in all). Find a "
            "section with `search_docs` and read it with `read_section` instead of whole files.")


def hits_left_out(count: int, max_tokens: int) -> str:
    """A search answer's note when hits it found did not fit its budget, not even as pointers."""
    hits = "hit was" if count == 1 else "hits were"
    return f"{count} more {hits} left out to fit {max_tokens:,} tokens; a larger max_tokens returns them"


def map_left_out(what: str, max_tokens: int) -> str:
    """The docs map's line saying what it left out to fit its budget."""
    return f"Left out to fit {max_tokens:,} tokens: {what}; pass a larger --max-tokens for more."


def map_folder_note(documents: int, tokens: int) -> str:
    """A folder line's note in the docs map."""
    return f"{count_of(documents, 'document')}, {tokens:,} tokens"


def map_more_folders(folders: int, documents: int) -> str:
    """The docs map's last line when folder lines were dropped."""
    return f"- … {count_of(folders, 'more folder')} ({count_of(documents, 'document')}) not shown"


# -- which embedder (embed/choice.py) ---------------------------------------------------------
def embedder_from_index(preset: str) -> str:
    """Why a command naming no embedder uses ``preset``, its index's (``embed/choice.py``)."""
    return f"not named: this index's vectors were made with {preset}; --embedder or MARKDOWN_MEMORY_EMBEDDER picks another"


def rules_block_left_out(first: int, last: int) -> str:
    """Index report note: the agent rules block ``setup --rules`` wrote is not indexed."""
    return (f"lines {first}-{last}, the agent rules block written by `markdown-memory setup --rules`, are not "
            "indexed (the tool's own instructions); the rest of the file is")


def rules_file_left_out() -> str:
    """Index report note: a file holding nothing but the agent rules block is not indexed."""
    return ("not indexed: it holds only the agent rules block written by `markdown-memory setup --rules` "
            "(the tool's own instructions)")


def embedder_instead_of_default(preset: str, default: str) -> str:
    """Why a new index gets ``preset``: the ``default`` model is not installed, ``preset`` is.
    Made when the engine is (the service's serves many readers): a ``ProgramSentence``."""
    return ProgramSentence(lambda name: (
        f"not named: the default {default} model is not installed, so {preset}, installed here, makes this "
        f"index's vectors; `{name} --download-model` gets the default and `--embedder {default} index "
        "--force` switches to it"))


def embedder_index_model_missing(preset: str, default: str, default_loads: bool) -> str:
    """Why it uses the ``default`` although the index holds vectors of ``preset``, which cannot
    load; an index run replaces them only when ``default_loads``."""
    fate = "its vectors replace them" if default_loads else "they are kept while it cannot load either"
    return (f"not named: this index's vectors were made with {preset}, which cannot load here, so the default "
            f"{default} is used instead and {fate} (install {preset} again to use them)")


# -- links ------------------------------------------------------------------------------------
def link_ambiguous(written: str, count: int) -> str:
    return f"link target {written!r} names {count} documents; pass one of the candidate paths instead"


def heading_resolved_from(asked: str, resolved: str, rel: str) -> str:
    """A read whose heading was not found as written, answered with the nearest one."""
    return f"no heading {asked!r} in {rel}; read the nearest one, {resolved!r} (check it is the section you want)"


def heading_only(section: str, rel: str, below: list[str]) -> str:
    """A read section that holds only its heading (a title above its subsections ``below``)."""
    shown = ", ".join(repr(b) for b in below[:5]) + (f" and {len(below) - 5} more" if len(below) > 5 else "")
    return (f"section {section!r} of {rel} holds only its heading; its text is in its {len(below)} subsection(s) "
            f"{shown}: read one of them, or pass include_subsections (CLI: --include-subsections)")


def no_code_root(docs_root: Path, *, agent: bool) -> str:
    """drift on a docs root outside git: what the reader can do to name the code side (an agent
    calling find_drift has no such argument: a terminal command, or the user, can)."""
    where = f"the docs root {str(docs_root)!r} is not inside a git repository, so its code side is unknown"
    if agent:
        return (f"{where}; find_drift cannot be told where the code is: run "
                f"`{program()} drift --code-root DIR --docs-dir {shlex.quote(str(docs_root))}` in a terminal "
                "(DIR: the repository the docs describe), or ask the user which folder holds the code")
    return f"{where}; pass --code-root DIR (the repository the docs describe)"


def not_markdown(rel: str, suffixes: Sequence[str]) -> str:
    """A requested path whose extension is not indexed: not one of ``suffixes``
    (``files.walk.MARKDOWN_SUFFIXES``)."""
    return f"{rel!r} is not a Markdown file ({', '.join(suffixes)}) nor a note's name or title"


def no_indexed_document(rel: str, root: str, near: list[str]) -> str:
    hint = f"did you mean {', '.join(near)}?" if near else f"list the indexed paths with list_documents (CLI: {program()} list)"
    return f"no indexed document {rel!r} under {root!r}; {hint}"


def link_not_found(written: str) -> str:
    return (f"no indexed document is named by the link target {written!r}; pass a path relative to the docs root "
            f"or a note name (list the indexed paths with list_documents, CLI: {program()} list)")


def links_unresolved(count: int, ambiguous: int = 0) -> str:
    """``count`` links lead nowhere (``unresolved``, ``no_heading``), ``ambiguous`` to several documents."""
    parts = [f"{count} link(s) of this document lead to no indexed document or heading (status 'unresolved' "
             "or 'no_heading')"] if count else []
    if ambiguous:
        parts.append(f"{ambiguous} link(s) name several documents (status 'ambiguous', with their candidates)")
    return "; ".join(parts)


def no_markdown_files(suffixes: Sequence[str]) -> str:
    """The index warning for a folder where the walk found no Markdown file at all."""
    return (f"no Markdown files found, so nothing was indexed; files count as Markdown by their extension "
            f"({', '.join(suffixes)})")




def answer_cut(field: str, kept: int, omitted: int, *, max_depth: int | None = None,
               paged: bool = False) -> str:
    """The note of an MCP answer cut to fit the client's tool-output limit (``mcp/fit.py``):
    what was left out of ``field`` and how to get it."""
    if max_depth is not None:
        return (f"outline cut to max_depth={max_depth} to fit the client's output limit: {omitted} deeper headings "
                "omitted; call get_document_outline with a smaller max_depth, or read_section with "
                "include_subsections on one heading for its part")
    if paged:
        return (f"{field} cut to {kept} to fit the client's output limit ({omitted} more on this page): "
                "continue with offset=next_offset")
    return f"{field} cut to {kept} to fit the client's output limit: {omitted} omitted; narrow the request to see them"


def drift_without_own_command() -> str:
    """What a drift report left unchecked when the repository defines no command of its own
    (docs/drift.md, "No command of its own")."""
    return ("no command of the repository's own was found (pyproject/setup scripts, a Cargo bin, a "
            "package.json bin, a Go main package, a justfile or Makefile): flags and environment "
            "variables given to a named command were taken for that program's and not checked "
            "(option tables and listings were); declare the command to check them")
