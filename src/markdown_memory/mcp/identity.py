"""What the MCP server says about itself at the handshake: its name and its instructions
(read by ``server.py`` and ``tools.py``; a module of its own so neither imports the other).
"""

SERVER_NAME = "markdown-memory"

INSTRUCTIONS = (
    "Project docs are indexed by Markdown section. Never read whole .md files: "
    "1) search_docs(query) first; hits carry file_path, heading_path and the section text "
    "(later hits are pointers). 2) get_document_outline(file_path) to see a document's headings. "
    "3) read_section(file_path, heading_path) to read one section. "
    "get_links(file_path) lists a document's links and backlinks, with the section each sits in. "
    "Every search answer has index_status: keyword_only=true means semantic search is off "
    "(use exact words); indexing=true means results may be incomplete; message, when set, "
    "says what to do (e.g. call index_directory). "
    "The resource docs://map outlines every indexed document (titles, top headings, token counts)."
)
