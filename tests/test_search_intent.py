"""Question intent (search/intent.py): "how do I fix X" should land on X's remedy section
(Mitigation, Solution, ...), "what happens when X fires" on its Impact section, "how do I
investigate X" on its Diagnosis section, not on whichever section of the page repeats the name
most; and an intent never pulls in a section of an unrelated page."""

from __future__ import annotations

import pytest

from conftest import indexed_engine, top
from markdown_memory.models import SearchRequest
from markdown_memory.search.intent import ROLES, asked_roles, plays_role


def asked(query: str) -> list[str]:
    """Names of the roles ``asked_roles`` reads from ``query``, in its order."""
    return [role.name for role in asked_roles(query)]


def played(base_path: str) -> list[str]:
    """Names of the roles ``plays_role`` says breadcrumb ``base_path`` plays."""
    return [role.name for role in ROLES if plays_role(role, base_path)]


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
    assert top(engine.search(SearchRequest(form.format(name)))) == (f"runbooks/{name}.md", f"{name} > Mitigation")


@pytest.mark.parametrize("name", sorted(ALERTS))
@pytest.mark.parametrize("form, section", [
    ("What happens when {} fires?", "Impact"),
    ("how bad is {} for users", "Impact"),
    ("How do I investigate {}?", "Diagnosis"),
    ("how to debug {}", "Diagnosis"),
    ("What does {} mean?", "Meaning"),
])
def test_other_roles_land_on_their_section(engine, name, form, section):
    assert top(engine.search(SearchRequest(form.format(name)))) == (f"runbooks/{name}.md", f"{name} > {section}")


def test_the_intent_never_brings_in_a_remedy_section_of_another_page(engine):
    answer = engine.search(SearchRequest('NOTICE: config file "not found" - how do I get rid of it?'))
    assert top(answer) == ("faq.md", 'FAQ > How can I get rid of the "config file not found" notice?')


@pytest.mark.parametrize("query, roles", [
    # the question forms the ranking tests above ask, each reading as exactly one role
    ("How do I fix DiskPressureHigh?", ["remedy"]),
    ("DiskPressureHigh is firing, what should I do?", ["remedy"]),
    ("how to resolve the DiskPressureHigh alert", ["remedy"]),
    ("What happens when DiskPressureHigh fires?", ["impact"]),
    ("how bad is DiskPressureHigh for users", ["impact"]),
    ("How do I investigate DiskPressureHigh?", ["diagnosis"]),
    ("how to debug DiskPressureHigh", ["diagnosis"]),
    ("What does DiskPressureHigh mean?", ["meaning"]),
    ('NOTICE: config file "not found" - how do I get rid of it?', ["remedy"]),
    # other remedy wordings
    ("what should we do about it", ["remedy"]),
    ("steps to mitigate the outage", ["remedy"]),
    ("workaround for the crash", ["remedy"]),
    # words that contain or resemble a role word but ask for none
    ("list the fixtures", []),
    ("Is the chunk size fixed for onedrive uploads?", []),
    ("recover a file from onedrive versions", []),
    ("which port must be free for the server to start", []),
])
def test_asked_roles_reads_the_role_a_question_asks_for(query, roles):
    assert asked(query) == roles


@pytest.mark.parametrize("base_path, roles", [
    # the runbook headings indexed above: each plays its own role, the page title none
    ("DiskPressureHigh > Mitigation", ["remedy"]),
    ("DiskPressureHigh > Impact", ["impact"]),
    ("DiskPressureHigh > Diagnosis", ["diagnosis"]),
    ("DiskPressureHigh > Meaning", ["meaning"]),
    ("DiskPressureHigh", []),
    ("Storage driver > Troubleshooting", ["remedy"]),
    ("Storage driver > Setup", []),
    # duplicate and part suffixes and trailing punctuation are ignored; a subsection of a
    # remedy is part of the remedy
    ("Errors > Solution [2]", ["remedy"]),
    ("Errors > Solution (Part 2)", ["remedy"]),
    ("FAQ > Possible solutions:", ["remedy"]),
    ("Runbook > Mitigation > Capacity planning", ["remedy"]),
    ("Guide > How to fix a stuck upload", ["remedy"]),
    # a heading that only mentions a role word plays no role
    ("Release 2.0 > Fixed bugs", []),
    ('FAQ > How can I get rid of the "config file not found" notice?', []),
    ("Guide > Overview", []),
])
def test_plays_role_reads_the_role_a_heading_plays(base_path, roles):
    assert played(base_path) == roles


def test_roles_read_from_english_and_chinese_wording():
    assert asked("What happens when the disk fills up?") == ["impact"]
    assert asked("etcd 数据库大小超过配额之后会产生什么影响？") == ["impact"]
    assert asked("连接失败怎么办？") == ["remedy"]
    assert asked("How do I find out why the pod restarts?") == ["diagnosis"]
    assert asked("Is the chunk size fixed?") == [] and asked("recover a file from versions") == []
    assert asked("What is the default value of nearFullRatio?") == []  # a plain question asks for no role
    assert played("告警 > 解决方法") == ["remedy"] and played("告警 > 影响") == ["impact"]
    assert played("Alert > Meaning") == ["meaning"] and played("Guide > Overview") == []
    # a man page's DESCRIPTION and an FAQ's "What is ..." are generic introductions, not definitions
    assert played("git-summary(1) > DESCRIPTION") == [] and played("FAQ > What is a vault?") == []


def test_a_generic_overview_never_beats_the_section_that_defines_the_thing(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "cli.md").write_text(
        "# Widget CLI\n\n## Overview\n\nThe widget CLI manages widgets. Every flag is described below.\n\n"
        "## Flags\n\n`--dry-run` prints what would change and changes nothing.\n\n"
        "## Exit codes\n\n0 on success, 2 on a usage error.\n")
    eng = indexed_engine(root, "none")
    assert top(eng.search(SearchRequest("What does --dry-run mean?"))) == ("cli.md", "Widget CLI > Flags")
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
    assert top(eng.search(SearchRequest("what does the --line option mean in git-summary"))) == ("git-summary.md", "git-summary(1) > OPTIONS")
    assert top(eng.search(SearchRequest("Is the chunk size fixed for onedrive uploads?"))) == ("onedrive.md", "OneDrive > Chunk size")
    assert top(eng.search(SearchRequest("recover a file from onedrive versions"))) == ("onedrive.md", "OneDrive > Versions")
    eng.close()
