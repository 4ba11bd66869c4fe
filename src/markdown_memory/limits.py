"""The bounds of a search request, in one place: :class:`markdown_memory.models.SearchRequest`
checks them, and the CLI's parser and the MCP tool schema show them. A module of its own (no
imports) so the CLI's light client path (``search`` through the resident service) reads them
without importing the models."""

#: results per search: default and upper limit (the lower limit is 1)
DEFAULT_TOP_K, MAX_TOP_K = 5, 50
#: the answer's budget in tokens; MIN_MAX_TOKENS: what the smallest whole answer needs (a
#: pointer, index_status, the message)
DEFAULT_MAX_TOKENS, MIN_MAX_TOKENS, MAX_MAX_TOKENS = 2000, 500, 20_000
