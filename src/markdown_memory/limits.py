"""The bounds of a search request, in one place: :class:`markdown_memory.models.SearchRequest`
checks them, and the CLI's parser and the MCP tool schema show them. A module of its own (no
imports) so the CLI's light client path (``search`` through the resident service) reads them
without importing the models."""

#: results per search: default and upper limit (the lower limit is 1)
DEFAULT_TOP_K, MAX_TOP_K = 5, 50
#: the answer's budget in tokens; MIN_MAX_TOKENS: what the smallest whole answer needs (a
#: pointer, index_status, the message)
DEFAULT_MAX_TOKENS, MIN_MAX_TOKENS, MAX_MAX_TOKENS = 2000, 500, 20_000
#: Every MCP tool answer stays at or under this many bytes of UTF-8 JSON (``mcp/fit.py`` cuts
#: what is over, saying what was left out and how to get it). Why: Claude Code refuses a tool
#: result over ``MAX_MCP_OUTPUT_TOKENS`` (default 25,000 tokens; other clients are near that)
#: and the agent then gets an error, not an answer (case 055). JSON of paths, numbers and
#: prose runs 3-4 bytes per token in ASCII, and a CJK character is 3 bytes and about one token,
#: so 72,000 bytes stay under 24,000 tokens either way, with room for the JSON-RPC envelope.
MAX_ANSWER_BYTES = 72_000
