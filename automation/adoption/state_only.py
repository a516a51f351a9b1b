"""Attributes pulumi-aws keeps only in the stack's state, which no AWS API reports.

An import reads each as its schema default (Terraform's acceptance tests list them
under ``ImportStateVerifyIgnore``), so a program that declares another value would
make every import of the type fail on a difference nothing live could resolve.
Adoption imports them with ``ignore_changes`` and then writes the declared values
into the state with one update that calls no AWS API for them.
"""

from __future__ import annotations

from automation.adoption.models import Difference
from automation.engine.property_paths import top_level

STATE_ONLY: dict[str, tuple[str, ...]] = {
    "aws:ec2/securityGroup:SecurityGroup": ("revokeRulesOnDelete",),
    "aws:ec2/launchTemplate:LaunchTemplate": ("updateDefaultVersion",),
    "aws:ebs/volume:Volume": ("finalSnapshot",),
    "aws:iam/role:Role": ("forceDetachPolicies",),
    "aws:route53/record:Record": ("allowOverwrite",),
}


def is_state_only(difference: Difference) -> bool:
    return top_level(difference.attribute) in STATE_ONLY.get(difference.type, ())
