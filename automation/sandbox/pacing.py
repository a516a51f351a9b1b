"""How often the sandbox's pollers read moto: every second while things change, less when idle.

Why this exists: the node bridge and the member boots each read every running instance
from moto, and moto builds each reply in Python. At one read a second each, an idle
vpc-move sandbox's supervisor used 17 % of a core doing nothing else (measured over
60 s; moto's response serializer and boto3's parsing were most of it). So a poller
that found nothing to do waits twice as long before its next pass, up to ``slowest``;
any change, or work left for later, brings it back to ``fastest``. A kubelet on AWS
registers its Node 30-90 s after its instance starts, so reacting within a few seconds
is still quicker than production, never kinder in what it allows.
"""

from __future__ import annotations

import dataclasses

SLOWEST_SECONDS = 4.0


@dataclasses.dataclass
class Pace:
    """The wait before a poller's next pass, given whether the last one found work."""

    fastest: float = 1.0
    slowest: float = SLOWEST_SECONDS
    current: float = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        self.current = self.fastest

    def after(self, busy: bool) -> float:
        """Seconds to wait: ``fastest`` after a busy pass, doubling to ``slowest`` when idle."""
        ceiling = max(self.fastest, self.slowest)
        self.current = self.fastest if busy else min(self.current * 2, ceiling)
        return self.current
