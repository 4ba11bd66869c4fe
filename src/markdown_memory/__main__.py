"""``python -m markdown_memory``: the ``markdown-memory`` command (a client starts the resident
service as ``python -m markdown_memory serve``; the stdio relay's fallback child runs the server
this way): the console script's entry, whose fast paths leave the rest to the CLI."""

from .entry import main

raise SystemExit(main())
