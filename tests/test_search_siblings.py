"""An answer split across sibling subsections comes whole: when a section and two of its few
subsections rank, the other subsections (the remaining alternatives) follow them with their
text (issue 14: rclone's headless set-up question returned two of its three ways)."""

from __future__ import annotations

from pathlib import Path

from markdown_memory.models import SearchRequest

PAGE = """# Remote setup

## Configuring on a remote or headless machine

Some providers need a web browser to authorise. On a headless machine without a browser use
one of the three ways described below.

### Configuring using an SSH tunnel

Forward the authorisation port over SSH from your desktop to the headless machine, then
open the link on the desktop browser to finish the authorisation of the remote.

### Configuring using the authorize command

Run the authorize command on a machine that has a browser, then paste the token it prints
into the configuration prompt on the headless machine.

### Configuring by copying the config file

Configure the remote on your desktop, then copy the configuration file to the same place
on the remote machine; find it with the config file command.

## Unrelated topic

Retries and timeouts for slow networks.
"""


def test_the_remaining_alternatives_follow_with_their_text(tmp_path: Path, make_engine) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "remote_setup.md").write_text(PAGE, encoding="utf-8")
    for i in range(6):  # other pages that speak of set-up, machines and browsers
        (root / f"provider{i}.md").write_text(
            f"# Provider {i}\n\n## Browser sign-in\n\nProvider {i} opens a browser window to sign in when you "
            f"set it up on your machine.\n", encoding="utf-8")
    engine = make_engine(root, "minilm")
    engine.index()
    answer = engine.search(SearchRequest("headless machine without a browser: SSH tunnel or the authorize command?", top_k=4))
    ways = {"Configuring using an SSH tunnel", "Configuring using the authorize command",
            "Configuring by copying the config file"}
    with_text = {h.heading_path.split(" > ")[-1] for h in answer.results if h.content is not None}
    assert ways <= with_text, [(h.heading_path, h.content is not None) for h in answer.results]
