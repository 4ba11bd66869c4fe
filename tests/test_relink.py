"""After a refresh of some files (what the MCP server runs before each answer), only the links
those documents hold or that can name them are resolved again (``reading.links.relink_documents``);
the outcome must be the one a full relink over the whole root gives. Keyword-only engines."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import indexed_engine

# two small vaults: plain names, and names only the linking file's folder, percent-decoding or
# Unicode folding (NFKC, case, combining marks) tell apart
_VAULTS = {
    "plain": (["a.md", "b.md", "sub/a.md", "sub/c.md", "sub/index.md", "Notes/B.md", "deep/x/c.md"], [
        "[[a]]", "[[A#Top]]", "[[sub/a]]", "[[c]]", "[[c#^blk]]", "[[b|label]]", "[[the label|sub/c]]", "[[Nick]]",
        "[[./c]]", "[[../a#Top#Sub]]", "[[index]]", "[x](a.md)", "[x](../a.md#top)", "[x](sub/)", "[x](sub)",
        "[x](/sub/c.md)", "[x](#top)", "[x](Notes/B%2Emd)", "[x](deep/x/c.md#sub)", "[x](<Notes/b.md>)", "[[Notes]]",
    ]),
    "folded": (["sub/index.md", "sub/a.md", "caf\u00e9.md", "deep/index.md", "deep/x/c.md", "\u00dcber.md"], [
        "[x](./)", "[x](..)", "[x](../#top)", "[x](.)", "[[CAF\u00c9]]", "[[cafe\u0301]]", "[x](caf%C3%A9.md)",
        "[[\uff43\uff41\uff46\u00e9]]", "[x](/deep)", "[[./a]]", "[[\u00fcber#Top]]", "[x](%C3%9Cber.md)", "[[Nick]]",
        "[x](../sub/)", "[[../index]]", "[x](%2E%2E/)", "[x](%2e)",
    ]),
}
_FRONT = st.sampled_from(["", "---\naliases: [Nick]\n---\n", "---\nalias: Notes, c\n---\n"])


def _vault(paths: list[str], links: list[str]) -> st.SearchStrategy:
    """(initial files, operations) on a vault of ``paths`` whose bodies hold ``links``."""
    pieces = st.sampled_from(links + ["# Top\n", "## Sub\n", "text ^blk\n", "\n", "words "])
    body = st.tuples(_FRONT, st.lists(pieces, max_size=8)).map(lambda t: t[0] + "# Top\n\n" + " ".join(t[1]) + "\n")
    path = st.sampled_from(paths)
    ops = st.lists(st.one_of(
        st.tuples(st.just("write"), path, body),
        st.tuples(st.just("remove"), path, st.just("")),
        st.tuples(st.just("rename"), path, path),
    ), min_size=1, max_size=6)
    return st.tuples(st.dictionaries(path, body, min_size=1, max_size=len(paths)), ops)


def _state(engine) -> dict[str, list[tuple]]:
    """Every document's outgoing links as ``get_links`` lists them (what and where to)."""
    out = {}
    for doc in engine.list_documents().to_dict()["documents"]:
        links = engine.links(doc["path"], limit=1000).to_dict()["outgoing"]
        out[doc["path"]] = [(k["line"], k["raw"], k["target"], k["status"], k["target_path"],
                                  k["target_heading_path"]) for k in links]
    return out


def _apply(root: Path, op: tuple[str, str, str]) -> list[str]:
    """Do ``op`` on the files under ``root``; returns the paths it touched."""
    kind, path, arg = op
    file = root / path
    if kind == "write":
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(arg, encoding="utf-8")
        return [path]
    if not file.exists() or path == arg:
        return []
    if kind == "remove":
        file.unlink()
        return [path]
    (root / arg).parent.mkdir(parents=True, exist_ok=True)
    os.replace(file, root / arg)
    return [path, arg]


@pytest.mark.parametrize("kind", sorted(_VAULTS))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_property_refreshed_links_equal_a_full_relink(tmp_path_factory, kind, data) -> None:
    from markdown_memory.reading.links import relink

    initial, ops = data.draw(_vault(*_VAULTS[kind]))
    root = tmp_path_factory.mktemp("vault") / "docs"
    for path, body in initial.items():
        _apply(root, ("write", path, body))
    engine = indexed_engine(root, "none")
    try:
        for op in ops:
            touched = _apply(root, op)
            if touched:
                engine.refresh(touched)
        refreshed = _state(engine)
        assert relink(engine.store) == 0  # a full relink finds nothing left to change
        assert _state(engine) == refreshed
    finally:
        engine.close()


def test_get_links_after_a_rename_an_alias_and_a_new_heading(tmp_path: Path) -> None:
    """``get_links`` under the server's freshness policy (``REFRESH``: changed files are
    re-indexed before the answer, no index run) re-resolves the backlinks of a renamed note, a
    new alias and a moved heading, and drops the links to a deleted note."""
    from markdown_memory.models import Freshness

    root = tmp_path / "docs"
    root.mkdir()
    (root / "home.md").write_text("# Home\n\nSee [[Guide]], [[Old Name#Install]] and [[Handbook]].\n\n"
                                  "[setup](Guide.md#install)\n", encoding="utf-8")
    (root / "Old Name.md").write_text("# Old Name\n\n## Install\n\nSteps.\n", encoding="utf-8")
    engine = indexed_engine(root, "none")

    def get_links(path: str) -> dict:
        time.sleep(0.05)  # an agent's next call: the stat probe of changed files runs again
        return engine.links(path, freshness=Freshness.REFRESH).to_dict()

    def outgoing() -> dict[str, tuple]:
        return {k["raw"]: (k["status"], k["target_path"], k["target_heading_path"]) for k in get_links("home.md")["outgoing"]}

    try:
        assert outgoing()["[[Old Name#Install]]"] == ("resolved", "Old Name.md", "Old Name > Install")
        assert outgoing()["[[Guide]]"] == ("unresolved", None, None)
        os.replace(root / "Old Name.md", root / "Guide.md")
        links = get_links("Guide.md")
        assert [(b["file_path"], b["raw"], b["target_heading_path"]) for b in links["backlinks"]] == [
            ("home.md", "[[Guide]]", None), ("home.md", "Guide.md#install", "Old Name > Install")]
        assert outgoing() == {
            "[[Guide]]": ("resolved", "Guide.md", None),
            "[[Old Name#Install]]": ("unresolved", None, None),
            "[[Handbook]]": ("unresolved", None, None),
            "Guide.md#install": ("resolved", "Guide.md", "Old Name > Install"),
        }
        (root / "Guide.md").write_text("---\naliases: [Handbook]\n---\n# Guide\n\n## Setup\n\n### Install\n\nSteps.\n",
                                       encoding="utf-8")
        assert outgoing() == {
            "[[Guide]]": ("resolved", "Guide.md", None),
            "[[Old Name#Install]]": ("unresolved", None, None),
            "[[Handbook]]": ("resolved", "Guide.md", None),
            "Guide.md#install": ("resolved", "Guide.md", "Guide > Setup > Install"),
        }
        (root / "Guide.md").unlink()
        assert set(outgoing().values()) == {("unresolved", None, None)}
    finally:
        engine.close()


def test_percent_encoded_dot_destinations_follow_a_new_folder_page(tmp_path: Path) -> None:
    # found while writing the incremental relink: ``%2E%2E/`` decodes to ``../`` (the linking
    # file's parent folder), a name its text does not spell; it must still be re-resolved
    root = tmp_path / "docs"
    (root / "sub" / "deep").mkdir(parents=True)
    (root / "sub" / "deep" / "x.md").write_text("# X\n\n[up](%2E%2E/) and [here](%2e)\n", encoding="utf-8")
    engine = indexed_engine(root, "none")
    try:
        (root / "sub" / "index.md").write_text("# Sub\n", encoding="utf-8")
        (root / "sub" / "deep.md").write_text("# Deep\n", encoding="utf-8")
        engine.refresh(["sub/index.md", "sub/deep.md"])
        links = engine.links("sub/deep/x.md").to_dict()["outgoing"]
        assert [(k["raw"], k["status"], k["target_path"]) for k in links] == [
            ("%2E%2E/", "resolved", "sub/index.md"), ("%2e", "resolved", "sub/deep.md")]
    finally:
        engine.close()


def test_bench_refresh_script_measures_a_one_file_edit(tmp_path: Path) -> None:
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, str(repo / "scripts" / "bench_refresh.py"), "--corpus",
                          str(repo / "tests" / "fixtures" / "links"), "--runs", "3"],
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(repo / "src")}, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "refresh: median" in run.stdout and "over 3 runs" in run.stdout
    assert "relink: median" in run.stdout
