#!/usr/bin/env bash
# Two pytest runs at once on one machine must not interfere (issue 17): each uses a private temp
# root (tests/conftest.py), never pytest's shared pytest-of-USER folder that every run prunes and
# resets. Runs the same cheap subset twice concurrently (including the test that runs the CLI as
# another user, and tests/test_progress.py's check that the run's temp roots are its own) and
# fails if either run fails.
# Environment: PYTHON (default .venv/bin/python). Arguments: test paths (default below).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
if [ "$#" -gt 0 ]; then tests=("$@"); else tests=(tests/test_cases_filesystem.py tests/test_progress.py); fi
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
"$PYTHON" -m pytest -q -p no:cacheprovider "${tests[@]}" >"$logs/a" 2>&1 & a=$!
"$PYTHON" -m pytest -q -p no:cacheprovider "${tests[@]}" >"$logs/b" 2>&1 & b=$!
status=0
wait "$a" || status=1
wait "$b" || status=1
for run in a b; do echo "== run $run: $(tail -n 1 "$logs/$run")"; done
if [ "$status" -ne 0 ]; then
  cat "$logs/a" "$logs/b" >&2
  echo "parallel test runs failed" >&2
  exit 1
fi
echo "parallel test runs passed"
