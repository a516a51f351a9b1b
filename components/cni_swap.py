"""cni-swap scenario (seed 000)."""

from typing import Any

from components.config import StackConfig


def build(config: StackConfig) -> dict[str, Any]:
    raise NotImplementedError
