"""How often the program's process collects cyclic garbage while it declares resources.

Declaring a resource allocates dozens of short-lived futures, tasks and protobuf
messages that point at each other. At CPython's default (a collection of the youngest
generation every 700 net allocations) a 623-resource phase ran the collector thousands
of times over an ever larger heap: a quarter of its render. Collecting every 50,000
allocations instead keeps that work to a few passes, for about 65 MiB more at the peak.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

YOUNGEST_THRESHOLD = 50_000


def collect_rarely() -> None:
    """Collect the youngest generation every ``YOUNGEST_THRESHOLD`` allocations; keep the
    older generations' ratios."""
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNGEST_THRESHOLD, middle, oldest)


@contextlib.contextmanager
def collecting_rarely() -> Iterator[None]:
    """:func:`collect_rarely` for the block, then the thresholds the process had."""
    saved = gc.get_threshold()
    collect_rarely()
    try:
        yield
    finally:
        gc.set_threshold(*saved)
