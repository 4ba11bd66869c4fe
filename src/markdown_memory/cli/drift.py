"""``markdown-memory drift [--json] [--fail] [--code-root DIR]``: the sections that name flags,
environment variables, paths or functions the code no longer holds (``drift/``, docs/drift.md).

Printed for a person: per drifting section ``FILE:LINE  BREADCRUMB``, then one indented line per
missing name ``LINE  NAME  (KIND)``, then a summary line. ``--json`` prints the report object.
Exit 0, or 1 with ``--fail`` when some section drifts (for CI).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .options import add_docs_dir, add_json, open_engine, printable


def register(sub: Any) -> None:
    """Add ``drift`` to the subcommand parsers ``sub``."""
    p = sub.add_parser("drift", help="sections naming flags, env vars, paths or functions the code no longer has")
    add_docs_dir(p)
    p.add_argument("--code-root", metavar="DIR", help="the repository the docs describe (default: the git work "
                   "tree holding the docs root)")
    p.add_argument("--fail", action="store_true", help="exit 1 when some section drifts (for CI)")
    add_json(p)
    p.set_defaults(handler=run)


def render(data: dict[str, Any]) -> str:
    """The report of ``find_drift(...).to_dict()`` as lines for a person."""
    out = []
    for sec in data["sections"]:
        out.append(f"{printable(sec['file_path'])}:{sec['start_line']}  {sec['heading_path']}")
        out.extend(f"  {m['line']:>5}  {m['name']}  ({m['kind']})"
                   + (f"  did you mean {m['did_you_mean']}?" if m.get("did_you_mean") else "") for m in sec["missing"])
    out.append(f"{data['drifting']} drifting section(s) of {data['sections_scanned']}; "
               f"{data['references_checked']} reference(s) checked against {data['code_files']} file(s) "
               f"of {data['code_root']}")
    if data.get("note"):
        out.append(f"note: {data['note']}")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    """Bring the docs index up to date, then print the drift report."""
    with open_engine(args) as engine:
        report = engine.drift(args.code_root).to_dict()
    if args.json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False) + "\n")
    else:
        print(render(report))
    return 1 if args.fail and report["drifting"] else 0
