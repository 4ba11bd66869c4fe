"""Section-role intent check over the eval corpus's runbooks (Meaning / Impact / Diagnosis /
Mitigation): for every runbook with the section, ask questions naming the alert in the
wordings below and count how often that section (or one under it) is the first hit and in the
top 5 (README "How search ranks", step 3).

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
from markdown_memory.models import SearchRequest

FORMS = {
    "Mitigation": ["How do I fix {n}?", "how to resolve the {n} alert", "{n} is firing, what should I do?",
                   "steps to mitigate {n}"],
    "Impact": ["What happens when {n} fires?", "What is the impact of {n}?", "how bad is {n} for users"],
    "Diagnosis": ["How do I investigate {n}?", "how to debug {n}", "what should I check when {n} fires"],
    "Meaning": ["What does {n} mean?", "what is {n} about"],
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="none", choices=["none", "minilm", "embeddinggemma"])
    parser.add_argument("--db", type=Path)
    parser.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "eval-corpus")
    args = parser.parse_args()
    db = args.db or Path(tempfile.mkdtemp()) / "intent.db"
    engine = Engine(Settings.load(args.corpus, db, args.embedder))
    if engine.status().counts.documents == 0:
        engine.index()
    folder = args.corpus / "runbooks" / "content" / "runbooks"
    print(f"embedder {args.embedder}; runbooks under {folder}")
    for section, forms in FORMS.items():
        books = sorted(p for p in folder.rglob("*.md") if f"\n## {section}" in p.read_text())
        for form in forms:
            ranks = []
            for path in books:
                rel = path.relative_to(args.corpus).as_posix()
                hits = engine.search(SearchRequest(form.format(n=path.stem), top_k=5)).results
                ranks.append(next((i for i, h in enumerate(hits, 1)
                                   if h.file_path == rel and section in h.heading_path.split(" > ")), None))
            print(f"{section:10s} {form:38s} top-1 {sum(r == 1 for r in ranks):3d}/{len(ranks)}   top-5 "
                  f"{sum(r is not None for r in ranks):3d}/{len(ranks)}")
    engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
