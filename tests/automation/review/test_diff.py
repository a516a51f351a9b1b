"""Offline review: phase diffs and the program's own scope for the guard."""

from __future__ import annotations

import fnmatch
from pathlib import Path

from automation.model.change_policy import undoes_what_the_phase_did
from automation.review.diff import diff_resources, program_scope, undo_scope_of
from automation.run.targets import PhaseRenders
from components.contract.loading import load_config, load_stack_file

STACK = Path(__file__).resolve().parents[3] / "stacks" / "Pulumi.vpc-move-small.yaml"


class R:
    def __init__(self, type_: str, name: str, inputs: dict) -> None:
        self.type, self.name, self.inputs = type_, name, inputs


def test_diff_reports_added_removed_and_changed_keys() -> None:
    before = [R("t:A", "a", {"x": 1}), R("t:A", "b", {"x": 1, "y": 2})]
    after = [R("t:A", "b", {"x": 1, "y": 3}), R("t:A", "c", {})]
    result = diff_resources(before, after).as_dict()
    assert result == {
        "added": ["t:A::c"],
        "removed": ["t:A::a"],
        "changed": {"t:A::b": ["y"]},
        "moved": {},
    }


def test_program_scope_of_retire_old_workers_covers_old_groups_only() -> None:
    values = load_stack_file(STACK)
    ids = load_config(values).phase_ids
    scope = program_scope(values, ids, "retire-old-workers")

    def in_scope(key: str) -> bool:
        return any(fnmatch.fnmatchcase(key, pattern) for pattern in scope)

    asg = "aws:autoscaling/group:Group::"
    assert in_scope(asg + "demo-workers-general-m5-large-us-west-2a-on-demand")
    assert not in_scope(asg + "demo-workers-mig-general-m5-large-us-west-2a-on-demand")
    assert not any("aws:ec2/vpc:Vpc" in pattern for pattern in scope)
    assert program_scope(values, ids, "baseline") == ()


def test_taking_target_workers_back_may_delete_the_new_groups_and_nothing_else() -> None:
    """Going back from target-workers to ingress-nodeport: the guard lets the new groups
    (and what only they use) go, and refuses a delete of an old group, the network, or
    any change to a record."""
    values = load_stack_file(STACK)
    renders = PhaseRenders(values, load_config(values).phase_ids)
    policy = undoes_what_the_phase_did().widened(
        undo_scope_of(renders.leaving("target-workers", "ingress-nodeport"))
    )
    asg = "aws:autoscaling/group:Group"
    new_group = "demo-workers-mig-general-m5-large-us-west-2a-on-demand"
    assert policy.violation("delete", asg, new_group) is None
    assert policy.violation("delete", asg, "demo-workers-general-m5-large-us-west-2a-on-demand")
    assert policy.violation("delete", "aws:ec2/vpc:Vpc", "demo-mig")
    assert policy.violation("create", asg, "anything-new")

    records = undoes_what_the_phase_did().widened(
        undo_scope_of(renders.leaving("dns-cutover", "target-workers"))
    )
    changed = [k for k in renders.leaving("dns-cutover", "target-workers").changed]
    assert changed and all(k.type == "aws:route53/record:Record" for k in changed)
    assert records.violation("update", changed[0].type, changed[0].name) is None
    assert records.violation("delete", asg, new_group)


def test_taking_the_drain_back_may_resume_the_old_groups_and_nothing_else() -> None:
    values = load_stack_file(STACK)
    leaving = PhaseRenders(values, load_config(values).phase_ids).leaving(
        "drain-workers", "ingress-move"
    )
    assert leaving.added == [] and leaving.removed == []
    assert leaving.changed and all(
        k.type == "aws:autoscaling/group:Group" and fields == ["suspendedProcesses"]
        for k, fields in leaving.changed.items()
    ), leaving.as_dict()


def test_alias_moves_are_not_adds_and_removes() -> None:
    class A(R):
        def __init__(self, type_: str, name: str, aliases: tuple) -> None:
            super().__init__(type_, name, {})
            self.aliases = aliases

    before = [A("aws:iam/role:Role", "old-role", ()), A("t:X", "gone", ())]
    after = [A("aws:iam/role:Role", "new-role", ({"name": "old-role"},))]
    result = diff_resources(before, after)
    assert result.as_dict()["moved"] == {
        "aws:iam/role:Role::new-role": "aws:iam/role:Role::old-role"
    }
    assert [str(k) for k in result.removed] == ["t:X::gone"] and result.added == []
