"""`markdown-memory status` says what is true after the run that made the index: a file indexed
with a caveat (front matter ignored, text decoded as Windows-1252) stays listed after the run
that warned about it, and an index whose vectors are incomplete (a run stopped while embedding)
is not called hybrid: it says how many passages are keyword-only and how to finish."""

from __future__ import annotations

from pathlib import Path

import pytest

from markdown_memory.index import embedding


def _write(root: Path, files: dict[str, bytes]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (root / name).write_bytes(data)


CAVEATS = {
    "broken-fm.md": b"---\ntitle: [unclosed\ntags: a\n---\n\n# Broken\n\nBody text.\n",
    "latin1.md": "# Caf\u00e9\n\nNa\u00efve text.\n".encode("latin-1"),
    "clean.md": b"# Clean\n\nNothing to say about this one.\n",
}


def test_status_lists_the_files_indexed_with_warnings_after_the_run(tmp_path: Path, cli_main) -> None:
    docs, db = tmp_path / "docs", tmp_path / "i.db"
    _write(docs, CAVEATS)
    run = cli_main("--embedder", "none", "--db", str(db), "index", str(docs))
    assert run.returncode == 0 and "broken-fm.md" in run.stdout + run.stderr
    text = cli_main("--embedder", "none", "--db", str(db), "status", "--docs-dir", str(docs))
    lines = text.stdout.splitlines()
    broken = [line for line in lines if "broken-fm.md" in line]
    latin = [line for line in lines if "latin1.md" in line]
    assert len(broken) == 1 and broken[0].startswith("warning") and "invalid YAML front matter" in broken[0], lines
    assert len(latin) == 1 and latin[0].startswith("warning") and "Windows-1252" in latin[0], lines
    assert not any("clean.md" in line for line in lines)
    data = cli_main("--embedder", "none", "--db", str(db), "status", "--docs-dir", str(docs), "--json")
    import json

    status = json.loads(data.stdout)
    assert {(f["path"], f["kind"]) for f in status["failures"]} == {("broken-fm.md", "warning"),
                                                                    ("latin1.md", "warning")}
    assert status["coverage"] == "verified"  # a warning is accounted for, as a failed file is
    # a second, unchanged run keeps them (the warning is the file's, not the run's)
    cli_main("--embedder", "none", "--db", str(db), "index", str(docs))
    again = json.loads(cli_main("--embedder", "none", "--db", str(db), "status", "--docs-dir", str(docs),
                                "--json").stdout)
    assert again["failures"] == status["failures"]
    # fixing the file takes its warning away
    (docs / "broken-fm.md").write_text("---\ntitle: Fixed\n---\n\n# Broken\n\nBody text.\n")
    cli_main("--embedder", "none", "--db", str(db), "index", str(docs))
    fixed = json.loads(cli_main("--embedder", "none", "--db", str(db), "status", "--docs-dir", str(docs),
                                "--json").stdout)
    assert [f["path"] for f in fixed["failures"]] == ["latin1.md"]


def test_status_after_a_run_stopped_while_embedding_says_partly_hybrid_and_how_to_finish(
        tmp_path: Path, docs_root: Path, make_engine, monkeypatch: pytest.MonkeyPatch) -> None:
    from markdown_memory.cli.status import render_status

    monkeypatch.setattr(embedding, "EMBED_CHUNK", 4)  # stop after a few passages of the small guide
    engine = make_engine(docs_root, embedder="minilm", db=tmp_path / "p.db")
    embedded = {"n": 0}

    def progress(phase: str, done: int, total: int) -> None:
        if phase == "embed":
            embedded["n"] = done

    report = engine.index(progress=progress, should_stop=lambda: embedded["n"] > 0)
    assert report.interrupted
    status = engine.status()
    counts = status.counts
    assert 0 < counts.vectors < counts.passages and counts.pending_vectors == counts.passages - counts.vectors
    shown = render_status(status.to_dict())
    search_line = next(line for line in shown.splitlines() if line.startswith("search"))
    assert "hybrid (keyword + vectors)" not in search_line
    assert (f"partly hybrid: {counts.vectors} of {counts.passages} passages have vectors, "
            f"{counts.pending_vectors} are found by keywords only") in search_line
    assert status.message == (f"{counts.pending_vectors} of {counts.passages} passages still wait for vectors; "
                              f"search is partly keyword-only; run `markdown-memory --embedder minilm index "
                              f"{docs_root}` to compute them")
    # the run it names finishes the job, and status says hybrid again
    engine.index()
    done = engine.status()
    assert done.counts.pending_vectors == 0 and done.message is None
    assert "search     hybrid (keyword + vectors); embedder minilm" in render_status(done.to_dict())
