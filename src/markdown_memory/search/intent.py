"""Question intent read from the wording, matched against the *role* a section's heading plays
in its document.

Runbooks, troubleshooting pages and knowledge-base articles give every problem the same few
headings (Meaning, Impact, Diagnosis, Mitigation; Symptoms, Cause, Solution). A question such as
"how do I fix KubePodCrashLooping?" names the problem, which every one of those sections
mentions, and an intent ("fix") that no section states as a keyword: without this signal the
shortest or most repetitive section of the right page wins, rarely the remedy. Each role pairs
the question wordings that ask for it with the headings that play it (English and Chinese).
The ranker (``rank.py``) applies a role only within the best hit's page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text import match_form


@dataclass(frozen=True)
class Role:
    """A section role: ``asks`` matches a question asking for it, ``heading`` a breadcrumb part
    (suffixes removed) that plays it."""

    name: str
    asks: re.Pattern[str]
    heading: re.Pattern[str]


def _words(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


ROLES = (
    Role(
        "remedy",
        # not "fixed" (an adjective: "is the chunk size fixed?") nor "recover" ("recover a file
        # from versions" asks for a feature, not a remedy)
        _words(r"\b(?:fix|fixes|fixing|resolv(?:e|es|ing)|solv(?:e|es|ing)|mitigat\w*|remed(?:y|ies|iate)\w*"
               r"|repair|work ?around|troubleshoot\w*|get rid of"
               r"|what (?:should|can|do|must) (?:i|we|you) do|what to do)\b"
               r"|怎么办|如何解决|怎么解决|怎样解决|如何修复|怎么修复|解决方法|解决办法"),
        _words(r"^(?:(?:possible |suggested |recommended )?(?:mitigations?|solutions?|resolutions?|fix(?:es)?|fixing"
               r"|remediation|workarounds?|troubleshooting|recovery|what to do)"
               r"|how (?:to|do i|can i) (?:fix|resolve|solve|mitigate|recover)\b.*"
               r"|解决方法|解决方案|解决办法|处理方法|修复方法|故障排除|排查与解决)$"),
    ),
    Role(
        "impact",
        _words(r"\b(?:what happens (?:when|if|after)|impacts?|consequences?|how bad|what breaks"
               r"|effects? (?:of|on)|affect(?:s|ed)? (?:users|clients|the|my|service))\b"
               r"|什么影响|有何影响|影响是什么|后果"),
        _words(r"^(?:impact|effects?|consequences|severity|what happens.*|影响|后果)$"),
    ),
    Role(
        "diagnosis",
        _words(r"\b(?:investigat\w*|debug\w*|diagnos\w*|root cause|find (?:out )?why"
               r"|what (?:should|do|can) (?:i|we) (?:check|look at)|how (?:do|can) (?:i|we) (?:check|tell) (?:why|what))\b"
               r"|如何排查|怎么排查|怎么诊断|如何诊断|原因是什么"),
        _words(r"^(?:diagnosis|diagnostics|diagnosing|debugging|investigation|investigating|root cause|causes?"
               r"|诊断|排查|原因|问题排查)$"),
    ),
    Role(
        "meaning",
        _words(r"\bwhat (?:does|do) .+ mean\b|\bmeaning of\b|\bwhat is .+ about\b|\bwhat .+ stands? for\b"
               r"|是什么意思|含义"),
        # only headings that name the role itself: "Description" (every man page has one) and
        # "What is ..." (FAQ entries, privacy-policy intros) are a page's generic introduction
        # and lost to the section defining the very option asked about
        _words(r"^(?:meaning|definition|含义|定义)$"),
    ),
)

_SUFFIXES = re.compile(r"(?: \[\d+\]| \(Part \d+\))+$")


def asked_roles(query: str) -> list[Role]:
    """The roles ``query`` asks for, in ``ROLES`` order (usually none or one)."""
    return [role for role in ROLES if role.asks.search(query)]


def plays_role(role: Role, base_path: str) -> bool:
    """True when a part of breadcrumb ``base_path`` (duplicate and part suffixes removed) plays
    ``role``: the section is, say, a remedy or part of one ("Mitigation > Capacity planning",
    every section of a "Troubleshooting" page)."""
    return any(role.heading.match(_SUFFIXES.sub("", part).strip().rstrip(":?？：").strip())
               for part in match_form(base_path, fold_case=False).split(" > "))
