"""Ownership (docs/drift.md#ownership): a flag or variable is checked only when the docs give it
to the repository's own command. Table tests for the shapes of shell lines and sentences, and a
property test over shell lines put together from own and foreign commands."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from markdown_memory.drift.owners import Owners
from markdown_memory.drift.references import section_references
from markdown_memory.drift.shell import commands

OWN = Owners(frozenset({"shipit"}), frozenset({"shipit"}))


def owned(text: str, context: str = "docs/guide.md Guide") -> dict[str, tuple[str, str]]:
    """``{name: (rule, command)}`` of the flags and variables judged the repository's."""
    refs = section_references("## S\n\n" + text + "\n", 1, OWN, context)
    return {r.name: (r.rule, r.command) for r in refs if r.kind in ("flag", "env")}


@pytest.mark.parametrize(("text", "expected"), [
    # a pipe, &&, ;, $(...), <(...) and a quoted argument start a new command
    ("```sh\nshipit --a | grep --b\n```", {"--a": ("shell", "shipit")}),
    ("```sh\nmake build && shipit --y; other --z\n```", {"--y": ("shell", "shipit")}),
    ("```sh\nshipit --a $(other --b)\n```", {"--a": ("shell", "shipit")}),
    ("```sh\nshipit <(jq --sort-keys < a.json) <(jq --sort-keys < b.json)\n```", {}),
    ("```sh\nfzf --preview 'shipit --inner {}'\n```", {"--inner": ("shell", "shipit")}),
    ("```sh\nshipit --hook 'other --q'\n```", {"--hook": ("shell", "shipit")}),
    # a value assigned to a variable is a value, not a command
    ("```sh\nexport FZF_DEFAULT_COMMAND='shipit --list-files'\n```", {}),
    # wrappers are looked through
    ("```sh\nsudo SHIPIT_MODE=1 npx shipit --v\n```", {"--v": ("shell", "shipit"), "SHIPIT_MODE": ("shell", "shipit")}),
    ("```sh\npython -m shipit --m\n```", {"--m": ("shell", "shipit")}),
    # a flag alone belongs to the nearest command named in its sentence, before or after it
    ("Pass `--later` to `shipit run`.", {"--later": ("sentence", "shipit")}),
    ("Pass `--x` to `gh pr create`, unlike `shipit`'s options.", {}),
    ("Run `shipit deploy` with `--fast`, or `other go` with `--slow`.", {"--fast": ("sentence", "shipit")}),
    ("Git's `--color-moved` makes moved lines stand out.", {}),
    # man pages name commands; they are not function calls
    ("The `--pager` option of less (see `less(1)`).", {}),
    ("See `shipit(1)` for `--verbose`.", {"--verbose": ("sentence", "shipit")}),
    # placeholders are never names
    ("Run `shipit --FLAG` or `shipit <FLAG>`; see `--options`.", {}),
    # HTML code in Markdown is code
    ("Use <code>shipit --html-flag</code> here.", {"--html-flag": ("shell", "shipit")}),
    # an option listing under a Usage: line is that program's
    ("```text\nUsage: shipit [OPTIONS]\n\n  -v, --verbose  Talk more\n      --quiet    Talk less\n```",
     {"--verbose": ("usage", "shipit"), "--quiet": ("usage", "shipit")}),
    # a variable whose first part is the repository's name is its own
    ("The environment variable `SHIPIT_HOME` moves the data.", {"SHIPIT_HOME": ("prefix", "shipit")}),
])
def test_which_names_are_the_repositorys(text: str, expected: dict[str, tuple[str, str]]) -> None:
    assert owned(text) == expected


def test_a_flag_with_no_command_named_falls_to_the_document() -> None:
    assert owned("Use `--turbo` for speed.") == {"--turbo": ("document", "shipit")}
    assert owned("Run `git log` first.\n\nUse `--turbo` for speed.") == {}  # the section named git


FOREIGN = ["grep", "git log", "jq", "docker run", "gh pr create", "cargo build"]
SEPARATORS = [" | ", " && ", " ; ", " || "]


@st.composite
def shell_lines(draw: st.DrawFn) -> tuple[str, set[str], set[str]]:
    """A line of commands joined by separators; the own flags and the foreign ones."""
    parts, own, foreign = [], set(), set()
    for i in range(draw(st.integers(1, 4))):
        is_own = draw(st.booleans())
        flag = f"--{'own' if is_own else 'other'}-{i}"
        (own if is_own else foreign).add(flag)
        parts.append(f"shipit {flag}" if is_own else f"{draw(st.sampled_from(FOREIGN))} {flag}")
        if draw(st.booleans()):  # a quoted argument with a foreign command inside
            nested = f"--quoted-{i}"
            foreign.add(nested)
            parts[-1] += f" 'grep {nested}'"
    line = parts[0]
    for part in parts[1:]:
        line += draw(st.sampled_from(SEPARATORS)) + part
    return line, own, foreign


@settings(max_examples=150, deadline=None)
@given(case=shell_lines())
def test_every_own_flag_and_no_foreign_one(case: tuple[str, set[str], set[str]]) -> None:
    line, own, foreign = case
    found = owned(f"```sh\n{line}\n```")
    assert set(found) == own
    assert all(rule == ("shell", "shipit") for rule in found.values())
    assert not foreign & set(found)


def test_commands_split_at_separators_and_quotes() -> None:
    words = [(c.word, c.args) for c in commands("A=1 shipit --a 'x --q' | grep -v b && go run . --c")]
    assert words == [("shipit", ["--a"]), ("grep", ["-v", "b"]), ("", ["--c"]), ("x", ["--q"])]


def test_a_sentence_ends_at_a_period_after_a_code_span() -> None:
    """"... in `a.toml`. This works like `yarn upgrade --latest`": the second sentence's command
    does not claim the first sentence's flag."""
    text = "Give `--unconstrained` to ignore the pins in `a.toml`.\nThis works like `yarn upgrade --latest`."
    assert owned(text) == {"--unconstrained": ("document", "shipit")}


@pytest.mark.parametrize(("path", "skipped"), [
    ("CHANGELOG.md", True), ("news/2547.feature.md", True), ("changelog.d/12.bugfix.md", True),
    ("vendor/github.com/a/b/README.md", True), ("node_modules/x/README.md", True),
    ("docs/guide.md", False), ("docs/usage/dependency.md", False),
])
def test_history_and_vendored_docs_are_not_checked(path: str, skipped: bool) -> None:
    from markdown_memory.drift.check import is_skipped

    assert is_skipped(path) is skipped


def test_an_options_table_lists_the_documents_options() -> None:
    """A GFM table whose rows start with options: each cell is its own sentence, and the first
    cell's options are the subject's (rule listing), the description's are not read as its."""
    table = ("| Option | Description |\n|---|---|\n| `-p` or `--port` | Port to use, e.g. `gh api --paginate` |\n"
             "| `--base-dir` | Base path |\n")
    found = owned(table)
    assert found == {"--port": ("listing", "shipit"), "--base-dir": ("listing", "shipit")}


@pytest.mark.parametrize(("text", "expected"), [
    # a definition-list term of a man page in Markdown (pandoc): the document subject's options
    ("`-a`, `--all`\n: Show hidden files.", {"--all": ("listing", "shipit")}),
    ("`--inode` [on Linux only]\n: Show inode numbers.", {"--inode": ("listing", "shipit")}),
    # a labelled line of a settings reference
    ("- Format: `bool`\n- CLI flags: `-T`, `--skip-tasks`\n- Default value: `False`",
     {"--skip-tasks": ("listing", "shipit")}),
    # the definition describes the option; its words (a dependency, a tool) do not claim it
    ("`-I`, `--ignore-glob=GLOBS`\n: Glob patterns of files to ignore, as `git diff` reads them.",
     {"--ignore-glob": ("listing", "shipit")}),
    # a lone flag in prose is no listing: the document rule (kept only when vouched elsewhere)
    ("Use `--word-diff` for this.", {"--word-diff": ("document", "shipit")}),
    ("Options: `--fast` and more.", {"--fast": ("document", "shipit")}),
])
def test_an_option_listing_outside_a_table_lists_the_documents_options(text: str,
                                                                      expected: dict[str, tuple[str, str]]) -> None:
    assert owned(text) == expected


def test_a_dependency_named_in_the_sentence_owns_its_variables() -> None:
    """"The download uses huggingface-hub, so `HF_TOKEN` applies": the declared dependency named
    in the sentence is the variable's program, not the repository."""
    owners = Owners(frozenset({"shipit"}), frozenset({"shipit"}), primary="shipit",
                    foreign=frozenset({"huggingface-hub"}))
    text = ("## S\n\n```sh\nshipit fetch\n```\n\nThe download uses huggingface-hub, so `HF_ENDPOINT` (a mirror), "
            "`HF_TOKEN` and proxy variables apply.\n")
    assert [r.name for r in section_references(text, 1, owners, "docs/a.md A") if r.kind == "env"] == []


def test_a_first_cell_of_prose_is_no_options_table() -> None:
    table = "| kind | cost |\n|---|---|\n| git's `--word-diff`, a lone flag | 5 |\n"
    assert owned(table) == {}
