"""vpc-move's AWS preflight hook against moto: passes on a sound world, refuses naming
every problem on one AWS would refuse (moto itself accepts it)."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import pytest

from automation.aws.clients import AwsAccess, AwsClients
from automation.config.clients import StaticClients
from automation.core.errors import PreconditionFailed
from automation.model.context import HookContext
from automation.model.way_back import undo_id
from automation.scenarios import build_scenario
from automation.steps.preflight import aws_preflight
from components.contract.loading import load_config, load_stack_file
from components.contract.scenarios import vpc_move as ids
from tests.support.moto_fixtures import MotoServer
from tests.support.moto_world import make_network

REPO = Path(__file__).resolve().parents[3]


def _shared_group_admitting(ec2: Any, vpc: str, source: str) -> str:
    shared = ec2.create_security_group(GroupName="shared", Description="s", VpcId=vpc)["GroupId"]
    ec2.authorize_security_group_ingress(
        GroupId=shared,
        IpPermissions=[
            {"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443,
             "UserIdGroupPairs": [{"GroupId": source}]},
        ],
    )  # fmt: skip
    return str(shared)


@pytest.mark.moto
def test_preflight_runs_before_the_new_workers_and_names_what_aws_would_refuse(
    moto: MotoServer,
) -> None:
    aws = AwsClients(AwsAccess(region=moto.region))
    old, new = make_network(aws.ec2, "10.0.0.0/16"), make_network(aws.ec2, "10.1.0.0/16")
    nodes = aws.ec2.create_security_group(GroupName="n", Description="n", VpcId=new.vpc_id)
    shared = _shared_group_admitting(aws.ec2, old.vpc_id, nodes["GroupId"])
    context = HookContext(
        stack="s",
        scenario="vpc-move",
        phase="target-workers",
        clients=StaticClients(aws=aws),
        outputs={
            "source_vpc_id": old.vpc_id,
            "target_vpc_id": new.vpc_id,
            "node_security_group_ids": [nodes["GroupId"]],
            # an adopted side's node group admits the peer's too: listed twice, read once
            "peer_admitting_security_group_ids": {"source": [shared], "target": [nodes["GroupId"]]},
        },
    )
    with pytest.raises(PreconditionFailed) as refused:  # no peering yet
        aws_preflight(context)
    assert f"references {nodes['GroupId']} in {new.vpc_id}" in str(refused.value)

    pcx = aws.ec2.create_vpc_peering_connection(VpcId=old.vpc_id, PeerVpcId=new.vpc_id)
    peering = pcx["VpcPeeringConnection"]["VpcPeeringConnectionId"]
    aws.ec2.accept_vpc_peering_connection(VpcPeeringConnectionId=peering)
    passed = aws_preflight(context)
    assert not passed.changed and passed.message.startswith("Preflight passed")

    example = load_config(load_stack_file(REPO / "stacks" / "Pulumi.vpc-move-small.yaml"))
    (workers,) = [p for p in build_scenario(example).phases if p.id == ids.TARGET_WORKERS]
    assert [s.name for s in workers.before] == ["aws-preflight"]


def _fixed_address_world(
    moto: MotoServer, stack: str, phase: str, vpc_output: str, subnet_cidr: str
) -> tuple[AwsClients, Any, str, str, HookContext]:
    """``stack``'s config, a VPC with one private subnet in moto, and a hook context for
    ``phase`` whose outputs name that VPC as ``vpc_output``."""
    aws = AwsClients(AwsAccess(region=moto.region))
    config = load_config(load_stack_file(REPO / "stacks" / f"Pulumi.{stack}.yaml"))
    vpc_cidr = str(ipaddress.ip_network(subnet_cidr).supernet(new_prefix=16))
    vpc = aws.ec2.create_vpc(CidrBlock=vpc_cidr)["Vpc"]["VpcId"]
    subnet = aws.ec2.create_subnet(VpcId=vpc, CidrBlock=subnet_cidr)["Subnet"]["SubnetId"]
    context = HookContext(
        stack="s",
        scenario=config.scenario,
        phase=phase,
        clients=StaticClients(aws=aws),
        config=config,
        outputs={vpc_output: vpc},
    )
    return aws, config, vpc, subnet, context


@pytest.mark.moto
def test_a_moving_members_address_a_worker_took_is_refused_before_the_engine(
    moto: MotoServer,
) -> None:
    """Workers launched into the target subnets hold addresses anywhere in them: the
    member's fixed one is checked free before its phase's update."""
    from automation.steps.preflight import member_address_free

    aws, config, vpc, subnet, context = _fixed_address_world(
        moto, "vpc-move-small", ids.control_plane_phase(1), "target_vpc_id", "10.20.64.0/19"
    )
    passed = member_address_free(context)
    assert passed.message == f"member 1's address 10.20.64.10 is free in {vpc}"
    worker = aws.ec2.create_network_interface(SubnetId=subnet, PrivateIpAddress="10.20.64.10")
    with pytest.raises(PreconditionFailed) as refused:
        member_address_free(context)
    holder = worker["NetworkInterface"]["NetworkInterfaceId"]
    assert f"10.20.64.10 (for etcd member 1 of demo) is held by {holder}" in str(refused.value)
    assert "control_plane.host_index" in str(refused.value)

    (phase,) = [p for p in build_scenario(config).phases if p.id == ids.control_plane_phase(1)]
    assert phase.before[0].name == "member-address-free"


@pytest.mark.moto
def test_taking_a_move_back_checks_the_members_source_address(moto: MotoServer) -> None:
    """Going back, the member returns to its source address: that one is checked free,
    in the source VPC."""
    from automation.steps.etcd import addresses
    from automation.steps.preflight import member_address_free

    phase = undo_id(ids.control_plane_phase(1))
    config = load_config(load_stack_file(REPO / "stacks" / "Pulumi.vpc-move-small.yaml"))
    probe = HookContext("s", config.scenario, phase, StaticClients(), config=config)
    source, _ = addresses(probe, 1)
    subnet_cidr = str(ipaddress.ip_network(f"{source}/19", strict=False))
    aws, _, vpc, subnet, context = _fixed_address_world(
        moto, "vpc-move-small", phase, "source_vpc_id", subnet_cidr
    )
    passed = member_address_free(context)
    assert passed.message == f"member 1's address {source} is free in {vpc}"
    aws.ec2.create_network_interface(SubnetId=subnet, PrivateIpAddress=source)
    with pytest.raises(PreconditionFailed, match="an instance in the source subnet took"):
        member_address_free(context)


@pytest.mark.moto
def test_a_mirror_members_address_a_primary_node_holds_is_refused(moto: MotoServer) -> None:
    from automation.steps.mirror_addresses import mirror_addresses_free

    aws, _, _, subnet, context = _fixed_address_world(
        moto, "cni-swap-example", "mirror-cluster", "source_vpc_id", "10.30.32.0/19"
    )
    free = mirror_addresses_free(context)
    assert free.details == {"addresses": ["10.30.112.12", "10.30.48.10", "10.30.80.11"]}
    aws.ec2.create_network_interface(SubnetId=subnet, PrivateIpAddress="10.30.48.10")
    with pytest.raises(PreconditionFailed) as refused:
        mirror_addresses_free(context)
    assert "10.30.48.10 (for etcd member 1 of shop-euw1) is held by eni-" in str(refused.value)
    assert "migration.mirror.host_index" in str(refused.value)
