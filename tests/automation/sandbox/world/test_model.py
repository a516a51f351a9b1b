"""The cluster kops was asked for, as the world reads it from a stack file."""

from __future__ import annotations

from pathlib import Path

from automation.sandbox.world.model import KopsCluster, kops_cluster
from components.contract.loading import load_config, load_stack_file

STACKS = Path(__file__).resolve().parents[4] / "stacks"


def _cluster(stack: str) -> KopsCluster:
    return kops_cluster(load_config(load_stack_file(STACKS / f"Pulumi.{stack}.yaml")))


def test_a_pool_of_one_group_per_capacity_is_one_instance_group_over_zones_and_types() -> None:
    groups = _cluster("local").worker_groups
    assert [(g.name, g.zones, g.instance_types) for g in groups] == [
        ("general-on-demand", ("us-west-2a", "us-west-2b"), ("m5.large", "m5a.large")),
        ("general-spot", ("us-west-2a", "us-west-2b"), ("m5.large", "m5a.large")),
    ]


def test_a_group_per_type_zone_and_capacity_is_an_instance_group_of_each() -> None:
    groups = _cluster("vpc-move-example").worker_groups
    assert len(groups) == 72  # the seed's 72 groups, each an instance group of kops's
    assert len({g.name for g in groups}) == 72
    assert all(len(g.zones) == 1 and len(g.instance_types) == 1 for g in groups)
    memory = [g for g in groups if g.pool.name == "memory" and g.capacity == "spot"]
    assert memory[0].name == "memory-r5-2xlarge-us-west-2a-spot"


def test_members_rotate_over_the_zones_at_their_fixed_addresses() -> None:
    members = _cluster("cni-swap-example").members
    assert [(m.instance_group, m.address) for m in members] == [
        ("master-eu-west-1a-1", "10.30.32.10"),
        ("master-eu-west-1b-2", "10.30.64.11"),
        ("master-eu-west-1c-3", "10.30.96.12"),
    ]
