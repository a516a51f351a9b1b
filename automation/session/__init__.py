"""One function per command: a run, hooks, a node replacement, a recovery, assembled."""
