"""A section whose heading *is* the identifier asked about (a flag's entry in an options
reference) ranks first, above pages that mention the identifier many times (issue 14: rclone's
``--transfers`` / ``--fast-list`` questions ranked the defining section 6th to 15th)."""

from __future__ import annotations

from pathlib import Path

import pytest

from markdown_memory.models import SearchRequest
from markdown_memory.search.definitions import defines

FLAGS = ["--transfers int", "-c, --checksum", "-u, --update", "--fast-list", "--bwlimit=SIZE", "--retries int",
         "--timeout duration", "--max-transfer SizeSuffix", "--cutoff-mode HARD|SOFT", "-n, --dry-run"]


def _reference(root: Path) -> None:
    body = ["# Usage", "", "Global options of the tool.", "", "## Options", ""]
    for i, flag in enumerate(FLAGS):
        body += [f"### {flag}", "", f"Sets option number {i} of the run; see the manual for its effects.", ""]
    (root / "usage.md").write_text("\n".join(body), encoding="utf-8")


def _providers(root: Path) -> None:
    # Provider pages mention the flags over and over, in headings of their own that are not
    # the flag (Transfers) or a lone note about the flag (--fast-list on a provider page).
    for name in ("alpha", "beta", "gamma", "delta"):
        text = (f"# {name.title()} storage\n\n## Configuration\n\nSet up {name}.\n\n### Transfers\n\n"
                f"On {name}, --transfers sets how many transfers run; raise --transfers for many small "
                f"files, lower --transfers when {name} throttles transfers. --checksum and --update work.\n\n"
                f"### --fast-list\n\nThis remote supports --fast-list, which lists with fewer transactions.\n\n"
                "### Modification times\n\nStored as metadata.\n")
        (root / f"{name}.md").write_text(text, encoding="utf-8")


@pytest.mark.parametrize("title, ident, expected", [
    ("--transfers int", "--transfers", True),
    ("-u, --update", "--update", True),
    ("--bwlimit=SIZE", "--bwlimit", True),
    ("--cutoff-mode HARD|SOFT|CAUTIOUS", "--cutoff-mode", True),
    ("`--fast-list`", "--fast-list", True),
    ("--update-dir-modtime", "--update", False),
    ("`--fast-list` used by default", "--fast-list", False),
    ("rclone.conf snippet", "rclone.conf", False),
    ("Transfers", "--transfers", False),
    # compared in text.match_form: a soft hyphen or full-width letters are the same identifier
    ("--trans\u00adfers int", "--transfers", True),
    ("--\uff54ransfers", "--transfers", True),
])
def test_defines_reads_a_heading_as_the_identifiers_entry(title: str, ident: str, expected: bool) -> None:
    assert defines(title, ident) is expected


@pytest.mark.parametrize("embedder", ["minilm", "none"])
@pytest.mark.parametrize("flag, heading", [
    ("--transfers", "Usage > Options > --transfers int"),
    ("--checksum", "Usage > Options > -c, --checksum"),
    ("--update", "Usage > Options > -u, --update"),
    ("--fast-list", "Usage > Options > --fast-list"),
])
def test_what_does_a_flag_do_returns_its_reference_entry_first(tmp_path: Path, make_engine, flag: str,
                                                                 heading: str, embedder: str) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    _reference(root)
    _providers(root)
    engine = make_engine(root, embedder)
    engine.index()
    answer = engine.search(SearchRequest(f"what does {flag} do"))
    top = answer.results[0]
    assert (top.file_path, top.heading_path) == ("usage.md", heading)
    assert top.content is not None
