"""The tool never indexes its own instructions (issue 27 point 4): the agent rules block that
``setup --rules`` writes into CLAUDE.md / AGENTS.md (``agents.rules.with_rules``, the function
setup writes with) is left out of the index, and the index report says so; the rest of those
files stays searchable, on the lines it is on."""

from __future__ import annotations

import json
from pathlib import Path

from markdown_memory.agents.rules import blank_rules, with_rules

QUESTION = "how should I read the docs without opening whole files"


def _index(cli_main, root: Path, db: Path) -> dict:
    res = cli_main("--embedder", "none", "--db", str(db), "index", str(root), "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_the_rules_block_is_not_indexed_and_the_report_says_so(cli_main, tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "guide.md").write_text("# Guide\n\n## Reading files\n\nOpen a file with `open()` and read it whole.\n",
                                   encoding="utf-8")
    own = "# Project notes\n\n## Release checklist\n\nBump the version, tag it, push the tag.\n"
    (root / "CLAUDE.md").write_text(with_rules(own, "CLAUDE.md"), encoding="utf-8")
    (root / "AGENTS.md").write_text(with_rules(None, "AGENTS.md"), encoding="utf-8")  # created by setup
    db = tmp_path / "index.db"
    report = _index(cli_main, root, db)
    notes = {w["path"]: w["message"] for w in report["warnings"]}
    assert "agent rules block written by `markdown-memory setup --rules`, are not indexed" in notes["CLAUDE.md"]
    assert notes["AGENTS.md"].startswith("not indexed: it holds only the agent rules block")
    listed = cli_main("--db", str(db), "list", "--docs-dir", str(root), "--json")
    paths = {d["path"] for d in json.loads(listed.stdout)["documents"]}
    assert paths == {"guide.md", "CLAUDE.md"}
    found = json.loads(cli_main("--embedder", "none", "--db", str(db), "search", QUESTION, "--docs-dir", str(root),
                                "--json").stdout)
    assert all("Rules for agents" not in h["heading_path"] for h in found["results"]), found["results"]
    own_hit = json.loads(cli_main("--embedder", "none", "--db", str(db), "search", "release checklist tag",
                                  "--docs-dir", str(root), "--json").stdout)["results"][0]
    assert (own_hit["file_path"], own_hit["start_line"]) == ("CLAUDE.md", 3)
    # a second run says it again (the report is per run) and changes nothing
    again = _index(cli_main, root, db)
    assert again["added"] == 0 and {w["path"] for w in again["warnings"]} == {"CLAUDE.md", "AGENTS.md"}


def test_blanking_keeps_every_other_line_and_its_number() -> None:
    own = "# A\n\ntext\n"
    text = with_rules(own, "x") + "\n## After\n\nmore\n"
    blanked, span = blank_rules(text)
    assert span is not None and "agent-rules" not in blanked and "Rules for agents" not in blanked
    assert len(blanked.split("\n")) == len(text.split("\n"))
    kept = [(i, line) for i, line in enumerate(text.split("\n")) if not span[0] - 1 <= i <= span[1] - 1]
    assert all(blanked.split("\n")[i] == line for i, line in kept)
    broken = own + "<!-- agent-rules:start -->\nno end\n"
    assert blank_rules(broken) == (broken, None)  # a hand-broken block is indexed as written


START, END = "<!-- agent-rules:start -->", "<!-- agent-rules:end -->"
#: texts that mention the markers without holding a block (docs/agents.md line 48 is the first)
MENTIONS = {
    "code spans in one sentence": f"The block is the text between `{START}` and `{END}`: replaced in place.",
    "code spans on two lines": f"It starts at `{START}`\nand ends at `{END}`.",
    "bare in prose": f"Setup writes {START} ... {END} around the rules.",
    "shown in a fence": f"```markdown\n{START}\n## Rules\n{END}\n```",
    "shown in a tilde fence": f"~~~\n{START}\n~~~\n\nand later\n\n~~~\n{END}\n~~~",
    "only the start quoted": f"Look for `{START}`.",
}


def test_markers_mentioned_in_text_are_no_block_and_no_warning() -> None:
    from markdown_memory.agents.rules import without_rules

    for name, mention in MENTIONS.items():
        text = f"# Setup\n\n{mention}\n\nMore words.\n"
        assert blank_rules(text) == (text, None), name
        # setup neither refuses such a file nor takes anything out of it, and adds its block after it
        assert without_rules(text, "CLAUDE.md") == text, name
        added = with_rules(text, "CLAUDE.md")
        assert added.startswith(text.rstrip("\n")) and blank_rules(added)[1] is not None, name
        assert without_rules(added, "CLAUDE.md") == text, name


def test_the_docs_page_that_describes_the_block_gets_no_warning(cli_main, tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    page = Path(__file__).parents[1] / "docs" / "agents.md"
    (root / "agents.md").write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    report = _index(cli_main, root, tmp_path / "index.db")
    assert not [w for w in report["warnings"] if "rules block" in w["message"]], report["warnings"]
