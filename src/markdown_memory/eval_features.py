"""Training export of the learned ranker: per labelled question, its first ``features.DEPTH``
first-stage candidates with their feature rows and whether each answers (``markdown-memory eval
--features FILE``, ``scripts/eval_retrieval.py --features FILE``).

Output (JSON Lines, one object per question, in the questions file's order)::

    {"id": "q1", "project": "httpx", "query": "...", "has_vectors": true,
     "features": ["on_keyword", ...],
     "candidates": [{"section_id": 12, "file_path": "httpx/docs/a.md", "start_line": 3,
                     "end_line": 20, "heading_path": "A > B", "label": 1, "x": [0.0, ...]}, ...]}

``candidates`` are in first-stage (``--ranker rrf``) order whatever the ranker setting;
``label`` is 1 when the section's file is an expected path and its line range holds the expected
line (as ``eval_taxonomy.first_correct`` decides), 0 otherwise; ``project`` is the first folder of
the first expected path ("" for a negative). The rows come from ``search/features.py``, the
one place query-time scoring reads too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .evaluation import MAX_TOKENS, WIDE_K, normalised_path
from .models import Freshness, SearchRequest
from .search.features import FEATURES
from .search.learned import capture


def project_of(expect: list[dict[str, Any]]) -> str:
    """The doc set a question is about: the first folder of its first expected path ("" for a
    negative)."""
    return expect[0]["path"].split("/", 1)[0] if expect else ""


def export_features(engine: Any, queries: list[dict[str, Any]], out: Path) -> int:
    """Search each question through ``engine`` (an ``Engine``, index as it is) and write its
    candidates' features and labels to ``out`` (module docstring). Returns the questions written."""
    indexed = engine.indexed_paths()
    written = 0
    with out.open("w", encoding="utf-8") as f:
        for q in queries:
            expect = [e | {"path": normalised_path(engine.root, e["path"], indexed)} for e in q.get("expect", [])]
            with capture() as seen:
                engine.search(SearchRequest(q["query"], top_k=WIDE_K, max_tokens=MAX_TOKENS), freshness=Freshness.FLAG)
            cands: list[dict[str, Any]] = []
            has_vectors = False
            if seen:
                last = seen[-1]
                has_vectors = last.has_vectors
                for c, x in zip(last.candidates, last.rows):
                    row = c.row
                    label = any(row["file_path"] == e["path"] and row["start_line"] <= e["line"] <= row["end_line"]
                                for e in expect)
                    cands.append({"section_id": c.section_id, "file_path": row["file_path"],
                                  "start_line": row["start_line"], "end_line": row["end_line"],
                                  "heading_path": row["heading_path"], "label": int(label),
                                  "x": [round(float(v), 6) for v in x]})
            record = {"id": str(q["id"]), "project": project_of(expect), "query": q["query"],
                      "has_vectors": has_vectors, "features": list(FEATURES), "candidates": cands}
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
            written += 1
    return written
