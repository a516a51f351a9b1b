"""Which kept values the program looked for while it ran: the check that each one the
stack file gives belongs to something the program declares.

A kept name, description, boot script, tag set or input (``kubeshift:cluster.names``,
``descriptions``, ``user_data``, ``kept_tags``, ``kept_inputs``) is looked up by a key
the program derives: the name kubeshift gives a resource, or its logical name. A key
nobody looks up is kept for nothing — a typo that would let the next update drop
another tool's tags, or rename a live group. The program notes every key it looks up
here; an offline render reads the notes (``automation/run/kept_check.py``). Under the
engine nothing reads them.
"""

from __future__ import annotations

from collections import defaultdict

SECTIONS = ("names", "descriptions", "user_data", "kept_tags", "kept_inputs")

_looked_up: defaultdict[str, set[str]] = defaultdict(set)


def note(section: str, *keys: str) -> None:
    """The program looked for ``keys`` in ``kubeshift:cluster.<section>``."""
    _looked_up[section].update(keys)


def reset() -> None:
    """Forget every note (before a render)."""
    _looked_up.clear()


def looked_up() -> dict[str, list[str]]:
    """Every key looked up per section since the last :func:`reset`, sorted."""
    return {section: sorted(_looked_up.get(section, ())) for section in SECTIONS}
