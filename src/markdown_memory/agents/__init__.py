"""Wiring markdown-memory into coding agents (``markdown-memory setup claude-code|codex``).

:mod:`.plan` decides what to change (the MCP server registration at user scope, the prompt
hook, the agent rules block) as a list of :class:`~.files.Change`; :mod:`.claude` and
:mod:`.codex` know each agent's files; :mod:`.edits` edits their JSON and TOML without losing
other content; :mod:`.rules` holds the rules block. Nothing here runs the agents' own CLIs:
the config files are edited directly (the hook has no CLI in either agent, and one code path
gives an exact plan, idempotence and an exact undo); the tests check the real CLIs read them.
"""

#: the agents ``setup`` knows (the command's first argument)
AGENTS = ("claude-code", "codex")
