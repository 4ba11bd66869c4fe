#!/usr/bin/env python3
"""Tokens an agent session saves with the MCP server's session memory (issue 15).

A scripted session: the dev questions about a few projects of the eval corpus (default
``ripgrep`` and ``git-extras``: 14 related questions, several about the same documents), asked
in file order through the MCP tool bodies (``mcp.runtime.Runtime.search_docs``, the code the
stdio server runs) of two runtimes over one index: one with session memory (the default), one
with ``resend=true`` on every call (no memory). Printed per question: tokens of the answer JSON
as sent, without and with memory; without memory, the section-text tokens that repeat a text the
session already received and the new ones; the new text tokens with memory (every text it sends
is new); and where the answering section is (``text``: a hit carries
it; ``sent``: an ``already_sent`` pointer, its text went out earlier in the session; ``pointer``:
a pointer past the budget; ``-``: not in the answer); then the totals and the share saved.

The index is built into ``--db`` when it does not exist (``minilm``; about a minute here).
Usage::

    python scripts/bench_session.py [--corpus DIR] [--db FILE] [--projects ripgrep,git-extras]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"


def where(results: list[dict], expect: list[dict]) -> str:
    """How the answering section appears in an answer's hits (see module docstring)."""
    for hit in results:
        if any(hit["file_path"] == e["path"] and hit["start_line"] <= e["line"] <= hit["end_line"] for e in expect):
            return "text" if "content" in hit else ("sent" if hit.get("already_sent") else "pointer")
    return "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=SHARED / "eval-corpus")
    parser.add_argument("--queries", type=Path, default=SHARED / "eval-queries-dev.jsonl")
    parser.add_argument("--db", type=Path, default=Path("/tmp/mm-bench-session/index.db"))
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "none"])
    parser.add_argument("--projects", default="ripgrep,git-extras",
                        help="top folders of the corpus whose questions make up the session")
    parser.add_argument("--max-tokens", type=int, default=2000)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent / "src"))
    from markdown_memory.config import Settings
    from markdown_memory.mcp.runtime import Runtime, dumps
    from markdown_memory.models import SearchRequest
    from markdown_memory.search import section_key
    from markdown_memory.text import count_tokens

    def texts(answer: dict) -> dict[str, int]:
        """section_key -> tokens of the hits of ``answer`` that carry their text."""
        return {section_key(h["file_path"], h["heading_path"], h["content"]): h["tokens"]
                for h in answer["results"] if "content" in h}

    projects = args.projects.split(",")
    questions = [q for q in map(json.loads, args.queries.read_text(encoding="utf-8").splitlines())
                 if q.get("expect") and q["expect"][0]["path"].split("/")[0] in projects]
    questions.sort(key=lambda q: projects.index(q["expect"][0]["path"].split("/")[0]))  # grouped, file order kept
    settings = Settings.load(args.corpus, args.db, args.embedder, auto_index=False)
    args.db.parent.mkdir(parents=True, exist_ok=True)
    with_memory, without = Runtime(settings), Runtime(settings)
    for runtime in (with_memory, without):
        runtime.engine.load_model()  # answers with vectors from the first question on
    if not with_memory.engine.store.has_documents():
        print(f"indexing {args.corpus} into {args.db} ...", file=sys.stderr)
        with_memory.engine.index()
    rows = []
    seen: set[str] = set()  # texts the session without memory already received
    print(f"{'id':<6} {'tokens':>7} {'memory':>7} {'repeat':>7} {'new':>6} {'new/m':>6}  {'answer':<7} {'memory':<7} query")
    for q in questions:
        plain = without.search_docs(SearchRequest(q["query"], max_tokens=args.max_tokens, resend=True))
        kept = with_memory.search_docs(SearchRequest(q["query"], max_tokens=args.max_tokens))
        row = {"id": q["id"], "query": q["query"],
               "tokens": count_tokens(dumps(plain)), "tokens_memory": count_tokens(dumps(kept)),
               "answer": where(plain["results"], q["expect"]), "answer_memory": where(kept["results"], q["expect"]),
               "already_sent_hits": sum(1 for h in kept["results"] if h.get("already_sent")),
               "repeated_text_tokens": sum(t for k, t in texts(plain).items() if k in seen),
               "new_text_tokens": sum(t for k, t in texts(plain).items() if k not in seen),
               "new_text_tokens_memory": sum(texts(kept).values())}
        seen.update(texts(plain))
        rows.append(row)
        print(f"{row['id']:<6} {row['tokens']:>7} {row['tokens_memory']:>7} {row['repeated_text_tokens']:>7} "
              f"{row['new_text_tokens']:>6} {row['new_text_tokens_memory']:>6}  {row['answer']:<7} "
              f"{row['answer_memory']:<7} {q['query'][:70]}")
    total, total_memory = sum(r["tokens"] for r in rows), sum(r["tokens_memory"] for r in rows)
    found = sum(r["answer"] in ("text", "pointer") for r in rows)
    found_memory = sum(r["answer_memory"] in ("text", "sent", "pointer") for r in rows)
    summary = {
        "questions": len(rows), "projects": projects, "max_tokens": args.max_tokens,
        "tokens_sent": total, "tokens_sent_memory": total_memory,
        "saved_share": round(1 - total_memory / total, 3) if total else None,
        "repeated_text_tokens": sum(r["repeated_text_tokens"] for r in rows),
        "new_text_tokens": sum(r["new_text_tokens"] for r in rows),
        "new_text_tokens_memory": sum(r["new_text_tokens_memory"] for r in rows),
        "answer_in_answer": found, "answer_in_answer_memory": found_memory,
        "answer_as_text": sum(r["answer"] == "text" for r in rows),
        "answer_as_text_or_sent_memory": sum(r["answer_memory"] in ("text", "sent") for r in rows),
    }
    for key, value in summary.items():
        print(f"{key:<32} {value}")
    if args.json_out:
        args.json_out.write_text(json.dumps({"summary": summary, "questions": rows}, indent=1) + "\n",
                                 encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
