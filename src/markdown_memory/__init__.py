"""markdown-memory: heading-addressed hybrid search over Markdown documentation.

The public API is :class:`markdown_memory.engine.Engine`; the CLI (``cli.py``) and the MCP
server (``server.py``) are thin adapters over it.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
