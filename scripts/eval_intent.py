"""Remedy-intent check over the eval corpus's runbooks: for every runbook with a "Mitigation"
section, ask four fix-type questions naming the alert and count how often that section is
the first hit and in the top 5 (README "How search ranks", step 3).

Usage: python scripts/eval_intent.py [--embedder none|minilm] [--db PATH] [--corpus DIR]
(the database is indexed first when empty; default a temporary file).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from markdown_memory.config import Settings  # noqa: E402
from markdown_memory.engine import Engine  # noqa: E402

FORMS = ["How do I fix {n}?", "how to resolve the {n} alert", "{n} is firing, what should I do?", "steps to mitigate {n}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="none", choices=["none", "minilm", "embeddinggemma"])
    parser.add_argument("--db", type=Path)
    parser.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "eval-corpus")
    args = parser.parse_args()
    db = args.db or Path(tempfile.mkdtemp()) / "intent.db"
    engine = Engine(Settings.load(args.corpus, db, args.embedder))
    if engine.status()["documents"] == 0:
        engine.index()
    books = sorted(p for p in (args.corpus / "runbooks" / "content" / "runbooks").rglob("*.md") if "\n## Mitigation" in p.read_text())
    print(f"{len(books)} runbooks with a Mitigation section, embedder {args.embedder}")
    for form in FORMS:
        ranks = []
        for path in books:
            rel = path.relative_to(args.corpus).as_posix()
            hits = engine.search(form.format(n=path.stem), top_k=5)["results"]
            ranks.append(next((i for i, h in enumerate(hits, 1)
                               if h["file_path"] == rel and h["heading_path"].endswith("Mitigation")), None))
        print(f"{form:36s} top-1 {sum(r == 1 for r in ranks):3d}/{len(ranks)}   top-5 "
              f"{sum(r is not None for r in ranks):3d}/{len(ranks)}")
    engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
