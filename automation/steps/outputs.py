"""The stack outputs a step needs, read through its scenario's typed model.

The models live with each scenario's spec (``components.contract.scenarios``); the program
checks that it exports nothing they do not declare. A step reads them with
``ctx.read_outputs(Model)`` and insists on what it cannot work without with
:func:`need`, which says which earlier phase is missing.
"""

from __future__ import annotations

from typing import TypeVar

from automation.core.errors import PreconditionFailed
from components.contract.scenarios.vpc_move import VpcMoveOutputs

T = TypeVar("T")


def need(value: T | None, output: str, phase: str) -> T:
    """``value`` of stack output ``output``; one sentence when the stack lacks it."""
    if value is None or value == "" or value == [] or value == {}:
        raise PreconditionFailed(
            f"Phase '{phase}' needs the stack output '{output}', which the stack does not "
            "have yet; run the earlier phases first."
        )
    return value


def target_group_arns(out: VpcMoveOutputs, lb_key: str, phase: str) -> list[str]:
    """Every target group ARN of load balancer ``lb_key`` (e.g. ``ingress-target``)."""
    by_port = out.target_group_arns.get(lb_key) or {}
    if not by_port:
        raise PreconditionFailed(
            f"Phase '{phase}' needs the target groups of load balancer '{lb_key}', which the "
            "stack does not have yet."
        )
    return [by_port[port] for port in sorted(by_port)]
