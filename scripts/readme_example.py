"""The example in README.md: one search over this repository's docs/ folder, as the CLI prints it,
and the tokens it saved against reading the files its hits come from.

    python scripts/readme_example.py [--query Q] [--docs-dir docs] [--embedder minilm]

Runs ``markdown-memory search`` (this checkout, a throw-away index under a temp data folder) and prints
its output, then one line: the answer's tokens (its hits' text, the estimate every answer uses)
against the tokens of the whole files those hits come from, which an agent without the index
would read. Token counts are markdown-memory's estimate (``markdown_memory.text.count_tokens``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUERY = "how do I use the MiniLM model on a machine without network access"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--query", default=QUERY)
    ap.add_argument("--docs-dir", default=str(REPO / "docs"))
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--top-k", type=int, default=3)
    args = ap.parse_args()
    sys.path.insert(0, str(REPO / "src"))
    from markdown_memory.text import count_tokens

    with tempfile.TemporaryDirectory(prefix="mm-readme-") as tmp:
        base = [sys.executable, "-m", "markdown_memory.cli", "--embedder", args.embedder,
                "search", args.query, "--docs-dir", args.docs_dir, "--top-k", str(args.top_k)]
        # the index goes to the default place under a throw-away data dir
        env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "XDG_DATA_HOME": tmp}
        env.pop("MARKDOWN_MEMORY_DB", None)
        text = subprocess.run(base, capture_output=True, text=True, env=env, check=True).stdout
        answer = json.loads(subprocess.run([*base, "--json"], capture_output=True, text=True, env=env,
                                           check=True).stdout)
    print(f"$ markdown-memory --embedder {args.embedder} search {json.dumps(args.query)} --docs-dir docs "
          f"--top-k {args.top_k}")
    # the docs root as the reader types it from the checkout, not this machine's absolute path
    print(text.rstrip().replace(str(Path(args.docs_dir).resolve()), "docs"))
    hits = answer["results"]
    answer_tokens = sum(h["tokens"] if h.get("content") is not None else count_tokens(h.get("preview", ""))
                        for h in hits)
    files = sorted({h["file_path"] for h in hits})
    whole = sum(count_tokens((Path(args.docs_dir) / f).read_text(encoding="utf-8")) for f in files)
    print(f"\nanswer: {answer_tokens:,} tokens in {len(hits)} hits; the {len(files)} file(s) they come from, "
          f"read whole: {whole:,} tokens ({whole / max(answer_tokens, 1):.1f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
