"""Front matter with unfilled template placeholders (an Obsidian Templater note template, a
Jinja or Hugo archetype): ``created: {{date}}`` is not valid YAML (``{{`` opens a flow mapping
with an unhashable key), yet the note's other keys, its title and tags among them, must count,
without a warning on every run."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from markdown_memory.markdown.frontmatter import detect_front_matter

PLACEHOLDERS = ["{{date}}", "{{date:YYYY-MM-DD}}", "{{ .Date }}", "<% tp.date.now() %>",
                "<% tp.file.title %>", "{{title}} draft", "{{ page.title | upper }}"]
KEYS = st.from_regex(r"[a-z][a-z_-]{0,10}", fullmatch=True)


@given(keys=st.lists(KEYS, min_size=1, max_size=5, unique=True), data=st.data())
def test_placeholder_values_keep_the_other_keys(keys, data):
    templated = {k: data.draw(st.sampled_from(PLACEHOLDERS)) for k in keys}
    lines = ["---", "title: Daily note", *[f"{k}: {v}" for k, v in templated.items() if k != "title"],
             "tags: [daily, log]", "---", "# Today", "text"]
    fm = detect_front_matter(lines)
    assert fm.warning is None
    assert fm.end_line == len(lines) - 2
    assert fm.title == "Daily note"
    assert fm.metadata["tags"] == ["daily", "log"]
    for key, value in templated.items():
        if key not in ("title", "tags"):
            assert fm.metadata[key] == value


def test_broken_yaml_without_placeholders_still_warns():
    fm = detect_front_matter(["---", "title: [unclosed", "---", "# H"])
    assert fm.end_line == 3 and fm.metadata == {} and fm.warning and "line 2" in fm.warning
