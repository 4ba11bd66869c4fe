"""``python -m markdown_memory.cli``: the ``markdown-memory`` console script."""

from . import main

raise SystemExit(main())
