"""Drift: sections that name flags, environment variables, paths and functions the code no
longer has (docs/drift.md).

``references`` finds the names a section gives as code; ``codeside`` reads the code root into
the code index (``store/code.py``), incrementally; ``check`` looks references up there
(``find_drift`` for the ``drift`` command, ``with_drift`` for search hits).
"""

from __future__ import annotations

from .check import DriftingSection, DriftReport, Missing, find_drift, with_drift
from .references import Reference, section_references

__all__ = ["DriftReport", "DriftingSection", "Missing", "Reference", "find_drift",
           "section_references", "with_drift"]
