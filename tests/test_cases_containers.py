"""Docs-site containers (issue 37, case 052): tabs, admonitions and callouts of every site
dialect are containers whose bodies are prose and code as written, never indented code.

Case 052 (MkDocs Material) runs through the CLI and MCP from its copy in
tests/fixtures/cases/052-*; the table below holds one variant per dialect (MkDocs/pymdown,
Docusaurus/MDX, VitePress, Hugo, mdBook), each checked in the parser and through the CLI.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
import pytest

from case_cli import Cli
from markdown_memory.config import Settings
from markdown_memory.markdown.parse import parse_document
from markdown_memory.mcp.runtime import Runtime
from markdown_memory.models import SearchRequest

CASE = Path(__file__).parent / "fixtures" / "cases" / "052-mkdocs-content-tabs-admonitions"

# -- 052 as given ------------------------------------------------------------------------------------
# Sources: DavidAnson/markdownlint#2268, preservim/vim-markdown#565, squidfunk/mkdocs-material#7892


@pytest.fixture
def cli_052(tmp_path, cli_main) -> Cli:
    root = tmp_path / "docs"
    shutil.copytree(CASE, root, ignore=shutil.ignore_patterns("case.md"))
    return Cli(cli_main, root, tmp_path / "i.db")


def hits(cli: Cli, query: str, *extra: str) -> list[tuple[str, str]]:
    return [(r["file_path"], r["heading_path"]) for r in cli("search", query, *extra)["results"]]


def test_case_052_cli_a_command_inside_a_tab_is_bash_code(cli_052):
    for token in ("tabbedlinuxtoken", "tabbedmactoken"):
        assert hits(cli_052, token, "--lang", "bash")[:1] == [("install.md", "Install > Per platform")], token
    assert hits(cli_052, "plaincodetoken", "--lang", "bash")[:1] == [("install.md", "Install > Plain code")]


def test_case_052_cli_admonition_prose_is_prose_not_code(cli_052):
    for token in ("admonitionprosetoken", "collapsedtiptoken"):
        assert ("install.md", "Install > Caveats") not in hits(cli_052, token, "--kind", "code"), token
        assert hits(cli_052, token, "--kind", "prose")[:1] == [("install.md", "Install > Caveats")], token


def test_case_052_mcp_search_with_lang_and_kind(tmp_path):
    root = tmp_path / "docs"
    shutil.copytree(CASE, root, ignore=shutil.ignore_patterns("case.md"))
    runtime = Runtime(Settings.load(root, tmp_path / "mcp.db", "none", auto_index=False))

    def search(query: str, **filters: str) -> list[tuple[str, str]]:
        result = anyio.run(runtime.call, "search_docs", lambda: runtime.search_docs(SearchRequest(query, **filters)))
        assert not result.is_error
        return [(r["file_path"], r["heading_path"]) for r in json.loads(result.content[0].text)["results"]]

    try:
        assert not anyio.run(runtime.call, "index_directory", lambda: runtime.index_directory(None, False)).is_error
        assert search("tabbedlinuxtoken", lang="bash")[:1] == [("install.md", "Install > Per platform")]
        assert search("tabbedmactoken", lang="bash")[:1] == [("install.md", "Install > Per platform")]
        assert ("install.md", "Install > Caveats") not in search("admonitionprosetoken", kind="code")
        assert search("collapsedtiptoken", kind="prose")[:1] == [("install.md", "Install > Caveats")]
    finally:
        runtime.shutdown()


# -- every dialect ---------------------------------------------------------------------------------
# Each variant: a container holding a ```bash fence with CMDTOKEN (indented as the dialect's
# authors indent it) and a line of prose with PROSETOKEN; LABEL is the tab's or callout's name.
FENCE = "```bash\nrun CMDTOKEN --now\n```"


def indent(text: str, by: int) -> str:
    return "\n".join((" " * by + line) if line else line for line in text.split("\n"))


DIALECTS = {
    "mkdocs-tab": f'=== "LABEL"\n\n{indent(FENCE, 4)}\n\n{indent("Prose PROSETOKEN here.", 4)}',
    "mkdocs-tab-open": f'===+ "LABEL"\n\n{indent(FENCE, 4)}\n\n    Prose PROSETOKEN here.',
    "mkdocs-admonition": f'!!! note "LABEL"\n\n    Prose PROSETOKEN here.\n\n{indent(FENCE, 4)}',
    "mkdocs-details": f'??? tip "LABEL"\n\n    Prose PROSETOKEN here.\n\n{indent(FENCE, 4)}',
    "mkdocs-details-open": f'???+ warning "LABEL"\n\n    Prose PROSETOKEN here.\n\n{indent(FENCE, 4)}',
    "mkdocs-nested": f'=== "LABEL"\n\n    !!! note\n\n        Prose PROSETOKEN here.\n\n{indent(FENCE, 8)}',
    "docusaurus-admonition": f":::note LABEL\n\nProse PROSETOKEN here.\n\n{FENCE}\n\n:::",
    "docusaurus-admonition-indented": f":::tip[LABEL]\n\n    Prose PROSETOKEN here.\n\n{indent(FENCE, 4)}\n\n:::",
    "docusaurus-tabs": (f'<Tabs>\n  <TabItem value="x" label="LABEL">\n\n{indent(FENCE, 4)}\n\n'
                        f'    Prose PROSETOKEN here.\n\n  </TabItem>\n</Tabs>'),
    "vitepress-tip": f"::: tip LABEL\nProse PROSETOKEN here.\n\n{FENCE}\n:::",
    "vitepress-code-group": f"::: code-group\n\n{indent(FENCE, 4)}\n\n:::\n\n::: info LABEL\n    Prose PROSETOKEN here.\n:::",
    "vitepress-nested": f":::: details LABEL\n::: tip\n    Prose PROSETOKEN here.\n\n{indent(FENCE, 4)}\n:::\n::::",
    "hugo-tab": (f'{{{{< tabs >}}}}\n{{{{< tab "LABEL" >}}}}\n\n{indent(FENCE, 4)}\n\n    Prose PROSETOKEN here.\n\n'
                 f'{{{{< /tab >}}}}\n{{{{< /tabs >}}}}'),
    "hugo-notice": f'{{{{% notice note "LABEL" %}}}}\n    Prose PROSETOKEN here.\n\n{indent(FENCE, 4)}\n{{{{% /notice %}}}}',
    "myst-fence": "```{note} LABEL\nProse PROSETOKEN here.\n\n~~~bash\nrun CMDTOKEN --now\n~~~\n```",
    "myst-admonition-nested": f"````{{admonition}} LABEL\n:class: tip\n\nProse PROSETOKEN here.\n\n{FENCE}\n````",
    "myst-colon": f":::{{tip}} LABEL\nProse PROSETOKEN here.\n\n{FENCE}\n:::",
    "pymdown-blocks": f"/// tab | LABEL\n\n{FENCE}\n\nProse PROSETOKEN here.\n///",
    "mdbook-tabs": (f'{{{{#tabs }}}}\n{{{{#tab name="LABEL" }}}}\n\n{indent(FENCE, 4)}\n\n    Prose PROSETOKEN here.\n'
                    f'{{{{#endtab }}}}\n{{{{#endtabs }}}}'),
}


def page(body: str) -> str:
    return f"# Page\n\n## Inside\n\nIntro words.\n\n{body}\n\n## After\n\nTail words.\n"


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_every_dialect_body_is_read_as_written(dialect):
    for path in ("page.md", "page.mdx"):
        doc = parse_document(page(DIALECTS[dialect]), path)
        # the container neither swallows nor invents sections
        assert [s.heading_path for s in doc.sections] == ["Page", "Page > Inside", "Page > After"], (dialect, path)
        code = [p for p in doc.passages if "CMDTOKEN" in p.text]
        assert [(p.kind, p.lang, p.text, p.section) for p in code] == [("code", "bash", "run CMDTOKEN --now", 1)], dialect
        prose = [p for p in doc.passages if "PROSETOKEN" in p.text]
        assert [(p.kind, p.text.strip(), p.section) for p in prose] == [("paragraph", "Prose PROSETOKEN here.", 1)], dialect
        if "LABEL" in DIALECTS[dialect]:
            assert any(p.text == "LABEL" and p.kind == "paragraph" for p in doc.passages), dialect
        # no marker line is stored as prose
        assert not any(p.text.lstrip().startswith((":::", "{{", "<Tab", "===", "!!!", "???")) for p in doc.passages)


def test_every_dialect_through_the_cli(tmp_path, cli_main):
    root = tmp_path / "docs"
    root.mkdir()
    for k, (dialect, body) in enumerate(sorted(DIALECTS.items())):
        text = page(body).replace("CMDTOKEN", f"cmd{k}token").replace("PROSETOKEN", f"prose{k}token")
        (root / f"{dialect}.md").write_text(text, encoding="utf-8")
    cli = Cli(cli_main, root, tmp_path / "i.db")
    for k, dialect in enumerate(sorted(DIALECTS)):
        assert hits(cli, f"cmd{k}token", "--lang", "bash")[:1] == [(f"{dialect}.md", "Page > Inside")], dialect
        # a code hit may be the section (it holds the fence too), never by the prose passage
        code_hits = cli("search", f"prose{k}token", "--kind", "code")["results"]
        assert not any(f"prose{k}token" in (r.get("preview") or "") for r in code_hits), (dialect, code_hits)
        assert hits(cli, f"prose{k}token", "--kind", "prose")[:1] == [(f"{dialect}.md", "Page > Inside")], dialect


UNPAIRED = [":::note\nnever closed", "<Tabs>\nnever closed", '{{< tab "x" >}}\nnever closed', "{{#tabs }}\nnever closed",
            "{{< figure src=\"a.png\" >}}", "{{#include ../src/main.rs}}"]


@pytest.mark.parametrize("marker", UNPAIRED)
def test_a_marker_without_its_closer_swallows_nothing(marker):
    doc = parse_document(page(marker), "page.md")
    assert [s.heading_path for s in doc.sections] == ["Page", "Page > Inside", "Page > After"]
    assert any("Tail words." in p.text for p in doc.passages)


def test_a_myst_code_directive_stays_code():
    doc = parse_document("# Page\n\n```{code-block} python\nprint('mystcodetoken')\n```\n", "page.md")
    assert [p.kind for p in doc.passages if "mystcodetoken" in p.text] == ["code"]


def test_plain_indented_code_outside_containers_is_still_code():
    doc = parse_document("# Page\n\nText.\n\n    indented_code_token()\n", "page.md")
    assert [(p.kind, p.text) for p in doc.passages if "indented_code_token" in p.text] == [
        ("code", "indented_code_token()")]
