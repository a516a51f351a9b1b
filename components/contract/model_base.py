"""The base of the stack file's typed models: :class:`ConfigError`, the one error every
broken setting is reported as (a sentence naming its key), and ``_Model``, the frozen
pydantic model that forbids unknown keys, which every model of the stack file extends.
Kept apart from the models themselves so that the cluster's models
(``components.contract.cluster_models``) and the stack's (``components.contract.models``)
both build on it without importing each other round a circle.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ConfigError(ValueError):
    """The stack configuration is invalid; ``key`` names the offending setting."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
