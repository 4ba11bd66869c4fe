"""Question intent (search/intent.py): "how do I fix X" should land on X's remedy section
(Mitigation, Solution, ...), "what happens when X fires" on its Impact section, "how do I
investigate X" on its Diagnosis section, not on whichever section of the page repeats the name
most; and an intent never pulls in a section of an unrelated page."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import indexed_engine, top
from markdown_memory.search.intent import ROLES, asked_roles, plays_role

REMEDY = next(role for role in ROLES if role.name == "remedy")


def asks_for_remedy(query: str) -> bool:
    return bool(REMEDY.asks.search(query))


def remedy_heading(base_path: str) -> bool:
    return plays_role(REMEDY, base_path)

ALERTS = {
    "QueueBacklogGrowing": ("the message queue backlog grows faster than consumers drain it",
                            "scale the consumer deployment and check for poison messages"),
    "DiskPressureHigh": ("a node's root disk is above 90% full and kubelet evicts pods",
                         "delete old images with crictl rmi --prune and expand the volume"),
    "CertExpiringSoon": ("a TLS certificate served by the ingress expires within 7 days",
                         "renew it through cert-manager or replace the secret by hand"),
    "ReplicaLagHigh": ("the database replica is more than 30 seconds behind the primary",
                       "check replication slots and network throughput between the hosts"),
}


def _runbook(name: str, meaning: str, remedy: str) -> str:
    return (f"# {name}\n\n## Meaning\n\n{name} fires when {meaning}. {name} is a warning alert.\n\n"
            f"## Impact\n\nWhile {name} is firing, requests slow down. {name} may page on-call.\n\n"
            f"## Diagnosis\n\nLook at the {name} dashboard and the logs of the affected service.\n\n"
            f"## Mitigation\n\nTo bring it back to normal, {remedy}.\n")


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    root = tmp_path_factory.mktemp("intent") / "docs"
    (root / "runbooks").mkdir(parents=True)
    for name, (meaning, remedy) in ALERTS.items():
        (root / "runbooks" / f"{name}.md").write_text(_runbook(name, meaning, remedy))
    # another page whose "Troubleshooting" section shares words with the FAQ question below
    (root / "storage.md").write_text(
        "# Storage driver\n\n## Setup\n\nMount the volume.\n\n## Troubleshooting\n\n"
        "If a config notice appears, get rid of stale mounts and remount the config volume.\n")
    (root / "faq.md").write_text(
        "# FAQ\n\n## How can I get rid of the \"config file not found\" notice?\n\n"
        "Create an empty config file with `tool config touch`; the notice goes away.\n\n"
        "## Which platforms are supported?\n\nLinux, macOS and Windows.\n")
    return root


@pytest.fixture(scope="module", params=["none", "minilm"])
def engine(request, roots):
    minilm = request.getfixturevalue("minilm") if request.param == "minilm" else None
    eng = indexed_engine(roots, request.param, minilm)
    yield eng
    eng.close()


@pytest.mark.parametrize("name", sorted(ALERTS))
@pytest.mark.parametrize("form", ["How do I fix {}?", "{} is firing, what should I do?", "how to resolve the {} alert"])
def test_fix_questions_land_on_the_remedy_section(engine, name, form):
    assert top(engine.search(form.format(name))) == (f"runbooks/{name}.md", f"{name} > Mitigation")


@pytest.mark.parametrize("name", sorted(ALERTS))
@pytest.mark.parametrize("form, section", [
    ("What happens when {} fires?", "Impact"),
    ("how bad is {} for users", "Impact"),
    ("How do I investigate {}?", "Diagnosis"),
    ("how to debug {}", "Diagnosis"),
    ("What does {} mean?", "Meaning"),
])
def test_other_roles_land_on_their_section(engine, name, form, section):
    assert top(engine.search(form.format(name))) == (f"runbooks/{name}.md", f"{name} > {section}")


def test_the_intent_never_brings_in_a_remedy_section_of_another_page(engine):
    answer = engine.search('NOTICE: config file "not found" - how do I get rid of it?')
    assert top(answer) == ("faq.md", 'FAQ > How can I get rid of the "config file not found" notice?')


def test_remedy_wording_and_headings():
    assert asks_for_remedy("How do I fix DiskPressureHigh?") and asks_for_remedy("what should we do about it")
    assert asks_for_remedy("steps to mitigate the outage") and asks_for_remedy("workaround for the crash")
    assert not asks_for_remedy("What does DiskPressureHigh mean?") and not asks_for_remedy("list the fixtures")
    assert remedy_heading("Alert > Mitigation") and remedy_heading("Errors > Solution [2]")
    assert remedy_heading("Runbook > Mitigation > Capacity planning")  # part of a remedy
    assert remedy_heading("Guide > How to fix a stuck upload") and remedy_heading("FAQ > Possible solutions:")
    assert not remedy_heading("Alert > Meaning") and not remedy_heading("Release 2.0 > Fixed bugs")


def test_roles_read_from_english_and_chinese_wording():
    names = lambda q: [r.name for r in asked_roles(q)]  # noqa: E731
    assert names("What happens when the disk fills up?") == ["impact"]
    assert names("etcd 数据库大小超过配额之后会产生什么影响？") == ["impact"]
    assert names("连接失败怎么办？") == ["remedy"]
    assert names("How do I find out why the pod restarts?") == ["diagnosis"]
    assert names("Is the chunk size fixed?") == [] and names("recover a file from versions") == []
    assert names("What is the default value of nearFullRatio?") == []  # a plain question asks for no role
    meaning = next(r for r in ROLES if r.name == "meaning")
    assert plays_role(meaning, "Alert > Meaning") and not plays_role(meaning, "Guide > Overview")
    assert not plays_role(meaning, "git-summary(1) > DESCRIPTION") and not plays_role(meaning, "FAQ > What is a vault?")


def test_a_generic_overview_never_beats_the_section_that_defines_the_thing(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "cli.md").write_text(
        "# Widget CLI\n\n## Overview\n\nThe widget CLI manages widgets. Every flag is described below.\n\n"
        "## Flags\n\n`--dry-run` prints what would change and changes nothing.\n\n"
        "## Exit codes\n\n0 on success, 2 on a usage error.\n")
    eng = indexed_engine(root, "none")
    assert top(eng.search("What does --dry-run mean?")) == ("cli.md", "Widget CLI > Flags")
    eng.close()


def test_ordinary_questions_with_role_words_keep_their_answer(tmp_path):
    """Regressions (tester): 'what does --line mean' picked a man page's DESCRIPTION over its
    OPTIONS, 'is the chunk size fixed' and 'recover a file from versions' were read as asking
    for a fix and picked a Troubleshooting section."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "git-summary.md").write_text(
        "# git-summary(1)\n\n## DESCRIPTION\n\nShows a summary of the repository: age, active days, commits.\n\n"
        "## OPTIONS\n\n--line\n\nSummarize with lines rather than commits.\n\n## EXAMPLES\n\n    $ git summary\n")
    (root / "onedrive.md").write_text(
        "# OneDrive\n\n## Chunk size\n\nUploads use a fixed chunk size of 10 MiB, set with --onedrive-chunk-size.\n\n"
        "## Versions\n\nTo recover a file from an older version, use the version history.\n\n"
        "## Troubleshooting\n\nUnexpected file size or hash after upload: recover by re-uploading the file; "
        "the chunk size is not the cause.\n")
    eng = indexed_engine(root, "none")
    assert top(eng.search("what does the --line option mean in git-summary")) == ("git-summary.md", "git-summary(1) > OPTIONS")
    assert top(eng.search("Is the chunk size fixed for onedrive uploads?")) == ("onedrive.md", "OneDrive > Chunk size")
    assert top(eng.search("recover a file from onedrive versions")) == ("onedrive.md", "OneDrive > Versions")
    eng.close()
