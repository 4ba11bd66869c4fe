#!/usr/bin/env bash
# Static checks CI runs: mypy (config in pyproject.toml), ruff, and the layering rule that only
# the storage package runs SQL. Installs the `lint` extra into the venv first. VENV (default .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[lint]'
"$VENV/bin/python" -m mypy
"$VENV/bin/python" -m ruff check src tests scripts
# SQL runs only in src/markdown_memory/store/ (tests/test_sql_confined.py checks the same by AST)
if grep -rnE '\.(execute|executemany|executescript)\(' src/markdown_memory --include='*.py' | grep -v '^src/markdown_memory/store/'; then
  echo "SQL outside src/markdown_memory/store/ (above)" >&2
  exit 1
fi
echo "checks passed"
