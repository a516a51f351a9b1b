"""The phase model (phases, hooks, gates, probes) and the context a hook receives."""
