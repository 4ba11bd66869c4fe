"""Files of a docs root: discovery with git's ignore semantics (:mod:`.walk`), reading each
file once without trusting the walked path (:mod:`.read`), and the stat probe that finds
edited, deleted and new files before an answer (:mod:`.freshness`); files only their owner
may read (:mod:`.private`)."""
