"""``markdown-memory setup``'s edits of the agents' files, through the CLI with a temporary HOME:
other content is kept, a second run changes nothing, ``--remove`` restores the files as they
were, a broken file stops setup before anything is written. (The real agent CLIs reading the
result: tests/test_agent_setup.py.)"""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path

import pytest

from markdown_memory.agents.plan import program_argv
from markdown_memory.agents.rules import END, RULES, START

CLAUDE_JSON = {"numStartups": 3, "projects": {"/x": {"allowedTools": []}},
               "mcpServers": {"other": {"type": "stdio", "command": "other-server", "args": [], "env": {"K": "v"}}}}
SETTINGS = {"model": "opus", "hooks": {
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo hi"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}
CONFIG_TOML = """# my codex config
model = "o3"

[mcp_servers.other]
command = "other-server" # inline comment
args = ["--x"]

[features]
hooks = true
"""


@pytest.fixture
def home(tmp_path: Path) -> dict:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".claude").mkdir(parents=True)
    project.mkdir()
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": None, "CODEX_HOME": None, "MARKDOWN_MEMORY_EMBEDDER": None}
    return {"home": home, "project": project, "env": env}


def _json(data: dict) -> str:
    return json.dumps(data, indent=2) + "\n"


def _run(cli_main, h: dict, *args: str):
    return cli_main("setup", *args, env=h["env"], cwd=h["project"])


def test_claude_code_setup_keeps_other_content_is_idempotent_and_removes_exactly(cli_main, home):
    config, settings = home["home"] / ".claude.json", home["home"] / ".claude" / "settings.json"
    config.write_text(_json(CLAUDE_JSON), encoding="utf-8")
    settings.write_text(_json(SETTINGS), encoding="utf-8")
    (home["project"] / "CLAUDE.md").write_text("# Project\n\nOur own notes.\n", encoding="utf-8")
    before = {p: p.read_text(encoding="utf-8") for p in (config, settings, home["project"] / "CLAUDE.md")}

    plan = _run(cli_main, home, "claude-code", "--embedder", "minilm", "--hook", "--rules")
    assert plan.returncode == 0 and "--yes" in plan.stdout
    assert {p: p.read_text(encoding="utf-8") for p in before} == before  # only the plan

    done = _run(cli_main, home, "claude-code", "--embedder", "minilm", "--hook", "--rules", "--yes")
    assert done.returncode == 0 and "changed 3 files" in done.stdout, done.stdout + done.stderr
    data = json.loads(config.read_text(encoding="utf-8"))
    program = program_argv()
    assert data["mcpServers"]["markdown-memory"] == {"type": "stdio", "command": program[0],
                                                     "args": [*program[1:], "--embedder", "minilm"], "env": {}}
    assert {k: v for k, v in data.items() if k != "mcpServers"} == {k: v for k, v in CLAUDE_JSON.items()
                                                                    if k != "mcpServers"}
    assert data["mcpServers"]["other"] == CLAUDE_JSON["mcpServers"]["other"]
    hooks = json.loads(settings.read_text(encoding="utf-8"))
    assert hooks["model"] == "opus" and hooks["hooks"]["Stop"] == SETTINGS["hooks"]["Stop"]
    groups = hooks["hooks"]["UserPromptSubmit"]
    assert groups[0] == SETTINGS["hooks"]["UserPromptSubmit"][0]
    assert groups[1]["hooks"] == [{"type": "command", "command": shlex.join([*program, "--embedder", "minilm", "hook"]),
                                   "timeout": 10}]
    rules = (home["project"] / "CLAUDE.md").read_text(encoding="utf-8")
    assert rules.startswith("# Project\n\nOur own notes.\n\n" + START) and rules.endswith(END + "\n")

    again = _run(cli_main, home, "claude-code", "--embedder", "minilm", "--hook", "--rules", "--yes")
    assert again.stdout.startswith("nothing to change"), again.stdout

    # another embedder: the server and the hook are updated in place, not added twice
    other = _run(cli_main, home, "claude-code", "--embedder", "none", "--hook", "--yes")
    assert "update:" in other.stdout
    groups = json.loads(settings.read_text(encoding="utf-8"))["hooks"]["UserPromptSubmit"]
    assert [g["hooks"][0]["command"].split()[-2:] for g in groups] == [["echo", "hi"], ["none", "hook"]]

    removed = _run(cli_main, home, "claude-code", "--remove", "--rules", "--yes")
    assert removed.returncode == 0 and "changed 3 files" in removed.stdout
    assert {p: p.read_text(encoding="utf-8") for p in before} == before
    assert _run(cli_main, home, "claude-code", "--remove", "--rules").stdout.startswith("nothing to change")


def test_claude_config_dir_is_where_claude_code_keeps_its_files(cli_main, home, tmp_path):
    custom = tmp_path / "claude-config"
    home["env"]["CLAUDE_CONFIG_DIR"] = str(custom)
    assert _run(cli_main, home, "claude-code", "--embedder", "none", "--hook", "--yes").returncode == 0
    assert "markdown-memory" in json.loads((custom / ".claude.json").read_text(encoding="utf-8"))["mcpServers"]
    assert (custom / "settings.json").is_file() and not (home["home"] / ".claude.json").exists()


def test_codex_setup_edits_only_its_table_and_removes_it_byte_for_byte(cli_main, home):
    codex = home["home"] / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(CONFIG_TOML, encoding="utf-8")
    docs = home["project"]
    done = _run(cli_main, home, "codex", "--embedder", "none", "--docs-dir", str(docs), "--hook", "--yes")
    assert done.returncode == 0, done.stderr
    text = (codex / "config.toml").read_text(encoding="utf-8")
    assert text.startswith(CONFIG_TOML.rstrip("\n"))  # comments and layout before it kept
    parsed = tomllib.loads(text)
    program = program_argv()
    assert parsed["mcp_servers"]["markdown-memory"] == {
        "command": program[0], "args": [*program[1:], "--embedder", "none", "--docs-dir", str(docs)]}
    assert parsed["mcp_servers"]["other"] == {"command": "other-server", "args": ["--x"]}
    assert parsed["model"] == "o3" and parsed["features"] == {"hooks": True}
    hook = json.loads((codex / "hooks.json").read_text(encoding="utf-8"))["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    assert hook == {"type": "command", "timeoutSec": 10,
                    "command": shlex.join([*program, "--embedder", "none", "hook", "--docs-dir", str(docs)])}
    again = _run(cli_main, home, "codex", "--embedder", "none", "--docs-dir", str(docs), "--hook", "--yes")
    assert again.stdout.startswith("nothing to change"), again.stdout

    # a later run with another embedder replaces the table where it is
    (codex / "config.toml").write_text(text + "\n[profiles.fast]\nmodel = \"o4-mini\"\n", encoding="utf-8")
    assert _run(cli_main, home, "codex", "--embedder", "minilm", "--yes").returncode == 0
    parsed = tomllib.loads((codex / "config.toml").read_text(encoding="utf-8"))
    assert parsed["mcp_servers"]["markdown-memory"]["args"][-2:] == ["--embedder", "minilm"]
    assert parsed["profiles"] == {"fast": {"model": "o4-mini"}}

    (codex / "config.toml").write_text(text, encoding="utf-8")
    assert _run(cli_main, home, "codex", "--remove", "--yes").returncode == 0
    assert (codex / "config.toml").read_text(encoding="utf-8") == CONFIG_TOML
    assert not (codex / "hooks.json").exists()


@pytest.mark.parametrize("name,content", [
    (".claude.json", '{"mcpServers": {"other": '),
    (".claude.json", "[1, 2]"),
    (".claude/settings.json", '{"hooks": []}'),
    (".claude/settings.json", "{oops}"),
])
def test_a_broken_claude_file_stops_setup_before_anything_is_written(cli_main, home, name, content):
    (home["home"] / name).write_text(content, encoding="utf-8")
    res = _run(cli_main, home, "claude-code", "--embedder", "none", "--hook", "--rules", "--yes")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert str(home["home"] / name) in res.stderr and "nothing was changed" in res.stderr, res.stderr
    assert (home["home"] / name).read_text(encoding="utf-8") == content
    written = {p.relative_to(home["home"]).as_posix() for p in home["home"].rglob("*") if p.is_file()}
    assert written == {name} and not (home["project"] / "CLAUDE.md").exists()


@pytest.mark.parametrize("content,why", [
    ('model = "o3"\n[mcp_servers\n', "not valid TOML"),
    ('mcp_servers = { markdown-memory = { command = "x", args = [] } }\n', "form setup does not edit"),
    ('[mcp_servers]\nmarkdown-memory.command = "x"\n', "form setup does not edit"),
])
def test_a_codex_config_setup_cannot_edit_safely_is_left_alone(cli_main, home, content, why):
    codex = home["home"] / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(content, encoding="utf-8")
    res = _run(cli_main, home, "codex", "--embedder", "none", "--hook", "--yes")
    assert res.returncode == 2 and why in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert (codex / "config.toml").read_text(encoding="utf-8") == content
    assert not (codex / "hooks.json").exists()


def test_rules_block_is_replaced_in_place_and_broken_markers_are_refused(cli_main, home):
    agents = home["project"] / "AGENTS.md"
    agents.write_text(f"# Intro\n\n{START}\nold rules\n{END}\n\n## After\n\nkept\n", encoding="utf-8")
    assert _run(cli_main, home, "codex", "--embedder", "none", "--rules", "--yes").returncode == 0
    assert agents.read_text(encoding="utf-8") == f"# Intro\n\n{RULES}\n\n## After\n\nkept\n"
    assert _run(cli_main, home, "codex", "--remove", "--rules", "--yes").returncode == 0
    assert agents.read_text(encoding="utf-8") == "# Intro\n\n## After\n\nkept\n"
    agents.write_text(f"# Intro\n\n{END}\n{START}\n", encoding="utf-8")
    res = _run(cli_main, home, "codex", "--embedder", "none", "--rules", "--yes")
    assert res.returncode == 2 and "markers" in res.stderr
    assert agents.read_text(encoding="utf-8") == f"# Intro\n\n{END}\n{START}\n"


def test_a_missing_docs_folder_is_refused(cli_main, home, tmp_path):
    res = _run(cli_main, home, "claude-code", "--docs-dir", str(tmp_path / "nope"), "--yes")
    assert res.returncode == 2 and "--docs-dir" in res.stderr
    assert not (home["home"] / ".claude.json").exists()


@pytest.mark.parametrize(("agent", "relative", "text"), [
    ("claude-code", ".claude.json", '{"mcpServers": ["keep-me"], "x": 1}\n'),
    ("codex", ".codex/config.toml", 'model = "o3"\nmcp_servers = "x"\n'),
])
def test_a_server_list_of_another_shape_stops_setup_and_loses_nothing(cli_main, home, agent, relative, text):
    """Trial findings: `"mcpServers": [...]` was silently replaced by an object (its content
    lost) and `mcp_servers = "x"` crashed setup codex with a traceback."""
    path = home["home"] / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    done = _run(cli_main, home, agent, "--embedder", "minilm", "--yes")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "nothing was changed" in done.stderr and ("mcpServers" in done.stderr or "mcp_servers" in done.stderr)
    assert path.read_text(encoding="utf-8") == text


def test_updating_a_registration_keeps_the_users_own_keys(cli_main, home):
    """Trial finding: re-running setup over an entry with the user's env / timeout dropped them."""
    config = home["home"] / ".claude.json"
    config.write_text(_json({"mcpServers": {"markdown-memory": {
        "type": "stdio", "command": "/old/markdown-memory", "args": [], "env": {"TOKEN": "abc"}}}}), encoding="utf-8")
    codex = home["home"] / ".codex" / "config.toml"
    codex.parent.mkdir()
    codex.write_text('[mcp_servers.markdown-memory]\ncommand = "/old/markdown-memory"\nargs = []\n'
                     'startup_timeout_sec = 30\n\n[mcp_servers.markdown-memory.env]\nA = "1"\n', encoding="utf-8")
    for agent in ("claude-code", "codex"):
        assert _run(cli_main, home, agent, "--embedder", "minilm", "--yes").returncode == 0
    entry = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]["markdown-memory"]
    assert entry["env"]["TOKEN"] == "abc" and entry["command"] != "/old/markdown-memory"
    table = tomllib.loads(codex.read_text(encoding="utf-8"))["mcp_servers"]["markdown-memory"]
    assert table["startup_timeout_sec"] == 30 and table["env"] == {"A": "1"}
    assert table["command"] != "/old/markdown-memory" and "--embedder" in table["args"]
    for agent in ("claude-code", "codex"):  # idempotent: a second run changes nothing
        again = _run(cli_main, home, agent, "--embedder", "minilm")
        assert "nothing to change" in again.stdout, again.stdout


def test_a_symlinked_config_stays_a_link_and_its_target_is_updated(cli_main, home, tmp_path):
    """Trial finding: a dotfiles-style symlinked ~/.claude.json became a plain file."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "claude.json"
    target.write_text(_json({"numStartups": 1}), encoding="utf-8")
    link = home["home"] / ".claude.json"
    link.symlink_to(target)
    assert _run(cli_main, home, "claude-code", "--embedder", "minilm", "--yes").returncode == 0
    assert link.is_symlink() and link.resolve() == target.resolve()
    data = json.loads(target.read_text(encoding="utf-8"))
    assert data["numStartups"] == 1 and "markdown-memory" in data["mcpServers"]
