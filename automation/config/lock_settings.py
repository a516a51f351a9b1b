"""The run lock's lease: how long it lasts unrenewed, how often a run renews it
(``automation.run.run_lock``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class LeaseSettings(BaseModel):
    """How long a run's lock lasts without renewal, and how often the run renews it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    lease_seconds: float = Field(
        default=120.0,
        gt=0,
        le=86400,
        description="Seconds a run's lock stays valid without renewal; past it, a lock whose "
        "holder runs elsewhere is stale (`kubeshift recover` clears it).",
    )
    renew_seconds: float = Field(
        default=20.0,
        gt=0,
        le=3600,
        description="Seconds between the running holder's renewals (well under the lease).",
    )
