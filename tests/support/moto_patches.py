"""Patches of moto's in-process backends for states moto never produces by itself.

The moto server runs in the test process (``ThreadedMotoServer``), so patching its
model classes changes what real HTTP answers say. Each patch is undone by the
``monkeypatch`` fixture that applied it. Used where AWS has a state moto lacks:
``unhealthy``/``initial``/``draining`` targets, Route53 changes that stay PENDING,
``blackhole`` routes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

HealthOverride = tuple[str, str, str]  # state, reason, description


def override_target_health(
    monkeypatch: pytest.MonkeyPatch, overrides: dict[str, HealthOverride]
) -> dict[str, HealthOverride]:
    """Targets whose ids are keys of ``overrides`` report that state instead of healthy.

    The dict is returned live: a test may change it between polls.
    """
    from moto.elbv2 import models

    original = models.FakeTargetGroup.health_for

    def health_for(self: Any, target: dict[str, Any], ec2_backend: Any) -> Any:
        status = original(self, target, ec2_backend)
        if target["Id"] in overrides:
            state, reason, description = overrides[target["Id"]]
            return models.FakeHealthStatus(
                status.instance_id,
                status.port,
                status.health_check_port,
                state,
                reason,
                description,
            )
        return status

    monkeypatch.setattr(models.FakeTargetGroup, "health_for", health_for)
    return overrides


def route53_change_status(
    monkeypatch: pytest.MonkeyPatch, statuses: Callable[[str], str]
) -> list[str]:
    """``GetChange`` answers ``statuses(change_id)`` instead of moto's constant INSYNC.

    Returns the list of change ids polled, in order.
    """
    from moto.core.responses import ActionResult
    from moto.core.utils import utcnow
    from moto.route53 import responses

    polled: list[str] = []

    def get_change(self: Any) -> Any:
        change_id = self._get_param("Id")
        polled.append(change_id)
        info = {"Id": change_id, "Status": statuses(change_id), "SubmittedAt": utcnow()}
        return ActionResult({"ChangeInfo": info})

    monkeypatch.setattr(responses.Route53, "get_change", get_change)
    return polled


def blackhole_routes(monkeypatch: pytest.MonkeyPatch, cidrs: set[str]) -> set[str]:
    """Routes to ``cidrs`` report ``State: blackhole`` (on AWS: their target is gone).

    moto reports every route ``active``. The set is returned live.
    """
    from moto.ec2.models import route_tables

    def state(self: Any) -> str:
        return "blackhole" if self.destination_cidr_block in cidrs else "active"

    monkeypatch.setattr(route_tables.Route, "state", property(state))
    return cidrs
