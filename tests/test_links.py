"""Links between documents: wikilinks, embeds, Dendron names and relative Markdown links are
resolved with the vault's rules, listed with the section they sit in (engine ``links``, MCP
``get_links``, CLI ``links``), followed by ``read`` from a link target, and re-resolved when
notes appear or go. Keyword-only engines: ranking plays no part here."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import EVAL_CORPUS, FIXTURES, indexed_engine, require_eval_corpus

VAULT = FIXTURES / "links"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(VAULT, root)
    return root


def _env(db: str) -> dict[str, str | None]:
    return {"MARKDOWN_MEMORY_DB": db, "MARKDOWN_MEMORY_EMBEDDER": "none"}


def _outgoing(engine, path: str) -> dict[str, tuple]:
    answer = engine.links(path).to_dict()
    return {k["raw"]: (k["status"], k["target_path"], k["target_heading_path"]) for k in answer["outgoing"]}


def test_each_link_form_resolves_to_its_document_and_section(vault: Path) -> None:
    engine = indexed_engine(vault, "none")
    assert _outgoing(engine, "index.md") == {
        "[[Setup Guide]]": ("resolved", "Setup Guide.md", None),
        "[[setup guide|the guide]]": ("resolved", "Setup Guide.md", None),  # case-insensitive, label after |
        "[[Setup Guide#Install on Linux]]": ("resolved", "Setup Guide.md", "Setup Guide > Install on Linux"),
        "[[Setup Guide#Install on Linux#Troubleshooting]]":
            ("resolved", "Setup Guide.md", "Setup Guide > Install on Linux > Troubleshooting"),
        "[[Setup Guide#^firewall-note]]": ("resolved", "Setup Guide.md", "Setup Guide > Install on Linux > Troubleshooting"),
        "![[Setup Guide#Requirements]]": ("resolved", "Setup Guide.md", "Setup Guide > Requirements"),
        "[[proj.api.auth]]": ("resolved", "proj.api.auth.md", None),
        "[[Deployment Handbook]]": ("resolved", "ops/deploy.md", None),  # a front-matter alias
        "ops/deploy.md#rolling-back": ("resolved", "ops/deploy.md", "Deploy > Rolling Back"),  # slug fragment
        "ops/Release%20Notes.md": ("resolved", "ops/Release Notes.md", None),  # percent-encoded (case 031)
        "ops/Release Notes.md#v2": ("resolved", "ops/Release Notes.md", "Release Notes > v2"),  # <...> destination
        "[[alpha/readme]]": ("resolved", "alpha/readme.md", None),
        "[[beta/readme]]": ("resolved", "beta/readme.md", None),
        "[[readme]]": ("ambiguous", None, None),  # two folders, neither nearer the root
        "[[Quarterly Plan]]": ("unresolved", None, None),
        "[[proj.api.auth\\|the auth note]]": ("resolved", "proj.api.auth.md", None),  # escaped pipe in a table
    }


def test_links_carry_their_section_and_line_and_code_never_links(vault: Path) -> None:
    engine = indexed_engine(vault, "none")
    answer = engine.links("index.md").to_dict()
    by_raw = {k["raw"]: k for k in answer["outgoing"]}
    assert by_raw["[[Setup Guide#^firewall-note]]"]["heading_path"] == "Vault Home > Headings and blocks"
    assert by_raw["[[Setup Guide#^firewall-note]]"]["line"] == 11
    assert by_raw["ops/Release Notes.md#v2"]["line"] == 20  # second line of its list item
    assert not [raw for raw in by_raw if "Code Note" in raw]  # code span and fence
    assert (answer["outgoing_total"], answer["unresolved"]) == (16, 2)
    assert answer["message"].startswith("1 link(s) of this document lead to no indexed document")  # and 1 ambiguous
    assert "; 1 link(s) name several documents" in answer["message"]


def test_dendron_label_first_links_and_same_folder_names(vault: Path) -> None:
    engine = indexed_engine(vault, "none")
    # Dendron writes [[label|note]]: the side that names a note is the target
    assert engine.links("proj.api.md").to_dict()["outgoing"][0]["target_path"] == "proj.api.auth.md"
    # [[readme]] from beta/ is beta's readme (the same folder wins)
    assert _outgoing(engine, "beta/notes.md") == {"[[readme]]": ("resolved", "beta/readme.md", None)}
    # a wikilink name without folder found under ops/
    assert _outgoing(engine, "ops/Release Notes.md") == {
        "[[deploy#Rolling Back]]": ("resolved", "ops/deploy.md", "Deploy > Rolling Back")}


def test_backlinks_name_the_linking_sections(vault: Path) -> None:
    engine = indexed_engine(vault, "none")
    answer = engine.links("Setup Guide.md").to_dict()
    assert answer["backlinks_total"] == 8
    pairs = [(b["file_path"], b["heading_path"], b["target_heading_path"]) for b in answer["backlinks"]]
    assert ("ops/deploy.md", "Deploy > Rolling Back", "Setup Guide > Install on Linux") in pairs
    assert ("index.md", "Vault Home > Headings and blocks", "Setup Guide > Requirements") in pairs
    assert {p for p, _, _ in pairs} == {"index.md", "ops/deploy.md"}
    # paged: one of each per page, next_offset while either list has more
    first = engine.links("Setup Guide.md", limit=1).to_dict()
    assert len(first["backlinks"]) == 1 and first["next_offset"] == 1


def test_link_to_a_note_created_later_resolves_on_the_next_run(vault: Path) -> None:
    engine = indexed_engine(vault, "none")
    assert _outgoing(engine, "index.md")["[[Quarterly Plan]]"][0] == "unresolved"
    (vault / "plans").mkdir()
    (vault / "plans" / "Quarterly Plan.md").write_text("# Quarterly Plan\n\nShip it.\n", encoding="utf-8")
    engine.index()
    assert _outgoing(engine, "index.md")["[[Quarterly Plan]]"] == ("resolved", "plans/Quarterly Plan.md", None)
    assert engine.links("plans/Quarterly Plan.md").backlinks_total == 1
    (vault / "plans" / "Quarterly Plan.md").unlink()
    engine.index()
    assert _outgoing(engine, "index.md")["[[Quarterly Plan]]"] == ("unresolved", None, None)


def test_read_accepts_a_link_target(vault: Path, cli_main) -> None:
    engine = indexed_engine(vault, "none")
    section = engine.read("[[Setup Guide#Install on Linux]]", "")
    assert (section.file_path, section.heading_path) == ("Setup Guide.md", "Setup Guide > Install on Linux")
    assert engine.read("Setup Guide#^firewall-note", "").heading_path == "Setup Guide > Install on Linux > Troubleshooting"
    assert engine.read("[[Deployment Handbook]]", "").heading_path == "Deploy"  # alias; whole note: its first section
    db = str(vault.parent / "index.db")
    run = cli_main("read", "[[ops/deploy#rolling-back]]", "--docs-dir", str(vault), "--json", env=_env(db))
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["heading_path"] == "Deploy > Rolling Back"
    run = cli_main("read", "[[readme]]", "--docs-dir", str(vault), env=_env(db))
    assert run.returncode == 2 and "alpha/readme.md | beta/readme.md" in run.stderr
    run = cli_main("read", "[[Quarterly Plan]]", "--docs-dir", str(vault), env=_env(db))
    assert run.returncode == 2 and "no indexed document is named by the link target" in run.stderr


def test_mcp_tools_read_a_link_target_and_list_links(vault: Path) -> None:
    from markdown_memory.config import Settings
    from markdown_memory.mcp.runtime import Runtime

    indexed_engine(vault, "none").close()
    runtime = Runtime(Settings.load(vault, vault.parent / "index.db", "none", auto_index=False))
    try:
        read = runtime.answer("read_section", {"file_path": "[[Setup Guide#Requirements]]", "heading_path": "", "include_subsections": False, "cursor": None})
        assert read["content"].startswith("## Requirements")
        links = runtime.answer("get_links", {"file_path": "deploy.md", "offset": 0})
        assert links["file_path"] == "ops/deploy.md"
        assert [k["target_path"] for k in links["outgoing"]] == ["Setup Guide.md", "index.md", "Setup Guide.md"]
        assert [b["file_path"] for b in links["backlinks"]] == ["index.md", "index.md", "ops/Release Notes.md"]
    finally:
        runtime.shutdown()


def test_cli_links_lists_outgoing_and_backlinks(vault: Path, cli_main) -> None:
    db = str(vault.parent / "index.db")
    assert cli_main("index", str(vault), env=_env(db)).returncode == 0
    run = cli_main("links", "Setup Guide.md", "--docs-dir", str(vault), env=_env(db))
    assert run.returncode == 0, run.stderr
    assert "1 outgoing link(s), 0 not resolved; 8 backlink(s)" in run.stdout
    assert "ops/deploy.md:10  Deploy > Rolling Back  ->  Setup Guide > Install on Linux" in run.stdout
    run = cli_main("links", "index.md", "--docs-dir", str(vault), env=_env(db))
    assert "(unresolved: Quarterly Plan)" in run.stdout
    assert "(ambiguous: readme: alpha/readme.md | beta/readme.md)" in run.stdout


# -- the Dendron vault of the shared eval corpus ------------------------------------------------
DENDRON = EVAL_CORPUS / "dendron"


@pytest.fixture(scope="module")
def dendron_engine(tmp_path_factory: pytest.TempPathFactory):
    require_eval_corpus()
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine

    engine = Engine(Settings.load(DENDRON, tmp_path_factory.mktemp("dendron") / "i.db", "none"))
    engine.index()
    yield engine
    engine.close()


def _links_outside_code(root: Path, stem: str) -> int:
    """A grep count of wikilinks naming note ``stem``, lines inside fences left out."""
    pattern = re.compile(r"!?\[\[(?:[^\]|]*\|)?(?:dendron://[^/\]]*/)?" + re.escape(stem) + r"(?:#[^\]]*)?\]\]")
    count = 0
    for path in root.rglob("*.md"):
        fenced = False
        for line in path.read_text(encoding="utf-8").split("\n"):
            if line.lstrip().startswith(("```", "~~~")):
                fenced = not fenced
            elif not fenced:
                count += len(pattern.findall(re.sub(r"`[^`]*`", "", line)))
    return count


def test_dendron_backlinks_match_a_grep_count(dendron_engine) -> None:
    for note in ("vault/dendron.topic.links.md", "vault/dendron.topic.schema.md"):
        answer = dendron_engine.links(note, limit=200).to_dict()
        expected = _links_outside_code(DENDRON, Path(note).stem)
        assert expected >= 10
        assert answer["backlinks_total"] == expected == len(answer["backlinks"])
        assert all(b["heading_path"] for b in answer["backlinks"])


def test_dendron_heading_link_reads_the_section(dendron_engine) -> None:
    section = dendron_engine.read("[[Cross Vault Link|dendron.topic.links#cross-vault-links]]", "")
    assert section.file_path == "vault/dendron.topic.links.md"
    assert section.heading_path.endswith("Cross Vault Links")
    assert section.content.startswith("### Cross Vault Links") or "Cross Vault" in section.content.split("\n")[0]


def test_dendron_unresolved_links_are_listed(dendron_engine) -> None:
    answer = dendron_engine.links("vault/dendron.faq.md", limit=200).to_dict()
    unresolved = [k for k in answer["outgoing"] if k["status"] == "unresolved"]
    assert answer["unresolved"] >= len(unresolved) > 0
    for link in unresolved:  # the notes they name are not in this subset of the vault
        name = re.sub(r"^dendron://[^/]*/", "", link["target"]).split("#")[0]
        assert not (DENDRON / "vault" / f"{name}.md").exists(), link
    assert any(k["status"] == "resolved" and k["target_heading_path"] for k in answer["outgoing"])


# -- property: stored links are where they say they are ------------------------------------------
_NAMES = ["alpha", "Beta Note", "c.d.e", "dir/fgh"]
_PIECES = st.sampled_from([
    "[[alpha]]", "[[Beta Note#Part One]]", "[[c.d.e|label]]", "![[dir/fgh#^blk]]", "[[gone]]",
    "[x](alpha.md)", "[y](<Beta Note.md#part-one>)", "`[[alpha]]`", "text", "\n", "\n\n", "\n## Part One\n",
    "\n# Top\n", " ^blk", "\n```\n[[alpha]]\n```\n", "- item ", "> quote ", "| a | [[alpha\\|b]] |\n|---|---|\n",
])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bodies=st.lists(st.lists(_PIECES, max_size=14).map("".join), min_size=len(_NAMES), max_size=len(_NAMES)))
def test_property_stored_links_sit_in_their_section_and_lead_to_what_exists(tmp_path_factory, bodies) -> None:
    from markdown_memory.config import Settings
    from markdown_memory.engine import Engine

    root = tmp_path_factory.mktemp("prop") / "vault"
    for name, body in zip(_NAMES, bodies):
        path = root / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body + "\n", encoding="utf-8")
    engine = Engine(Settings.load(root, root.parent / "i.db", "none"))
    try:
        engine.index()
        paths = {d.path for d in engine.list_documents().documents}
        for path in paths:
            answer = engine.links(path, limit=1000).to_dict()
            for link in answer["outgoing"]:
                section = engine.read(path, link["heading_path"]).content
                assert link["raw"] in section, (path, link)
                if link["status"] == "resolved":
                    assert link["target_path"] in paths
                if link["target_heading_path"] is not None:
                    headings = [h.heading_path for h in engine.outline(link["target_path"]).headings]
                    assert link["target_heading_path"] in headings or link["target_heading_path"].startswith("(")
    finally:
        engine.close()


def test_vaults_page_shows_what_links_prints(vault: Path, cli_main) -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / "vaults.md").read_text(encoding="utf-8")
    shown = page.split("```text\n", 1)[1].split("```", 1)[0].rstrip("\n")
    run = cli_main("links", "Setup Guide.md", "--docs-dir", str(vault), env=_env(str(vault.parent / "i.db")))
    assert run.stdout.rstrip("\n") == shown


def test_site_paths_trailing_slashes_and_picture_embeds(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    (root / "site" / "docs" / "api").mkdir(parents=True)
    (root / "site" / "docs" / "api" / "routing.md").write_text("# Routing\n\n## Regexp\n\nPatterns.\n", encoding="utf-8")
    (root / "site" / "docs" / "index.md").write_text(
        "# Home\n\nSee [routing](/docs/api/routing#regexp), [again](api/routing.md/#regexp) "
        "and ![[diagram.png]] and [[routing]].\n", encoding="utf-8")
    engine = indexed_engine(root, "none")
    assert _outgoing(engine, "site/docs/index.md") == {
        "/docs/api/routing#regexp": ("resolved", "site/docs/api/routing.md", "Routing > Regexp"),
        "api/routing.md/#regexp": ("resolved", "site/docs/api/routing.md", "Routing > Regexp"),
        "[[routing]]": ("resolved", "site/docs/api/routing.md", None),
    }


def test_get_links_lists_the_candidates_of_an_ambiguous_name(vault: Path) -> None:
    from markdown_memory.config import Settings
    from markdown_memory.mcp.runtime import Runtime

    indexed_engine(vault, "none").close()
    runtime = Runtime(Settings.load(vault, vault.parent / "index.db", "none", auto_index=False))
    try:
        by_raw = {k["raw"]: k for k in runtime.answer("get_links", {"file_path": "index.md", "offset": 0})["outgoing"]}
        assert by_raw["[[readme]]"]["status"] == "ambiguous"
        assert by_raw["[[readme]]"]["candidates"] == ["alpha/readme.md", "beta/readme.md"]
        assert [raw for raw, k in by_raw.items() if "candidates" in k] == ["[[readme]]"]  # only ambiguous links
    finally:
        runtime.shutdown()


def test_an_ambiguous_name_with_a_label_still_lists_its_candidates(vault: Path) -> None:
    from markdown_memory.errors import DocumentNotFoundError

    engine = indexed_engine(vault, "none")
    with pytest.raises(DocumentNotFoundError) as caught:
        engine.read("[[readme|the readme]]", "")
    assert caught.value.candidates == ["alpha/readme.md", "beta/readme.md"]


def test_wikilinks_resolve_to_every_indexed_extension(tmp_path: Path, cli_main) -> None:
    from markdown_memory.files.walk import MARKDOWN_SUFFIXES

    root = tmp_path / "exts"
    root.mkdir()
    stems = [f"f_{suffix[1:]}" for suffix in MARKDOWN_SUFFIXES]
    for stem, suffix in zip(stems, MARKDOWN_SUFFIXES):
        (root / f"{stem}{suffix}").write_text(f"# F {suffix}\n\nbody\n", encoding="utf-8")
    (root / "links.md").write_text("# Links\n\n" + " ".join(f"[[{s}]]" for s in stems) + "\n", encoding="utf-8")
    (root / "note.mkdn").write_text("# Note\n\n## Sub\n\nnote text\n", encoding="utf-8")
    db = str(tmp_path / "index.db")
    assert cli_main("index", str(root), env=_env(db)).returncode == 0
    run = cli_main("links", "links.md", "--docs-dir", str(root), env=_env(db))
    assert run.returncode == 0, run.stderr
    assert f"{len(stems)} outgoing link(s), 0 not resolved" in run.stdout
    for stem, suffix in zip(stems, MARKDOWN_SUFFIXES):
        assert f"->  {stem}{suffix}" in run.stdout
    run = cli_main("read", "[[note#Sub]]", "--docs-dir", str(root), "--json", env=_env(db))
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["file_path"] == "note.mkdn"


@pytest.mark.parametrize("flags", [("--limit", "0"), ("--limit", "-5"), ("--limit", "1001"), ("--offset", "-2")])
def test_links_rejects_out_of_range_paging_as_list_does(vault: Path, cli_main, flags) -> None:
    """Trial finding: `links hub.md --limit 0` showed 1 link; -5, 1001 and --offset -2 were
    accepted (docs: 1-1000)."""
    db = str(vault.parent / "index.db")
    assert cli_main("index", str(vault), env=_env(db)).returncode == 0
    run = cli_main("links", "index.md", "--docs-dir", str(vault), *flags, env=_env(db))
    assert run.returncode == 2 and run.stdout == ""
    assert flags[0] in run.stderr and ("between 1 and 1000" in run.stderr or "at least 0" in run.stderr)
    run = cli_main("links", "index.md", "--docs-dir", str(vault), "--limit", "1000", "--offset", "0", env=_env(db))
    assert run.returncode == 0, run.stderr


def test_a_front_matter_title_names_its_note_like_an_alias(vault: Path, cli_main) -> None:
    """Trial finding: `read 'Front Matter Doc'` (a front-matter title) said "is not a Markdown
    file (.md, .markdown, .mdx)": titles did not resolve, and the list left out five indexed
    extensions."""
    from markdown_memory.files.walk import MARKDOWN_SUFFIXES

    (vault / "front.md").write_text("---\ntitle: Front Matter Doc\n---\n\n## Deploying the widget\n\nSteps.\n")
    db = str(vault.parent / "index.db")
    assert cli_main("index", str(vault), env=_env(db)).returncode == 0
    for args in (("read", "Front Matter Doc"), ("read", "front matter doc", "Deploying the widget")):
        run = cli_main(*args, "--docs-dir", str(vault), "--json", env=_env(db))
        assert run.returncode == 0, run.stderr
        assert (json.loads(run.stdout)["file_path"], json.loads(run.stdout)["heading_path"]) == (
            "front.md", "Deploying the widget")
    run = cli_main("outline", "Front Matter Doc", "--docs-dir", str(vault), "--json", env=_env(db))
    assert run.returncode == 0 and json.loads(run.stdout)["file_path"] == "front.md"
    run = cli_main("read", "No Such Title", "--docs-dir", str(vault), env=_env(db))
    assert run.returncode == 2 and f"({', '.join(MARKDOWN_SUFFIXES)})" in run.stderr


def test_a_name_two_notes_share_lists_its_candidates_in_every_command(vault: Path, cli_main) -> None:
    """Trial: ``links readme`` / ``outline readme`` / ``read readme`` said "not a Markdown file nor
    a note's name" with no candidates, while ``read '[[readme]]'`` listed both notes."""
    from markdown_memory.config import Settings
    from markdown_memory.mcp.runtime import Runtime

    db = str(vault.parent / "index.db")
    assert cli_main("index", str(vault), env=_env(db)).returncode == 0
    for args in (("links", "readme"), ("outline", "readme"), ("read", "readme")):
        run = cli_main(*args, "--docs-dir", str(vault), "--json", env=_env(db))
        error = json.loads(run.stdout)["error"]
        assert run.returncode != 0 and error["candidates"] == ["alpha/readme.md", "beta/readme.md"], args
        assert "names 2 documents" in error["message"], args
    runtime = Runtime(Settings.load(vault, Path(db), "none", auto_index=False))
    try:
        for tool, fn in (("get_links", lambda: runtime.answer("get_links", {"file_path": "readme", "offset": 0})),
                         ("read_section", lambda: runtime.answer("read_section", {"file_path": "readme", "heading_path": "", "include_subsections": False, "cursor": None}))):
            result = anyio.run(runtime.call, tool, fn)
            error = json.loads(result.content[0].text)
            assert result.is_error and error["candidates"] == ["alpha/readme.md", "beta/readme.md"], tool
    finally:
        runtime.shutdown()


def test_links_message_counts_unresolved_and_ambiguous_links_apart(vault: Path, cli_main) -> None:
    """Trial: "2 link(s) … lead to no indexed document or heading" while one of them (an
    ambiguous name) leads to two documents."""
    db = str(vault.parent / "index.db")
    assert cli_main("index", str(vault), env=_env(db)).returncode == 0
    answer = json.loads(cli_main("links", "index.md", "--docs-dir", str(vault), "--json", env=_env(db)).stdout)
    statuses = [k["status"] for k in answer["outgoing"]]
    nowhere = sum(s in ("unresolved", "no_heading") for s in statuses)
    assert statuses.count("ambiguous") == 1 and nowhere >= 1
    assert answer["message"] == (f"{nowhere} link(s) of this document lead to no indexed document or heading "
                                 "(status 'unresolved' or 'no_heading'); 1 link(s) name several documents "
                                 "(status 'ambiguous', with their candidates)")


def test_front_matter_wikilinks_are_links_of_the_note(vault: Path) -> None:
    """Obsidian properties link notes (``up: "[[...]]"``, a list of links): they are outgoing
    links of the note's first section and backlinks of their targets, with their file line; a
    commented-out property and a Markdown link in front matter are not."""
    (vault / "daily.md").write_text(
        '---\nup: "[[Setup Guide]]"\nrelated: ["[[proj.api.auth]]", "[[Setup Guide#Requirements|reqs]]"]\n'
        '# old: "[[Quarterly Plan]]"\nsource: "[x](ops/deploy.md)"\n---\n# Daily\n\nNothing linked here.\n',
        encoding="utf-8")
    engine = indexed_engine(vault, "none")
    answer = engine.links("daily.md").to_dict()
    by_raw = {k["raw"]: k for k in answer["outgoing"]}
    assert {raw: (k["status"], k["target_path"], k["target_heading_path"], k["line"]) for raw, k in by_raw.items()} == {
        "[[Setup Guide]]": ("resolved", "Setup Guide.md", None, 2),
        "[[proj.api.auth]]": ("resolved", "proj.api.auth.md", None, 3),
        "[[Setup Guide#Requirements|reqs]]": ("resolved", "Setup Guide.md", "Setup Guide > Requirements", 3),
    }
    assert {k["heading_path"] for k in answer["outgoing"]} == {"Daily"}
    backlinks = engine.links("Setup Guide.md").to_dict()["backlinks"]
    assert "daily.md" in {b["file_path"] for b in backlinks}
