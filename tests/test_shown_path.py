"""A file name with a control character prints on one line in every command's text output
(trial finding 10): ``text.shown_path`` percent-escapes what is not printable, as the docs map's
links do, and ``read`` accepts that spelling back."""

from __future__ import annotations

import json
import sys

import pytest

from markdown_memory.text import shown_path


@pytest.mark.parametrize("name, shown", [
    ("guide.md", "guide.md"),
    ("a b/über & co.md", "a b/über & co.md"),  # printable: unchanged
    ("new\nline.md", "new%0Aline.md"),
    ("tab\there.md", "tab%09here.md"),
    ("cr\r.md", "cr%0D.md"),
    ("bell\x07\x1b.md", "bell%07%1B.md"),
    ("nbsp\u00a0.md", "nbsp%C2%A0.md"),
    ("line\u2028sep.md", "line%E2%80%A8sep.md"),
    ("caf\udce9.md", "caf%E9.md"),  # an undecodable byte kept by surrogateescape
])
def test_shown_path_is_one_printable_line(name, shown):
    assert shown_path(name) == shown
    assert shown_path(name).isprintable()


@pytest.mark.skipif(sys.platform == "win32", reason="a newline in a file name is POSIX-only")
def test_search_outline_and_list_print_a_newline_name_on_one_line(tmp_path, cli_main):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "new\nline.md").write_text("# Wibble\n\nThe wibblequark setting.\n", encoding="utf-8")
    env = {"MARKDOWN_MEMORY_DB": str(tmp_path / "i.db"), "MARKDOWN_MEMORY_EMBEDDER": "none"}
    assert cli_main("index", str(root), env=env).returncode == 0
    found = cli_main("search", "wibblequark", "--docs-dir", str(root), env=env)
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith("1. new%0Aline.md:1-3  Wibble")
    assert not any(line.startswith("line.md") for line in found.stdout.splitlines())
    for command in (["outline", "new\nline.md"], ["list"]):
        out = cli_main(*command, "--docs-dir", str(root), env=env)
        assert out.returncode == 0, out.stderr
        assert "new%0Aline.md" in out.stdout and "new\nline" not in out.stdout
    read = cli_main("read", "new%0Aline.md", "Wibble", "--docs-dir", str(root), "--json", env=env)
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout)["file_path"] == "new\nline.md"  # JSON keeps the real name
