"""Sentences only an agent reads: MCP tool refusals and progress, the docs map resource, and
the prompt hook's text (it lands in the agent's context). Re-exported by ``messages``."""

from __future__ import annotations

import shlex
from pathlib import Path

from ..reader import program
from ..text import short_cause


def invalid_argument(tool: str, name: str, expected: str, got: str) -> str:
    """An MCP tool argument of the wrong JSON type or out of range (``mcp.tools.argument_problem``):
    ``expected`` is e.g. "a whole number from 1 to 20", ``got`` the value as JSON."""
    return f"invalid arguments for {tool}: {name} must be {expected} (got {got})"


def index_in_progress(why: str) -> str:
    """index_directory while a run is going: answered at once, not queued."""
    return f"{why}; it updates the index as it goes, so search now or call index_directory again later"


def tool_progress(phase: str, done: int, total: int) -> str:
    """The ``message`` of an MCP progress notification of index_directory."""
    return f"parsed {done} of {total} files" if phase == "parse" else f"embedded {done} of {total} passages"


MAP_RESOURCE = ("Outline of the docs root: every indexed document with its top headings and token counts "
                "(llms.txt form, about 1,500 tokens); read it to know what the docs cover before searching.")


def map_unavailable(reason: str | None) -> str:
    """The ``docs://map`` resource's text when no map can be built."""
    why = reason or "an internal error (the server's stderr log has details)"
    return f"No docs map: {why}."


# -- prompt hook (markdown-memory hook) -----------------------------------------------------
def hook_lead(root: Path) -> str:
    """The first line of the text the prompt hook adds to a prompt."""
    return (f"markdown-memory found these sections in its index of {root} that may answer this prompt "
            "(cite them by path and heading; read_section gives the rest of a document):")


HOOK_CUT = "[… cut to fit the hook's token budget; read_section gives the whole section]"


def hook_bad_payload(problem: str) -> str:
    """Why the hook ignored its stdin (one line on stderr)."""
    return f"markdown-memory hook: ignored the hook input: {problem}"


def hook_no_index(root: Path, db: Path, *, started: bool) -> str:
    """The hook's stderr line when the docs root has no index yet: ``started``, the hook
    started a background index run (later prompts search what it has indexed); else the
    command that builds it (the embedder it picks is the one a search would use)."""
    if started:
        return (f"markdown-memory hook: no index for {root} yet; started indexing it in the background "
                f"into {db} (later prompts use what is indexed so far)")
    return (f"markdown-memory hook: no index for {root} at {db} yet; "
            f"run `{program()} index {shlex.quote(str(root))}` to build it")


def hook_failed(cause: str) -> str:
    """The hook's stderr line when it answered nothing because of a problem."""
    return f"markdown-memory hook: added nothing: {short_cause(cause)}"


def hook_usage(problem: str) -> str:
    """The hook's stderr line for a bad option of ``markdown-memory hook`` (it still exits 0)."""
    return f"markdown-memory hook: {problem}; the prompt went on without docs (`{program()} hook --help`)"


def hook_ignored(arguments: list[str]) -> str:
    """The hook's stderr line for arguments it does not know and ignored (it still answers)."""
    return (f"markdown-memory hook: ignored unrecognized arguments {' '.join(arguments)!r} "
            f"(`{program()} hook --help` lists the options)")


def hook_budget_clamped(asked: int, used: int, low: int, high: int) -> str:
    """The hook's stderr line for a ``--max-tokens`` out of range (it answers with ``used``)."""
    return f"markdown-memory hook: --max-tokens {asked} is outside {low}-{high}; used {used}"


def hook_stdin(exc: BaseException) -> str:
    """The hook's stderr line when its stdin cannot be read."""
    return f"markdown-memory hook: could not read the hook input on stdin: {exc}"
