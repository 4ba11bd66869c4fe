"""Indexing: the incremental indexer (diff, parse, write, embed pending passages), the state
of runs in this process (:mod:`.activity`) and the background catch-up scheduler
(:mod:`.scheduler`)."""
