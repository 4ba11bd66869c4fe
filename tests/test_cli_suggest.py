"""A mistyped command, agent or preset gets "did you mean" (issue 37; argparse's own
``suggest_on_error`` is Python 3.14+): a table over every command and value list, each
mistyped the ways people mistype (a dropped, doubled, swapped or wrong letter, wrong case)."""

from __future__ import annotations

import pytest

from markdown_memory.cli import COMMANDS, build_parser
from markdown_memory.config import EMBEDDER_CHOICES


def typos(word: str) -> list[str]:
    """Dropped, doubled, swapped and replaced letters of ``word`` (words of 4+ letters; a
    shorter one gets a doubled last letter), and its upper case."""
    if len(word) < 4:  # a short name (``ui``): one letter more, or upper case
        out = [word + word[-1], word.upper()]
    else:
        out = [word[:-1], word + word[-1], word[:1] + word[2] + word[1] + word[3:], word[:-1] + "x", word.upper()]
    return [t for t in out if t != word]


def command_names() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")  # noqa: SLF001 - the registered names
    return sorted(sub.choices)


@pytest.mark.parametrize("command", command_names())
def test_a_mistyped_command_is_suggested(cli_main, command):
    assert len(COMMANDS) == len(command_names())
    for typo in typos(command):
        if typo in command_names():
            continue
        res = cli_main(typo)
        assert res.returncode == 2
        assert f"did you mean '{command}'?" in res.stderr, (typo, res.stderr)


@pytest.mark.parametrize(("args", "wanted"), [
    (("setup", "claude-cod"), "claude-code"), (("setup", "codx"), "codex"),
    *[(("--embedder", typo, "status"), preset) for preset in EMBEDDER_CHOICES if len(preset) > 4
      for typo in typos(preset)[:2]],
])
def test_a_mistyped_value_is_suggested(cli_main, args, wanted):
    res = cli_main(*args)
    assert res.returncode == 2 and f"did you mean '{wanted}'?" in res.stderr, res.stderr


def test_nothing_close_gets_no_guess(cli_main):
    res = cli_main("qqqqqq")
    assert res.returncode == 2 and "invalid choice" in res.stderr and "did you mean" not in res.stderr


@pytest.mark.parametrize("line", [["search", "foo", "--docs-dir", "d", "--bogus"], ["read", "a.md", "H", "--bogus"],
                                  ["status", "--bogus"], ["drift", "--bogus"], ["outline", "a.md", "stray"]])
def test_a_stray_option_points_to_the_help_of_its_command(line):
    """Trial finding 8: `search foo --bogus` pointed to `markdown-memory --help`, which does not
    list search's options."""
    from markdown_memory.errors import UsageError

    with pytest.raises(UsageError) as err:
        build_parser().parse_args(line)
    assert "unrecognized arguments" in str(err.value)
    assert f"`markdown-memory {line[0]} --help` shows the usage" in str(err.value)


def test_a_stray_option_before_any_command_points_to_the_programs_help():
    from markdown_memory.errors import UsageError

    with pytest.raises(UsageError, match="`markdown-memory --help` shows the usage"):
        build_parser().parse_args(["--bogus"])
