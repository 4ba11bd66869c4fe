"""The local page (``markdown-memory ui``, docs/ui.md): search, read, the indexed roots, what
the prompt hook gave the agent, an evaluation run and drift, served by the resident service on
its loopback HTTP endpoint under ``/ui`` (``mcp/http.py`` mounts :class:`.app.UiApp` after its
Host and Origin checks). :mod:`.access`: the one-time link, the cookie and the form token;
:mod:`.views`: what each page shows, through the engine façade; :mod:`.charts`: inline SVG.

Importing this package imports nothing heavy (``markdown-memory ui`` makes its link with it).
"""
