"""Files of a docs root: discovery with git's ignore semantics (:mod:`.walk`) and the stat
probe that finds edited, deleted and new files before an answer (:mod:`.freshness`)."""
