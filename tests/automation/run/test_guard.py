"""The blast-radius guard over previews: what each change policy lets through."""

from __future__ import annotations

import pytest

from automation.core.errors import BlastRadiusError
from automation.engine.adapter import PreviewOutcome, ResourceChange
from automation.model.phase import CREATES_AND_UPDATES, CREATES_ONLY, ChangePolicy, deletes_in
from automation.run import guard

ASG = "aws:autoscaling/group:Group"
VPC = "aws:ec2/vpc:Vpc"


def preview(*changes: tuple[str, str, str]) -> PreviewOutcome:
    return PreviewOutcome(
        changes=tuple(
            ResourceChange(op=op, urn=f"urn:pulumi:s::p::{t}::{n}", type=t, name=n)
            for op, t, n in changes
        )
    )


@pytest.mark.parametrize(
    ("policy", "change", "allowed"),
    [
        (CREATES_ONLY, ("create", ASG, "w-new"), True),
        (CREATES_ONLY, ("same", VPC, "src"), True),
        (CREATES_ONLY, ("update", ASG, "w-old"), False),
        (CREATES_AND_UPDATES, ("update", ASG, "w-old"), True),
        (CREATES_AND_UPDATES, ("delete", ASG, "w-old"), False),
        (CREATES_AND_UPDATES, ("replace", VPC, "src"), False),
        (deletes_in(f"{ASG}::w-old-*"), ("delete", ASG, "w-old-a"), True),
        (deletes_in(f"{ASG}::w-old-*"), ("delete", ASG, "w-new-a"), False),
        (deletes_in(f"{ASG}::w-old-*"), ("replace", ASG, "w-old-a"), True),
        (ChangePolicy(protected=(f"{VPC}::*",)), ("update", VPC, "src"), False),
    ],
    ids=[
        "create-ok",
        "same-ok",
        "update-refused",
        "update-ok",
        "delete-refused",
        "replace-refused",
        "scoped-delete-ok",
        "unscoped-delete-refused",
        "scoped-replace-ok",
        "protected-update-refused",
    ],
)
def test_policy(policy: ChangePolicy, change: tuple[str, str, str], allowed: bool) -> None:
    assert (guard.violations(preview(change), policy) == []) is allowed


def test_check_lists_every_offender_and_says_nothing_changed() -> None:
    outcome = preview(("delete", ASG, "b"), ("replace", VPC, "a"), ("create", ASG, "c"))
    with pytest.raises(BlastRadiusError) as info:
        guard.check("dns-cutover", outcome, CREATES_ONLY)
    text = str(info.value)
    assert "Phase 'dns-cutover' stopped before update: its preview has 2 change(s)" in text
    assert "delete of aws:autoscaling/group:Group::b" in text
    assert "replace of aws:ec2/vpc:Vpc::a" in text
    assert text.endswith("Nothing was changed.")


def test_provider_bookkeeping_is_not_a_change() -> None:
    outcome = preview(("update", "pulumi:providers:pulumi-python", "default"))
    assert guard.violations(outcome, CREATES_ONLY) == []


def test_a_delete_first_replacement_needs_its_own_allowance() -> None:
    """A phase that may replace a group may still not leave it gone before its successor
    exists: delete-first replacements are allowed only where the policy names them."""
    from dataclasses import replace

    steps = [
        ResourceChange(op, f"urn:pulumi:s::p::{ASG}::w-old-a", ASG, "w-old-a", delete_first=True)
        for op in ("delete-replaced", "replace", "create-replacement")
    ]
    outcome = PreviewOutcome(changes=tuple(steps))
    replacing = deletes_in(f"{ASG}::w-old-*")
    refused = guard.violations(outcome, replacing)
    assert len(refused) == 3 and "delete-first replacement" in refused[0].reason
    assert guard.violations(outcome, replace(replacing, delete_first=(f"{ASG}::w-old-*",))) == []
    created_first = [replace(s, delete_first=False) for s in steps]
    assert guard.violations(PreviewOutcome(changes=tuple(created_first)), replacing) == []
