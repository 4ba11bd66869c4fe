"""The resident service (docs/service.md): one process per user that keeps each docs root's
engine and each embedding model loaded for every client (stdio MCP servers, the prompt hook, the
CLI).

* :mod:`.paths` — the runtime folder and its files; :mod:`.protocol` — one JSON line each way;
* :mod:`.client` — the light client (stdlib only): ``request``, ``open_session``, ``start_service``;
* :mod:`.server` — the process (``markdown-memory serve``); :mod:`.ops` — its operations;
  :mod:`.pool` — its engines.

Importing this package imports nothing (clients import :mod:`.client` alone).
"""
