"""A refresh through the stand-in provider must not invent drift moto cannot see."""

from __future__ import annotations

from automation.sandbox.provider.diffing import Schema, decide, overlay, shaped_like

STATE = {
    "name": "ingress-80",
    "healthCheck": {"interval": 10, "protocol": "TCP"},
    "defaultActions": [{"type": "forward", "order": 1, "targetGroupArn": "arn:old"}],
    "launchTemplate": {"id": "lt-1", "name": "workers"},
}


def test_what_moto_reports_wins_and_what_it_omits_keeps_the_state() -> None:
    live = {
        "name": "ingress-80",
        "healthCheck": {"interval": 30, "protocol": "TCP", "timeout": 10},
        "defaultActions": [{"type": "forward", "targetGroupArn": "arn:new"}],
        "launchTemplate": {"id": "lt-1", "name": None},
    }
    merged = overlay(STATE, live)
    assert merged == {
        "name": "ingress-80",
        "healthCheck": {"interval": 30, "protocol": "TCP", "timeout": 10},  # drift is kept
        "defaultActions": [{"type": "forward", "order": 1, "targetGroupArn": "arn:new"}],
        "launchTemplate": {"id": "lt-1", "name": "workers"},
    }


def test_a_list_that_changed_length_is_what_moto_says() -> None:
    live = {"defaultActions": [{"type": "forward"}, {"type": "redirect"}]}
    assert overlay(STATE, live)["defaultActions"] == live["defaultActions"]  # type: ignore[index]


def test_read_inputs_keep_only_what_the_program_declared() -> None:
    declared = {"healthCheck": {"interval": 10}, "defaultActions": [{"type": "forward"}]}
    live = {
        "healthCheck": {"interval": 30, "timeout": 10},
        "defaultActions": [{"type": "forward", "order": 1}],
        "arn": "arn:x",
    }
    assert shaped_like(live, declared) == {
        "healthCheck": {"interval": 30},
        "defaultActions": [{"type": "forward"}],
    }


def test_a_set_reads_back_in_the_order_declared_and_a_reorder_is_no_change() -> None:
    """AWS lists an interface's security groups in its own order; Terraform's TypeSet
    has none, so neither a refresh nor the next preview may see a change."""
    from automation.sandbox.provider.diffing import in_prior_order
    from automation.sandbox.provider.types.compute import NetworkInterface

    declared = {"securityGroups": ["sg-b", "sg-a"], "subnetId": "subnet-1"}
    live = {"securityGroups": ["sg-a", "sg-b"], "subnetId": "subnet-1"}
    in_prior_order(NetworkInterface.sets, declared, live)
    assert live["securityGroups"] == ["sg-b", "sg-a"]
    reordered = {**declared, "securityGroups": ["sg-a", "sg-b"]}
    sets, force_new = NetworkInterface.sets, NetworkInterface.replace_props()
    assert decide(force_new, declared, reordered, Schema(sets=sets)).changed == ()
    assert decide(force_new, declared, reordered).changed == ("securityGroups",)  # as a list
    grown = {**declared, "securityGroups": ["sg-a", "sg-b", "sg-c"]}
    assert decide(force_new, declared, grown, Schema(sets=sets)).changed == ("securityGroups",)
    changed = {"securityGroups": ["sg-a", "sg-c"]}
    in_prior_order(NetworkInterface.sets, declared, changed)
    assert changed["securityGroups"] == ["sg-a", "sg-c"]  # other members: as AWS says
