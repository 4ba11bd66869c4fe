"""``python -m markdown_memory.cli``: the ``markdown-memory`` console script (its entry, whose
fast paths serve the prompt hook and the stdio relay without importing every command)."""

from ..entry import main

raise SystemExit(main())
