"""``markdown-memory roots``: every docs root indexed at the default location is listed (root,
size, last used, whether the root still exists), and ``--prune`` plans, then with ``--yes``
removes, the indexes whose root is gone or empty, never one that is in use or still has its docs.

Runs the CLI (``cli_main``) over temp docs roots; the autouse ``_isolated_env`` fixture points
``XDG_DATA_HOME`` into the test's temp folder, so the default database location is private."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import filelock

from conftest import FIXTURES


def _roots(tmp_path: Path, cli_main) -> dict[str, Path]:
    """Four docs roots indexed keyword-only at the default location: ``kept`` (the guide),
    ``gone`` (indexed, then deleted), ``nodocs`` (a folder with no Markdown), ``emptied``
    (indexed, then every file removed)."""
    roots = {name: tmp_path / name for name in ("kept", "gone", "nodocs", "emptied")}
    shutil.copytree(FIXTURES / "guide", roots["kept"])
    shutil.copytree(FIXTURES / "guide", roots["gone"])
    roots["nodocs"].mkdir()
    (roots["nodocs"] / "notes.txt").write_text("not markdown\n")
    roots["emptied"].mkdir()
    (roots["emptied"] / "one.md").write_text("# One\n\ntext\n")
    for root in roots.values():
        run = cli_main("--embedder", "none", "index", str(root))
        assert run.returncode == 0, run.stderr
    shutil.rmtree(roots["gone"])
    (roots["emptied"] / "one.md").unlink()
    return roots


def _listing(cli_main, *args: str) -> dict:
    run = cli_main("roots", *args, "--json")
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_roots_lists_every_index_with_its_state(tmp_path: Path, cli_main) -> None:
    roots = _roots(tmp_path, cli_main)
    listing = _listing(cli_main)
    by_root = {Path(e["root"]).name: e for e in listing["indexes"]}
    assert set(by_root) == set(roots)
    assert by_root["kept"]["state"] == "ok" and by_root["kept"]["documents"] == 5
    assert by_root["gone"]["state"] == "gone" and not by_root["gone"]["root_exists"]
    assert by_root["nodocs"]["state"] == "empty" and by_root["nodocs"]["root_exists"]
    assert by_root["emptied"]["state"] == "empty"
    for entry in listing["indexes"]:
        assert Path(entry["database"]).is_file() and entry["size_bytes"] > 0 and entry["last_used"]
    assert listing["total_bytes"] == sum(e["size_bytes"] for e in listing["indexes"])
    text = cli_main("roots").stdout
    assert f"4 indexes under {listing['data_dir']}" in text and str(roots["gone"]) in text
    assert "roots --prune" in text


def test_prune_plans_first_then_removes_only_gone_and_empty(tmp_path: Path, cli_main) -> None:
    roots = _roots(tmp_path, cli_main)
    before = _listing(cli_main)["indexes"]
    plan = cli_main("roots", "--prune")
    assert plan.returncode == 0 and "would remove 3 of 4" in plan.stdout and "--prune --yes" in plan.stdout
    assert str(roots["kept"]) not in plan.stdout
    assert len(_listing(cli_main)["indexes"]) == 4, "the plan removed something"

    applied = _listing(cli_main, "--prune", "--yes")
    assert applied["applied"] and all(p["removed"] for p in applied["plan"])
    assert {Path(p["root"]).name for p in applied["plan"]} == {"gone", "nodocs", "emptied"}
    assert applied["freed_bytes"] == sum(e["size_bytes"] for e in before if Path(e["root"]).name != "kept")
    left = _listing(cli_main)["indexes"]
    assert [Path(e["root"]).name for e in left] == ["kept"]
    for entry in before:
        assert Path(entry["database"]).exists() == (Path(entry["root"]).name == "kept")
    # the kept index still answers
    search = cli_main("--embedder", "none", "search", "install on linux", "--docs-dir", str(roots["kept"]))
    assert search.returncode == 0 and "install.md" in search.stdout
    again = cli_main("roots", "--prune")
    assert again.returncode == 0 and "nothing to prune" in again.stdout


def test_prune_leaves_an_index_whose_run_holds_the_lock(tmp_path: Path, cli_main) -> None:
    roots = _roots(tmp_path, cli_main)
    gone = next(e for e in _listing(cli_main)["indexes"] if Path(e["root"]) == roots["gone"])
    with filelock.FileLock(gone["database"] + ".lock", timeout=0):
        run = cli_main("roots", "--prune", "--yes")
    assert run.returncode == 1 and "not removed, an index run is using it" in run.stdout
    assert Path(gone["database"]).exists()
    assert {Path(e["root"]).name for e in _listing(cli_main)["indexes"]} == {"kept", "gone"}


def test_no_index_yet_and_yes_without_prune(cli_main) -> None:
    run = cli_main("roots")
    assert run.returncode == 0 and run.stdout.startswith("no index under ")
    assert _listing(cli_main)["indexes"] == []
    bad = cli_main("roots", "--yes")
    assert bad.returncode == 2 and "--prune --yes" in bad.stderr and "Traceback" not in bad.stderr
