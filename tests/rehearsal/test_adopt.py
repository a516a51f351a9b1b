"""The rehearsal starts where a user starts: a live cluster no kubeshift state knows,
taken into the stack by ``kubeshift adopt`` through the real engine."""

from __future__ import annotations

from tests.rehearsal.conftest import STACK, Rehearsal


def test_a_dry_run_maps_every_resource_and_imports_nothing(rehearsal: Rehearsal) -> None:
    planned = rehearsal.adoption.planned
    assert planned.code == 0, planned.stderr[-3000:]
    report = planned.json()
    assert report["outcome"] == "planned"
    assert report["refusals"] == [] and report["differences"] == []
    discovered = report["discovery"]["resources"]
    assert {r["name"] for r in discovered} == set(report["imported"]) | set(report["recorded"])
    # the adoption that followed imported what the dry run planned: it had imported nothing
    assert rehearsal.adoption.adopted.json()["imported"] == report["imported"]


def test_adoption_imports_the_live_ids_and_leaves_a_baseline_that_changes_nothing(
    rehearsal: Rehearsal,
) -> None:
    report = rehearsal.adoption.adopted.json()
    assert report["outcome"] == "adopted", report
    assert report["message"] == "baseline now previews no change"
    by_name = {r["name"]: r for r in report["discovery"]["resources"]}
    vpcs = rehearsal.client("ec2").describe_vpcs()["Vpcs"]
    source = next(v["VpcId"] for v in vpcs if v["CidrBlock"] == "10.0.0.0/16")
    assert by_name["local-demo-source-network-vpc"]["id"] == source
    groups = rehearsal.client("autoscaling").describe_auto_scaling_groups()["AutoScalingGroups"]
    asg_names = {r["id"] for r in by_name.values() if r["type"] == "aws:autoscaling/group:Group"}
    assert asg_names <= {g["AutoScalingGroupName"] for g in groups}
    # target-group attachments cannot be imported: recorded by a create AWS ignores
    assert all(
        by_name[name]["type"] == "aws:autoscaling/attachment:Attachment"
        for name in report["recorded"]
    )
    journal = rehearsal.kubeshift("--stack", STACK, "status", "--json").json()
    adopt = next(r for r in journal if r["step"] == "adopt")
    assert adopt["phase"] == "baseline" and adopt["status"] == "succeeded"


def test_adopting_again_changes_nothing(rehearsal: Rehearsal) -> None:
    again = rehearsal.adoption.again
    assert again.code == 0, again.stderr[-3000:]
    report = again.json()
    assert report["outcome"] == "unchanged"
    assert report["imported"] == [] and report["recorded"] == []
    assert len(report["already"]) == len(report["discovery"]["resources"])
