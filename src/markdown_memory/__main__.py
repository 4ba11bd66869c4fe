"""``python -m markdown_memory``: the ``markdown-memory`` command (a client starts the resident
service as ``python -m markdown_memory serve``)."""

from .cli import main

raise SystemExit(main())
