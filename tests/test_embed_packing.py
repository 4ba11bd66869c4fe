"""Embedding cost levers: packed runs of small list items / table rows, and one embedding per
distinct text across files (issue 8)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from markdown_memory.markdown.passages import CODE_EMBED_CHARS, PACK_CHARS, embed_body, pack_runs
from markdown_memory.models import SearchRequest
from markdown_memory.store.testing import stored_passages

ITEMS = [
    "Redis cache", "Postgres database", "Kafka broker", "MinIO object store", "Nginx ingress",
    "Prometheus metrics", "Grafana dashboards", "Loki logs", "Tempo traces", "Vault secrets",
]

DOC = (
    "# Platform\n\nThe platform runs a handful of shared services for every team.\n\n"
    "## Components\n\n" + "".join(f"- {item}\n" for item in ITEMS) + "\n"
    "## Ports\n\n| Service | Port |\n| --- | --- |\n"
    + "".join(f"| svc{i} | {8000 + i} |\n" for i in range(8)) + "\n"
    "## Backups\n\nNightly snapshots of the Postgres volume are copied to the object store and kept for 30 days.\n"
)


def test_pack_runs_groups_adjacent_small_prose_but_not_code():
    items = [("list_item", "a" * 10, 3, 3), ("list_item", "b" * 10, 4, 4), ("paragraph", "c", 6, 6),
             ("code", "x = 1", 8, 8), ("table_row", "d", 10, 10), ("table_row", "e", 11, 11),
             ("heading", "Nested", 12, 12)]
    assert pack_runs(items) == [[0, 1, 2], [3], [4, 5], [6]]
    # two blank lines between items: not adjacent, not packed
    assert pack_runs([("list_item", "x", 1, 1), ("list_item", "y", 4, 4)]) == [[0], [1]]
    # the size limit: a run never exceeds PACK_CHARS characters (joined with line breaks)
    big = [("table_row", "r" * 100, n, n) for n in range(1, 21)]
    groups = pack_runs(big)
    assert sorted(i for g in groups for i in g) == list(range(20))
    assert all(len("\n".join("r" * 100 for _ in g)) <= PACK_CHARS for g in groups) and len(groups) > 1
    assert pack_runs(big, max_chars=0) == [[i] for i in range(20)]


def test_code_is_embedded_by_its_head_only():
    code = "\n".join(f"line_{n} = compute({n})" for n in range(40))
    head = embed_body("code", code)
    assert code.startswith(head) and len(head) <= CODE_EMBED_CHARS and head.endswith(")")
    assert embed_body("paragraph", code) == code


def test_small_items_are_embedded_once_per_run_and_still_found(tmp_path: Path, make_engine):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "platform.md").write_text(DOC)
    engine = make_engine(root)
    report = engine.index()
    passages = engine.status().counts.passages
    assert passages >= len(ITEMS) + 8
    assert report.vectors_embedded == passages  # every passage has a vector
    stored = stored_passages(engine.store)
    distinct = len({p.embed_key for p in stored})
    assert distinct <= passages - len(ITEMS)  # ten list items + eight rows: a few model inputs, not 18
    keys = {p.text: p.embed_key for p in stored}
    assert all(item in keys for item in ITEMS)  # every item keeps its own passage row and text
    assert len({keys[item] for item in ITEMS}) < len(ITEMS)
    hit = engine.search(SearchRequest("which service stores secrets")).results[0]
    assert hit.heading_path.endswith("Components")
    hit = engine.search(SearchRequest("grafana dashboards and loki logs")).results[0]
    assert hit.heading_path.endswith("Components")

    # An edit elsewhere in the file keeps the packed runs' vectors (same key), embeds the new text only.
    path = root / "platform.md"
    path.write_text(DOC + "\n## Restore\n\nRestores are done from the latest snapshot by the on-call engineer.\n")
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10_000_000))
    edited = engine.index()
    assert edited.updated == 1
    assert edited.vectors_embedded <= 2
    assert edited.vectors_embedded + edited.vectors_reused == engine.status().counts.passages


def test_copied_file_reuses_vectors_instead_of_embedding_again(tmp_path: Path, make_engine):
    root = tmp_path / "docs"
    (root / "a").mkdir(parents=True)
    (root / "a" / "platform.md").write_text(DOC)
    engine = make_engine(root)
    first = engine.index()
    shutil.copy(root / "a" / "platform.md", root / "platform-copy.md")
    second = engine.index()
    assert second.added == 1
    # same title and breadcrumbs, same texts: nothing new for the model
    assert second.vectors_embedded == 0
    assert second.vectors_reused == first.vectors_embedded
