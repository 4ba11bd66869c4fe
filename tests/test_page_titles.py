"""Page identity: every document's title is the one a person would give it (front matter, H1,
the site's navigation, the file name; never a lower heading), the navigation is re-read when
it changes, and a query naming a page finds that page's lead section first."""

from __future__ import annotations

import time
from pathlib import Path

from markdown_memory.index.navigation import category_titles, mkdocs_titles, navigation_titles, summary_titles
from markdown_memory.markdown import parse_document
from markdown_memory.markdown.titles import file_name_title
from markdown_memory.models import SearchRequest

MKDOCS_YML = """\
site_name: Pydantic Validation
theme:
  name: 'material'
markdown_extensions:
  - pymdownx.emoji:
      emoji_index: !!python/name:material.extensions.emoji.twemoji
      emoji_generator: !!python/name:material.extensions.emoji.to_svg
  - pymdownx.superfences:
      custom_fences:
        - name: mermaid
          format: !!python/name:pymdownx.superfences.fence_code_format
extra:
  analytics:
    property: !ENV GOOGLE_ANALYTICS_KEY
nav:
  - Get Started:
      - Welcome to Pydantic: index.md
      - Installation: install.md
  - Concepts:
      - Strict Mode: concepts/strict_mode.md
      - concepts/fields.md
  - Blog: https://blog.pydantic.dev/
"""

STRICT_MODE_MD = """\
??? api "API Documentation"
    [`pydantic.types.Strict`][pydantic.types.Strict]<br>

By default, Pydantic will attempt to coerce values to the desired type when possible.
To better support this use case, Pydantic provides a "strict mode".

## Strict mode in method calls

Pass `strict=True` to `model_validate`.

## As a validation parameter

Strict mode can also be enabled per call.
"""

SUMMARY_MD = """\
# Summary

[Introduction](index.md)

* [Getting Started](getting-started/index.md)
    * [Installation](getting-started/installation.md)
* [Commands](commands/index.md)
    * [`cargo build`](commands/cargo-build.md)
    * [Cargo Home](https://doc.rust-lang.org/cargo/guide/cargo-home.html)
"""


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


# -- title sources, one by one ------------------------------------------------------------------
def test_front_matter_title_wins_over_the_h1():
    doc = parse_document("---\ntitle: Installing the CLI\nsidebar_label: Install\n---\n\n# Install\n\nRun it.\n",
                         "docs/install.md")
    assert doc.title == "Installing the CLI"
    assert ("Install", "title") in doc.names  # the H1 still names the page


def test_hugo_link_title_and_docusaurus_sidebar_label_title_a_page_without_title():
    hugo = parse_document('+++\nlinkTitle = "Quick start"\nweight = 2\n+++\n\nSome text.\n', "content/qs.md")
    assert hugo.title == "Quick start"
    docusaurus = parse_document("---\nsidebar_label: Deploying\nsidebar_position: 3\n---\n\nText.\n",
                                "docs/deploy.mdx")
    assert docusaurus.title == "Deploying"


def test_the_h1_titles_a_page_without_front_matter_title_even_after_a_preamble():
    doc = parse_document('<img src="logo.svg">\n\n# Cargo Home\n\nThe Cargo home functions as a cache.\n\n'
                         "## Directories\n\nText.\n", "guide/cargo-home.md", nav_title="The Home")
    assert doc.title == "Cargo Home"
    assert doc.sections[doc.lead].title == "Cargo Home"  # the lead section is the H1's, not the logo


def test_a_page_without_h1_is_never_titled_by_its_first_h2():
    doc = parse_document(STRICT_MODE_MD, "concepts/strict_mode.md")
    assert doc.title == "Strict mode"  # its file name, not "Strict mode in method calls"
    assert doc.lead == 0 and doc.sections[0].level == 0  # the preamble is where the page starts
    nav = parse_document(STRICT_MODE_MD, "concepts/strict_mode.md", nav_title="Strict Mode")
    assert nav.title == "Strict Mode"


def test_file_names_as_words():
    assert file_name_title("concepts/strict_mode.md") == "Strict mode"
    assert file_name_title("getting-started.md") == "Getting started"
    assert file_name_title("docs/getting-started/index.md") == "Getting started"
    assert file_name_title("api_keys/README.md") == "Api keys"
    assert file_name_title("docs/API-reference.mdx") == "API reference"
    assert file_name_title("README.md") == "README"  # the root's own readme keeps its name


# -- navigation files ---------------------------------------------------------------------------
def test_mkdocs_nav_titles_with_custom_tags_nested_sections_and_docs_dir():
    titles = mkdocs_titles(MKDOCS_YML, "pydantic")
    assert titles == {
        "pydantic/docs/index.md": "Welcome to Pydantic",
        "pydantic/docs/install.md": "Installation",
        "pydantic/docs/concepts/strict_mode.md": "Strict Mode",
    }  # a bare path (no title) and an external link give none
    assert mkdocs_titles("docs_dir: site-src\nnav:\n  - Home: index.md\n") == {"site-src/index.md": "Home"}


def test_summary_md_link_texts_title_the_pages_they_link():
    titles = summary_titles(SUMMARY_MD, "cargo")
    assert titles["cargo/index.md"] == "Introduction"
    assert titles["cargo/getting-started/installation.md"] == "Installation"
    assert titles["cargo/commands/cargo-build.md"] == "cargo build"  # code span as plain text
    assert not any(p.startswith("http") or "cargo-home" in p for p in titles)


def test_summary_md_entries_commented_out_by_a_translation_are_not_navigation():
    text = ("<!--\n- [Rc<T>, the Reference Counted Smart Pointer](ch15-04-rc.md)\n-->\n"
            "- [`Rc<T>`は、参照カウント方式のスマートポインタ](ch15-04-rc.md)\n")
    assert summary_titles(text, "src") == {"src/ch15-04-rc.md": "Rc<T>は、参照カウント方式のスマートポインタ"}


def test_category_label_titles_the_folders_index_page():
    docs = {"docs/tutorial/index.md", "docs/tutorial/first-steps.md"}
    label = '{"label": "Tutorial - Basics", "position": 2, "link": {"type": "generated-index"}}'
    assert category_titles(label, "docs/tutorial", docs) == {"docs/tutorial/index.md": "Tutorial - Basics"}
    assert category_titles('{"position": 2}', "docs/tutorial", docs) == {}


def test_navigation_titles_found_at_or_above_the_documents_folders(tmp_path):
    write(tmp_path, {
        "site/mkdocs.yml": MKDOCS_YML,
        "site/docs/concepts/strict_mode.md": STRICT_MODE_MD,
        "book/SUMMARY.md": SUMMARY_MD,
        "book/commands/cargo-build.md": "Build a package.\n",
        "web/docs/tutorial/_category_.json": '{"label": "Tutorial"}',
        "web/docs/tutorial/index.md": "Start here.\n",
        "broken/mkdocs.yml": "nav: [unclosed\n",
        "broken/docs/a.md": "x\n",
    })
    docs = ["site/docs/concepts/strict_mode.md", "book/commands/cargo-build.md", "web/docs/tutorial/index.md",
            "broken/docs/a.md"]
    assert navigation_titles(tmp_path, docs) == {
        "site/docs/concepts/strict_mode.md": "Strict Mode",
        "book/commands/cargo-build.md": "cargo build",
        "web/docs/tutorial/index.md": "Tutorial",
    }  # a navigation file that does not parse is skipped


# -- through the engine: titles shown, re-titled on a nav change, found by name ----------------
def titles(engine) -> dict[str, str]:
    return {d.path: d.title for d in engine.list_documents().documents}


def test_an_edited_navigation_file_re_titles_its_pages_on_the_next_run(tmp_path, make_engine):
    root = tmp_path / "site"
    write(root, {"mkdocs.yml": MKDOCS_YML, "docs/concepts/strict_mode.md": STRICT_MODE_MD,
                 "docs/concepts/fields.md": "## The annotated pattern\n\nText.\n"})
    engine = make_engine(root, embedder="none")
    engine.index()
    assert titles(engine) == {"docs/concepts/strict_mode.md": "Strict Mode", "docs/concepts/fields.md": "Fields"}
    time.sleep(0.01)
    (root / "mkdocs.yml").write_text(MKDOCS_YML.replace("Strict Mode: concepts", "Strictness: concepts"))
    report = engine.index()
    assert titles(engine)["docs/concepts/strict_mode.md"] == "Strictness"
    assert report.updated == 1  # only the page whose navigation title changed was parsed again
    (root / "mkdocs.yml").unlink()
    engine.index()
    assert titles(engine)["docs/concepts/strict_mode.md"] == "Strict mode"  # back to its file name


def test_the_page_a_query_names_comes_before_subsections_that_merely_contain_its_words(tmp_path, make_engine):
    root = tmp_path / "site"
    types = "# Standard Library Types\n\n" + "".join(
        f"## {t}\n\nValues of {t}.\n\n### Strictness\n\nIn strict mode only {t} instances are accepted; "
        "strict mode refuses strings. Strict mode is strict.\n\n" for t in ("Booleans", "Integers", "Strings", "Bytes"))
    write(root, {"mkdocs.yml": MKDOCS_YML, "docs/concepts/strict_mode.md": STRICT_MODE_MD,
                 "docs/api/standard_library_types.md": types})
    engine = make_engine(root, embedder="none")
    engine.index()
    for query in ("strict mode", "the page about strict mode"):
        first = engine.search(SearchRequest(query, top_k=5)).results[0]
        assert (first.file_path, first.heading_path) == ("docs/concepts/strict_mode.md", "(preamble)"), query


def test_a_page_refreshed_between_runs_keeps_its_navigation_title(tmp_path, make_engine):
    from markdown_memory.models import Freshness

    root = tmp_path / "site"
    write(root, {"mkdocs.yml": MKDOCS_YML, "docs/concepts/strict_mode.md": STRICT_MODE_MD})
    engine = make_engine(root, embedder="none")
    engine.index()
    time.sleep(0.01)
    (root / "docs/concepts/strict_mode.md").write_text(STRICT_MODE_MD + "\n## Lax mode\n\nThe default.\n")
    answer = engine.search(SearchRequest("lax mode default"), freshness=Freshness.REFRESH)
    assert answer.results[0].heading_path == "Lax mode"  # the edit was picked up by the refresh
    assert titles(engine)["docs/concepts/strict_mode.md"] == "Strict Mode"


def test_a_flag_names_an_option_not_a_page(tmp_path, make_engine):
    from markdown_memory.search.pages import named_pages
    from markdown_memory.search.query import analyse
    from markdown_memory.search.tuning import TUNING

    root = tmp_path / "cli"
    write(root, {"pull.md": "# docker pull\n\nDownload an image from a registry.\n",
                 "run.md": "# docker run\n\nCreate and run a container.\n\n## Options\n\n"
                           "`--pull`: pull the image before running (always, missing, never).\n"})
    engine = make_engine(root, embedder="none")
    engine.index()

    def named(query: str) -> list[str]:
        leads = [p.section_id for p in named_pages(engine.store, analyse(query), None, TUNING)]
        return [engine.store.section_rows(leads)[sid]["file_path"] for sid in leads]

    assert named("what does --pull do on docker run") == ["run.md"]
    assert named("docker pull") == ["pull.md"]
