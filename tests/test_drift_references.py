"""Properties of the reference extractor (``drift.references``): every reference points at a
line of its section that holds the name; placeholders never become references."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from markdown_memory.drift.references import is_placeholder, section_references

NAMES = st.sampled_from(["--dry-run", "--max-size=10", "APP_TIMEOUT", "src/app/config.py", "parse_args()",
                         "Client.stream", "server.max_connections", "app run --port 80", "<name>", "YOUR_TOKEN",
                         "foo.bar()", "-n", "timeout", "my_app.py"])
PROSE = st.sampled_from(["Set the environment variable", "Run", "then", "and call", "see", ""])


@st.composite
def sections(draw: st.DrawFn) -> str:
    lines = ["## Section", ""]
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["span", "block", "blank"]))
        if kind == "span":
            lines.append(f"{draw(PROSE)} `{draw(NAMES)}` {draw(PROSE)}".strip())
        elif kind == "block":
            lines += ["```console", f"$ APP_MODE=1 shipit {draw(NAMES)}", "output line", "```"]
        else:
            lines.append("")
    return "\n".join(lines)


@settings(max_examples=150, deadline=None)
@given(text=sections(), start=st.integers(1, 5000))
def test_every_reference_is_on_a_line_of_its_section_that_names_it(text: str, start: int) -> None:
    lines = text.split("\n")
    for ref in section_references(text, start):
        assert start <= ref.line < start + len(lines)
        written = ref.name.removesuffix("()").lstrip("-")
        assert written.split("=")[0] in lines[ref.line - start]
        assert not is_placeholder(ref.name)


def test_shapes() -> None:
    text = ("## S\n\nThe environment variable `APP_TIMEOUT`, `--dry-run`, `src/app/config.py`, `parse_args()`,\n"
            "`Client.stream`, `-n`, `timeout`, `app.py`, `<name>`, `YOUR_TOKEN`, `https://x.org/a/b`.\n")
    got = {(r.name, r.kind) for r in section_references(text, 1)}
    assert got == {("APP_TIMEOUT", "env"), ("--dry-run", "flag"), ("src/app/config.py", "path"),
                   ("parse_args()", "name"), ("Client.stream", "name")}
