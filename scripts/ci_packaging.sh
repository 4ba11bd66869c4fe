#!/usr/bin/env bash
# The user install README shows, as CI checks it: `uv tool install '.[minilm]'` into a temp tool
# folder, no PyTorch pulled, the model fetched, two searches through the resident service (which
# the first search starts), then the service stopped. uv comes from PyPI into VENV (default .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
tools="$(mktemp -d)"
trap 'rm -rf "$tools"' EXIT
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check uv
export UV_TOOL_DIR="$tools/tools" UV_TOOL_BIN_DIR="$tools/bin"
PATH="$PWD/$VENV/bin:$PATH" uv tool install --quiet '.[minilm]'
"$tools/bin/markdown-memory" --version
if ls "$tools"/tools/markdown-memory/lib/python*/site-packages | grep -qiE '^(torch|sentence_transformers)'; then
  echo "the minilm extra pulled PyTorch or sentence-transformers" >&2
  exit 1
fi
MARKDOWN_MEMORY_MODEL_CACHE="$tools/models" "$tools/bin/markdown-memory" --download-model --embedder minilm
# a private runtime folder, and the service stopped before the tool folder goes (docs/service.md)
export MARKDOWN_MEMORY_RUNTIME_DIR="$tools/run"
MARKDOWN_MEMORY_MODEL_CACHE="$tools/models" MARKDOWN_MEMORY_DB="$tools/index.db" \
  "$tools/bin/markdown-memory" --embedder minilm search "register the MCP server" --docs-dir docs --top-k 3
MARKDOWN_MEMORY_MODEL_CACHE="$tools/models" MARKDOWN_MEMORY_DB="$tools/index.db" \
  "$tools/bin/markdown-memory" --embedder minilm search "keep the index current while files change" --docs-dir docs --top-k 1
"$tools/bin/markdown-memory" serve --status
"$tools/bin/markdown-memory" serve --stop
echo "packaging passed"
