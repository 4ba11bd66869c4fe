"""Where links lead: the vault rules that turn a written link into a document and a section.

Documents, for a wikilink target ``name`` (``[[name]]``, ``[[name#Heading]]``; a Dendron
``dendron://vault/`` prefix is dropped): an indexed extension (``.md``, ``.mdx``, ``.mkdn``, …:
``files.walk.MARKDOWN_SUFFIXES``) may be left out and
names compare in ``text.match_form`` (case-insensitive, as Obsidian does); ``name`` matches
every document whose path without extension is ``name`` or ends with ``/name`` (Obsidian's
shortest unique path: ``[[note]]``, ``[[folder/note]]``; Dendron's ``[[a.b.c]]`` names the file
``a.b.c.md``); ``./`` and ``../`` names are relative to the linking file; a name no path matches
is tried as a front-matter alias (``aliases``); a name an agent types (not a link in a note)
then as a front-matter ``title``. Several matches: the one in the linking file's
folder, else the one nearest the root when only one is; otherwise ``ambiguous``.
``[[a|b]]``: ``a`` is the target (Obsidian) unless only ``b`` leads to a document (Dendron
writes ``[[label|note]]``).

A Markdown link destination is a path relative to the linking file (``/x.md``: to the root),
tried as written and percent-decoded (case 031), then case-insensitively; one without an
extension also as ``x.md``, ``x/index.md``, ``x/README.md``, ``x/_index.md``; ``x.md/`` as
``x.md``. A ``/``-rooted path found nowhere under the root is tried as the end of one document's
path (a root holding several sites: ``/docs/api/routing`` in ``hono/docs/api/routing.md``).

Sections, for the fragment after ``#``: ``^id`` is the section holding the block that ends in
`` ^id``; otherwise ``Heading`` or ``Heading#Sub`` (Sub under Heading) matches a heading by its
plain text in ``match_form`` or by its anchor in the document's own slug sequence
(``text.heading_slugs``: ``#hook-create``, and GitHub's/mdBook's document-wide numbering of
duplicates, ``#install-1`` for the second ``Install``), the first in file order; then an
explicit anchor the document defines (``{#id}`` on a heading, ``<a name>``/``<a id>``:
``markdown.links.anchor_ids``); a Dendron range (``#summary,1:#*``) by the heading before the
``,``. A fragment that matches nothing leaves the link on the document with status ``no_heading``.

An index run that changed documents resolves every link again (``relink``); a refresh of some
files only the links those documents hold, led to, or can be named by (``relink_documents``).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field, replace
from urllib.parse import unquote

from .. import messages
from ..errors import DocumentNotFoundError
from ..files.walk import MARKDOWN_SUFFIXES
from ..markdown.frontmatter import FrontMatter, front_matter_aliases
from ..markdown.links import anchor_ids
from ..models import Links
from ..store.links import DocumentName, HeadingRow, LinkRow, LinkTarget
from ..store.views import LinkWrites
from ..text import heading_slug, heading_slugs, match_form

#: an indexed extension at the end of a name (``files.walk.MARKDOWN_SUFFIXES``, any case)
_MARKDOWN_EXT = re.compile("(?:" + "|".join(re.escape(s) for s in MARKDOWN_SUFFIXES) + ")$", re.I)
_DENDRON_VAULT = re.compile(r"^dendron://[^/]*/")
_WIKILINK = re.compile(r"^!?\[\[(.*)\]\]$", re.S)
_FOLDER_PAGES = (".md", "/index.md", "/README.md", "/_index.md")

RESOLVED, NO_HEADING, AMBIGUOUS, UNRESOLVED = "resolved", "no_heading", "ambiguous", "unresolved"


@dataclass(frozen=True)
class Outcome:
    """Where one link leads: ``status`` (module constants), the document and section found
    (None when not), ``candidates``: the paths of an ambiguous name."""

    status: str
    doc: DocumentName | None = None
    section_id: int | None = None
    candidates: tuple[str, ...] = ()


def _key(name: str) -> str:
    return match_form(_MARKDOWN_EXT.sub("", name.strip().strip("/")))


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _wiki_key(name: str, source: str) -> tuple[str, bool] | None:
    """(the key a wikilink name is looked up by in ``Vault.by_suffix`` / ``by_alias``, whether it
    is relative to document ``source``); None: the name is empty (the linking document)."""
    name = _DENDRON_VAULT.sub("", name.strip())
    if not name:
        return None
    if name.startswith(("./", "../")):
        return _key(posixpath.normpath(posixpath.join(_folder(source), name))), True
    return _key(name), False


def _path_lookups(dest: str, source: str) -> tuple[list[tuple[str, bool]], list[str]] | None:
    """What a Markdown link destination (path part) written in ``source`` is looked up by: the
    paths tried in order, exactly and in ``match_form`` (each with True for a folder page
    ``x/index.md``), then the keys of ``Vault.by_suffix`` tried for a site-absolute path.
    None: the destination is empty (the linking document)."""
    text = dest.strip()
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    if not text:
        return None
    base = "" if text.startswith("/") else _folder(source)
    paths: list[tuple[str, bool]] = []
    for written in dict.fromkeys((text, unquote(text))):
        rel = posixpath.normpath(posixpath.join(base, written.lstrip("/")))
        if rel == ".." or rel.startswith("../"):
            continue
        stem = rel.rstrip("/")
        if _MARKDOWN_EXT.search(stem):
            paths.append((stem, False))
        else:
            paths.extend((stem + s, s != ".md") for s in _FOLDER_PAGES)
    suffixes: list[str] = []
    if text.startswith("/"):
        suffix = unquote(text).strip("/")
        suffixes = [k for k in (_key(suffix), _key(suffix + "/index")) if "/" in k]
    return paths, suffixes


@dataclass
class Vault:
    """The documents of one root as links name them, read once per resolution pass."""

    store: LinkWrites
    docs: list[DocumentName]
    by_suffix: dict[str, list[DocumentName]] = field(default_factory=dict)
    by_alias: dict[str, list[DocumentName]] = field(default_factory=dict)
    by_title: dict[str, list[DocumentName]] = field(default_factory=dict)
    by_path: dict[str, DocumentName] = field(default_factory=dict)
    by_path_form: dict[str, DocumentName] = field(default_factory=dict)
    _headings: dict[int, list[tuple[int, frozenset[str], list[frozenset[str]]]]] = field(default_factory=dict)
    _found: dict[tuple[int, str], int | None] = field(default_factory=dict)
    _blocks: dict[int, dict[str, int]] = field(default_factory=dict)
    _anchors: dict[int, dict[str, int]] = field(default_factory=dict)

    @classmethod
    def load(cls, store: LinkWrites) -> Vault:
        vault = cls(store, store.links.document_names())
        for doc in vault.docs:
            vault.by_path[doc.path] = doc
            vault.by_path_form.setdefault(match_form(doc.path), doc)
            parts = _key(doc.path).split("/")
            for i in range(len(parts)):
                vault.by_suffix.setdefault("/".join(parts[i:]), []).append(doc)
            for alias in front_matter_aliases(doc.metadata):
                vault.by_alias.setdefault(_key(alias), []).append(doc)
            title = FrontMatter(metadata=doc.metadata).title
            if title:
                vault.by_title.setdefault(_key(title), []).append(doc)
        return vault

    # -- documents ----------------------------------------------------------------------
    def _pick(self, found: list[DocumentName], source: str) -> Outcome:
        unique = list({d.id: d for d in found}.values())
        if len(unique) == 1:
            return Outcome(RESOLVED, unique[0])
        if not unique:
            return Outcome(UNRESOLVED)
        here = [d for d in unique if _folder(d.path) == _folder(source)]
        if len(here) == 1:
            return Outcome(RESOLVED, here[0])
        depth = min(d.path.count("/") for d in unique)
        nearest = [d for d in unique if d.path.count("/") == depth]
        if len(nearest) == 1:
            return Outcome(RESOLVED, nearest[0])
        return Outcome(AMBIGUOUS, candidates=tuple(sorted(d.path for d in unique)))

    def wiki_document(self, name: str, source: str, titles: bool = False) -> Outcome:
        """The document a wikilink's name (without fragment) leads to from document ``source``;
        with ``titles``, a name no path or alias matches is tried as a front-matter ``title``
        (for a name an agent typed: a link in a note never is, since Dendron's ``[[label|note]]``
        labels are often some note's title)."""
        lookup = _wiki_key(name, source)
        if lookup is None:
            return Outcome(RESOLVED, self.by_path.get(source)) if source in self.by_path else Outcome(UNRESOLVED)
        key, relative = lookup
        if relative:
            return self._pick([d for d in self.by_suffix.get(key, []) if _key(d.path) == key], source)
        found = self._pick(self.by_suffix.get(key, []), source)
        if found.status == UNRESOLVED:
            found = self._pick(self.by_alias.get(key, []), source)
        if found.status == UNRESOLVED and titles:
            found = self._pick(self.by_title.get(key, []), source)
        return found

    def path_document(self, dest: str, source: str) -> Outcome:
        """The document a Markdown link destination's path part leads to from ``source``."""
        lookups = _path_lookups(dest, source)
        if lookups is None:
            return Outcome(RESOLVED, self.by_path[source]) if source in self.by_path else Outcome(UNRESOLVED)
        paths, suffixes = lookups
        for variant, _page in paths:
            doc = self.by_path.get(variant) or self.by_path_form.get(match_form(variant))
            if doc is not None:
                return Outcome(RESOLVED, doc)
        for key in suffixes:  # site-absolute (``/docs/api/routing``) in a root holding several sites
            ends = self.by_suffix.get(key, [])
            if len(ends) == 1:
                return Outcome(RESOLVED, ends[0])
        return Outcome(UNRESOLVED)

    # -- sections ---------------------------------------------------------------------
    def section(self, doc: DocumentName, fragment: str) -> int | None:
        """The section id of ``doc`` that ``fragment`` (text after the first ``#``) names, or None."""
        fragment = fragment.strip()
        found = self._fragment(doc, fragment)
        if found is None and re.search(r"[,:]", fragment):  # a Dendron range: #summary,1:#* or #^a:#^b
            found = self._fragment(doc, re.split(r"[,:]", fragment, maxsplit=1)[0])
        return found

    def _fragment(self, doc: DocumentName, fragment: str) -> int | None:
        if fragment.startswith("^"):
            if doc.id not in self._blocks:
                self._blocks[doc.id] = {}
                for block, sid in self.store.links.block_ids_of(doc.id):
                    self._blocks[doc.id].setdefault(match_form(block), sid)
            return self._blocks[doc.id].get(match_form(fragment[1:]))
        return self._heading(doc, [p for p in fragment.split("#") if p.strip()])

    def _heading(self, doc: DocumentName, parts: list[str]) -> int | None:
        if not parts or not parts[-1].strip():
            return None
        memo = (doc.id, "#".join(parts))
        if memo not in self._found:
            if doc.id not in self._headings:
                self._headings[doc.id] = _heading_keys(self.store.links.headings_of(doc.id))
            wanted = [_names(p) for p in parts]
            found = next((sid for sid, own, ancestors in self._headings[doc.id]
                          if own & wanted[-1] and _in_order(wanted[:-1], ancestors)), None)
            if found is None and len(parts) == 1:
                found = self._anchor(doc, parts[0])
            self._found[memo] = found
        return self._found[memo]

    def _anchor(self, doc: DocumentName, fragment: str) -> int | None:
        """The section holding the explicit anchor ``fragment`` (``{#id}``, ``<a name>``), or None."""
        if doc.id not in self._anchors:
            first_piece = {h.ordinal: h.id for h in self.store.links.headings_of(doc.id)}
            anchors: dict[str, int] = {}
            for ordinal, text in self.store.links.anchor_texts_of(doc.id):
                for anchor in anchor_ids(text):
                    if ordinal in first_piece:
                        anchors.setdefault(match_form(anchor), first_piece[ordinal])
            self._anchors[doc.id] = anchors
        return self._anchors[doc.id].get(match_form(fragment.strip()))

    # -- links ------------------------------------------------------------------------
    def resolve(self, kind: str, target: str, source: str, titles: bool = False) -> Outcome:
        """Where ``target`` (name or destination with its ``#fragment``), written in document
        ``source`` as a ``kind`` link, leads (``titles``: see ``wiki_document``)."""
        name, hash_, fragment = target.partition("#")
        if kind == "markdown" or (kind == "embed" and "](" in target):
            outcome = self.path_document(name, source)
            fragment = unquote(fragment)
        else:
            outcome = self.wiki_document(name, source, titles)
        if outcome.doc is None or not hash_ or not fragment.strip():
            return outcome
        sid = self.section(outcome.doc, fragment)
        return Outcome(RESOLVED if sid is not None else NO_HEADING, outcome.doc, sid)

    def resolve_row(self, row: LinkRow) -> tuple[str, Outcome]:
        """(the side read as the target, where it leads) for a stored link."""
        first = self.resolve(row.kind, row.first, row.source_path)
        if row.second is None or first.doc is not None:
            return row.first, first
        second = self.resolve(row.kind, row.second, row.source_path)
        if second.doc is not None or (_looks_like_name(row.second) and not _looks_like_name(row.first)):
            return row.second, second
        return row.first, first


def _names(title: str, slug: str | None = None) -> frozenset[str]:
    """The forms a heading title is named by in a fragment: its text, its slug and (``slug``)
    its numbered anchor in the document's slug sequence."""
    return frozenset((match_form(title.strip()), heading_slug(title), slug or heading_slug(title)))


def _heading_keys(rows: list[HeadingRow]) -> list[tuple[int, frozenset[str], list[frozenset[str]]]]:
    """(section id, names of its title, names of each ancestor's title from the top) per heading."""
    by_ordinal = {r.ordinal: r for r in rows}
    titled = [r for r in rows if r.title.strip()]  # the preamble (no heading) takes no anchor
    slugs = dict(zip((r.ordinal for r in titled), heading_slugs(r.title for r in titled), strict=True))
    names = {r.ordinal: _names(r.title, slugs.get(r.ordinal)) for r in rows}
    out = []
    for row in rows:
        ancestors: list[frozenset[str]] = []
        parent = row.parent_ordinal
        while parent is not None and parent in by_ordinal:
            ancestors.insert(0, names[parent])
            parent = by_ordinal[parent].parent_ordinal
        out.append((row.id, names[row.ordinal], ancestors))
    return out


def _in_order(wanted: list[frozenset[str]], ancestors: list[frozenset[str]]) -> bool:
    """Each of ``wanted`` names one of ``ancestors``, in order (a subsequence)."""
    rest = iter(ancestors)
    return all(any(w & a for a in rest) for w in wanted)


def _looks_like_name(text: str) -> bool:
    """A wikilink side that reads as a note name rather than a label (Dendron: ``a.b.c``)."""
    return " " not in text.strip() and bool(re.search(r"[./#]", text))


def _store_outcomes(store: LinkWrites, vault: Vault, rows: list[LinkRow]) -> int:
    """Resolve ``rows`` and write the outcomes that differ from the stored ones. Returns how many."""
    changed: list[LinkTarget] = []
    for row in rows:
        target, outcome = vault.resolve_row(row)
        doc_id = outcome.doc.id if outcome.doc is not None else None
        if (target, outcome.status, doc_id, outcome.section_id) != (
                row.target, row.status, row.target_doc_id, row.target_section_id):
            changed.append(LinkTarget(target, outcome.status, doc_id, outcome.section_id, row.id))
    if changed:
        with store.transaction():
            store.links.set_link_targets(changed)
    return len(changed)


def relink(store: LinkWrites) -> int:
    """Resolve every stored link against the documents indexed now, writing only the rows whose
    outcome changed (a note created since is found, a deleted one is not). Returns how many."""
    rows = store.links.all_links()
    if not rows:
        return 0
    return _store_outcomes(store, Vault.load(store), rows)


# -- incremental relinking --------------------------------------------------------------
# A link can lead to document D only through a lookup above whose key is a form of D's path or
# of one of its aliases; equal keys have equal last (or, for a folder page ``x/index.md`` and a
# site path's ``x/index``, second-last) components. Those components are the "names" below: a
# change to D can change the outcome only of links in D, links that led to D, and links one of
# whose lookup names is one of D's (before or after the change).

def _last(key: str) -> str:
    return key.rsplit("/", 1)[-1]


def _second_last(key: str) -> str | None:
    return key.rsplit("/", 2)[-2] if "/" in key else None


def document_link_names(doc: DocumentName) -> set[str]:
    """The names (see above) a link that leads to ``doc`` looks it up by."""
    names = {_last(_key(a)) for a in front_matter_aliases(doc.metadata)}
    for form in (_key(doc.path), doc.path, match_form(doc.path)):
        names.add(_last(form))
        names.add(_second_last(form) or _last(form))
    return names


def link_names(first: str, second: str | None, source: str) -> set[str]:
    """The names (see above) of every lookup resolving a link with these sides, written in
    document ``source``, may make (as a wikilink and as a Markdown destination)."""
    names: set[str] = set()
    for side in (first, second):
        if side is None:
            continue
        name = side.partition("#")[0]
        wiki = _wiki_key(name, source)
        if wiki is not None:
            names.add(_last(wiki[0]))
        lookups = _path_lookups(name, source)
        if lookups is None:
            continue
        paths, suffixes = lookups
        for variant, page in paths:
            for form in (variant, match_form(variant)):
                names.add((_second_last(form) or "") if page else _last(form))
        names.update(_second_last(k) or _last(k) for k in suffixes)
    return names


def _core(name: str) -> str:
    return _MARKDOWN_EXT.sub("", name)


def _may_name(first: str, second: str | None, cores: re.Pattern[str]) -> bool | None:
    """Whether a link with these sides may have one of the names whose ``_core`` (ASCII,
    case-folded) ``cores`` finds. None when its text cannot tell: non-ASCII (``match_form``
    may fold it into other text), or a side whose path, as written or percent-decoded, ends in
    a ``.`` / ``..`` segment or is empty (its names come from the linking document's folder).
    For any other link every name's ``_core`` is a part of its case-folded text or of that text
    percent-decoded."""
    text = first if second is None else first + "\n" + second
    if not text.isascii():
        return None
    for side in (first, second):
        name = side.partition("#")[0] if side is not None else ""
        for form in (name, unquote(name)) if "%" in name else (name,):
            if form and ("." in form or not form.strip("/<> \t")) and _last_segment(form) in ("", ".", ".."):
                return None
    if "%" in text:
        text += "\n" + unquote(text)
        if not text.isascii():
            return None
    return cores.search(text.casefold()) is not None


def _last_segment(name: str) -> str:
    return name.strip().strip("<>").strip().rstrip("/").rsplit("/", 1)[-1].strip()


def relink_documents(store: LinkWrites, before: list[DocumentName], after: list[DocumentName]) -> int:
    """Resolve again only the links a change to some documents can affect: ``before`` are those
    documents as they were (an empty list for new ones), ``after`` as they are now (none for
    removed ones; a rename is the old path before and the new one after). Leaves the links in
    the state ``relink`` would. Returns how many rows changed."""
    names = set().union(*(document_link_names(d) for d in [*before, *after]))
    cores = re.compile("|".join(sorted(re.escape(_core(n).casefold()) for n in names if n.isascii())) or "(?!)")
    new_ids, old_ids = {d.id for d in after}, {d.id for d in before}
    vault = Vault.load(store)
    paths = {d.id: d.path for d in vault.docs}
    wanted: list[int] = []
    for link_id, doc_id, first, second, target_doc_id in store.links.link_sides():
        if doc_id in new_ids or target_doc_id in old_ids or target_doc_id in new_ids:
            wanted.append(link_id)
            continue
        may = _may_name(first, second, cores)
        if may is None:
            may = not names.isdisjoint(link_names(first, second, paths.get(doc_id, "")))
        if may:
            wanted.append(link_id)
    if not wanted:
        return 0
    return _store_outcomes(store, vault, store.links.links_by_id(wanted))


def link_address(written: str, heading_path: str, store: LinkWrites) -> tuple[str, str]:
    """(document path, breadcrumb) a link target typed by an agent names: ``note``,
    ``note#Heading``, ``[[note#Heading|label]]``, ``![[note#^id]]``, ``dir/x.md#frag``, read
    from the docs root. The breadcrumb is ``heading_path`` when given, else the section the
    fragment names; a fragment that matches no heading by the link rules comes back as typed
    (``Heading > Sub``) for ``resolve_heading``'s wider matching; without a fragment, the
    document's first section. Raises DocumentNotFoundError (ambiguous names list the candidates)."""
    text = written.strip()
    m = _WIKILINK.match(text)
    inner = m.group(1) if m else text
    sides = [s.strip() for s in re.split(r"\\?\|", inner, maxsplit=1)] if m else [inner]
    vault = Vault.load(store)
    outcome = Outcome(UNRESOLVED)
    target = sides[0]
    for side in sides:
        found = vault.resolve("wikilink", side, "", titles=not m)  # a plain name may be a title
        if found.doc is None and not m:
            found = vault.resolve("markdown", side, "")
        if found.doc is not None or outcome.status == UNRESOLVED:  # the first ambiguity is kept
            outcome, target = found, side
        if found.doc is not None:
            break
    if outcome.status == AMBIGUOUS:
        raise DocumentNotFoundError(messages.link_ambiguous(written, len(outcome.candidates)),
                                    candidates=list(outcome.candidates)[:10])
    if outcome.doc is None:
        raise DocumentNotFoundError(messages.link_not_found(written))
    if heading_path.strip():
        return outcome.doc.path, heading_path
    headings = vault.store.links.headings_of(outcome.doc.id)
    if outcome.section_id is not None:
        return outcome.doc.path, next(h.base_path for h in headings if h.id == outcome.section_id)
    parts = [p.strip() for p in unquote(target.partition("#")[2]).split("#") if p.strip()]
    if parts:
        return outcome.doc.path, " > ".join(parts)
    return outcome.doc.path, headings[0].base_path if headings else ""


def note_path(written: str, store: LinkWrites) -> str | None:
    """The path of the one indexed note ``written`` names as a wikilink would (its name, an alias
    or its front-matter title: ``Front Matter Doc``); None when none does. Raises
    DocumentNotFoundError listing the candidates when several do (``a/dup.md``, ``b/dup.md``)."""
    found = Vault.load(store).wiki_document(written, "", titles=True)
    if found.status == AMBIGUOUS:
        raise DocumentNotFoundError(messages.link_ambiguous(written, len(found.candidates)),
                                    candidates=list(found.candidates)[:10])
    return found.doc.path if found.doc is not None else None


def is_wikilink(file_path: str) -> bool:
    """``file_path`` is written as a wikilink or embed (``[[...]]``, ``![[...]]``)."""
    return bool(_WIKILINK.match(file_path.strip()))


#: links per list and page of a get_links answer
LINKS_PAGE = 50


def links_answer(store: LinkWrites, doc_id: int, path: str, title: str, offset: int = 0, limit: int = LINKS_PAGE) -> Links:
    """Document ``doc_id``'s outgoing links and backlinks, ``limit`` of each from ``offset``; an
    ``ambiguous`` outgoing link carries the paths its name leads to (resolved again, not stored)."""
    total, unresolved, out = store.links.outgoing(doc_id, limit, offset)
    back_total, back = store.links.incoming(doc_id, limit, offset)
    more = offset + limit < max(total, back_total)
    ambiguous = store.links.ambiguous_count(doc_id) if unresolved else 0
    message = messages.links_unresolved(unresolved - ambiguous, ambiguous) if unresolved else None
    vault = Vault.load(store) if any(v.status == AMBIGUOUS for v in out) else None
    outgoing = tuple(replace(v, candidates=vault.resolve(v.kind, v.target, v.file_path).candidates)
                     if vault is not None and v.status == AMBIGUOUS else v for v in out)
    return Links(path, title, outgoing, total, unresolved, tuple(back),
                 back_total, offset + limit if more else None, message)
