"""``markdown-memory list [DIRECTORY]``: the indexed documents, a page at a time
(``Engine.list_documents``). The module is not named ``list``: that would shadow the builtin."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..models import LIST_PAGE_SIZE
from .options import add_docs_dir, add_json, bounded, emit, open_engine, printable

if TYPE_CHECKING:  # pragma: no cover
    from ..models import DocumentList


def register(sub: Any) -> None:
    """Add ``list`` to the subcommand parsers ``sub``."""
    p = sub.add_parser("list", help="list indexed documents")
    p.add_argument("directory", nargs="?")
    add_docs_dir(p)
    p.add_argument("--offset", type=bounded(0), default=0,
                   help="skip this many documents (next_offset of the previous page; default 0)")
    p.add_argument("--limit", type=bounded(1, LIST_PAGE_SIZE), default=LIST_PAGE_SIZE,
                   help=f"documents per page, 1-{LIST_PAGE_SIZE} (default {LIST_PAGE_SIZE})")
    p.add_argument("--tag", dest="tags", action="append", metavar="TAG",
                   help="only documents carrying this tag or one nested in it (repeatable: any of them)")
    add_json(p, help=None)
    p.set_defaults(handler=run)


def render_list(docs: DocumentList, directory: str | None, offset: int) -> str:
    """``list`` for a person: one line per document, then a ``note:`` line when the page does not
    hold every document (which ones it shows, and the ``--offset`` of the next page)."""
    out = [f"{printable(d.path)}  ({d.sections} sections, {d.tokens} tokens)  {printable(d.title)}"
           + ("  " + " ".join("#" + printable(t) for t in d.tags) if d.tags else "")
           for d in docs.documents]
    where = f" under {directory!r}" if directory else ""
    shown, total = len(docs.documents), docs.total
    if not shown and not (total and docs.message):  # past the end: the message says it
        out.append(f"no indexed documents{where}" + (f" at offset {offset} ({total} in all)" if total else ""))
    elif shown and shown < total:
        note = f"note: showing documents {offset + 1}-{offset + shown} of {total}{where}"
        if docs.next_offset is not None:
            note += f"; pass --offset {docs.next_offset} for the next page"
        out.append(note)
    if docs.message:
        out.append(f"note: {docs.message}")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    """Print one page of documents."""
    with open_engine(args) as engine:
        docs = engine.list_documents(args.directory, offset=args.offset, limit=args.limit, tags=args.tags)
        emit(docs.to_dict()) if args.json else print(render_list(docs, args.directory, args.offset))
    return 0
