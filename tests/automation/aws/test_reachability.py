"""Cross-VPC reachability read from moto: routes, network ACLs and security groups,
each removed in turn and named."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from automation.aws.clients import AwsClients
from automation.aws.nodes import ClusterInstance, find_cluster_instances
from automation.aws.reachability import Need, reachability_problems
from tests.support.moto_world import MOTO_AMI

CLUSTER = "demo"
API_PORT = 6443


@dataclass(frozen=True)
class Side:
    vpc_id: str
    subnet_id: str
    table_id: str
    acl_id: str
    nodes: str
    members: str


@dataclass(frozen=True)
class World:
    ec2: Any
    source: Side
    target: Side
    peering: str

    def needs(self) -> list[Need]:
        def of(side: Side, group: str) -> tuple[ClusterInstance, ...]:
            found = find_cluster_instances(self.ec2, cluster=CLUSTER, vpc_id=side.vpc_id)
            return tuple(i for i in found if group in i.security_group_ids)

        old, new = of(self.source, self.source.nodes), of(self.target, self.target.nodes)
        members = of(self.source, self.source.members)
        return [
            Need("pods and node ports", old, new),
            Need("pods and node ports", new, old),
            Need("the API", new, members, port=API_PORT),
        ]

    def problems(self) -> list[str]:
        return reachability_problems(self.ec2, self.needs())


def _side(ec2: Any, cidr: str, subnet: str) -> Side:
    vpc = ec2.create_vpc(CidrBlock=cidr)["Vpc"]["VpcId"]
    subnet_id = ec2.create_subnet(VpcId=vpc, CidrBlock=subnet)["Subnet"]["SubnetId"]
    main = [{"Name": "vpc-id", "Values": [vpc]}, {"Name": "association.main", "Values": ["true"]}]
    table = ec2.describe_route_tables(Filters=main)["RouteTables"][0]["RouteTableId"]
    acl = ec2.describe_network_acls(
        Filters=[{"Name": "vpc-id", "Values": [vpc]}, {"Name": "default", "Values": ["true"]}]
    )["NetworkAcls"][0]["NetworkAclId"]
    nodes = ec2.create_security_group(GroupName="nodes", Description="n", VpcId=vpc)["GroupId"]
    members = ec2.create_security_group(GroupName="masters", Description="m", VpcId=vpc)["GroupId"]
    return Side(vpc, subnet_id, table, acl, nodes, members)


def _run(ec2: Any, side: Side, group: str) -> None:
    tags = [{"Key": f"kubernetes.io/cluster/{CLUSTER}", "Value": "owned"}]
    ec2.run_instances(
        ImageId=MOTO_AMI, MinCount=1, MaxCount=1, SubnetId=side.subnet_id,
        SecurityGroupIds=[group], TagSpecifications=[{"ResourceType": "instance", "Tags": tags}],
    )  # fmt: skip


def _admit(ec2: Any, group: str, source: str, port: int | None = None) -> dict[str, Any]:
    rule: dict[str, Any] = {"IpProtocol": "-1", "UserIdGroupPairs": [{"GroupId": source}]}
    if port is not None:
        rule = {**rule, "IpProtocol": "tcp", "FromPort": port, "ToPort": port}
    ec2.authorize_security_group_ingress(GroupId=group, IpPermissions=[rule])
    return rule


@pytest.fixture
def world(aws: AwsClients) -> World:
    ec2 = aws.ec2
    source = _side(ec2, "10.0.0.0/16", "10.0.1.0/24")
    target = _side(ec2, "10.20.0.0/16", "10.20.1.0/24")
    pcx = ec2.create_vpc_peering_connection(VpcId=source.vpc_id, PeerVpcId=target.vpc_id)
    peering = pcx["VpcPeeringConnection"]["VpcPeeringConnectionId"]
    ec2.accept_vpc_peering_connection(VpcPeeringConnectionId=peering)
    for side, other in ((source, "10.20.0.0/16"), (target, "10.0.0.0/16")):
        ec2.create_route(
            RouteTableId=side.table_id, DestinationCidrBlock=other, VpcPeeringConnectionId=peering
        )
    _admit(ec2, source.nodes, target.nodes)
    _admit(ec2, target.nodes, source.nodes)
    _admit(ec2, source.members, target.nodes, port=API_PORT)
    _run(ec2, source, source.nodes)
    _run(ec2, source, source.members)
    _run(ec2, target, target.nodes)
    return World(ec2, source, target, peering)


pytestmark = pytest.mark.moto


def test_a_peering_with_routes_acls_and_rules_both_ways_has_no_problem(world: World) -> None:
    assert [len(n.sources) * len(n.destinations) for n in world.needs()] == [1, 1, 1]
    assert world.problems() == []


Breakage = Callable[[World], str]


def _no_route_back(w: World) -> str:
    w.ec2.delete_route(RouteTableId=w.target.table_id, DestinationCidrBlock="10.0.0.0/16")
    return f"route table {w.target.table_id} has no route to 10.0.1.0/24"


def _no_route_there(w: World) -> str:
    w.ec2.delete_route(RouteTableId=w.source.table_id, DestinationCidrBlock="10.20.0.0/16")
    return f"route table {w.source.table_id} has no route to 10.20.1.0/24"


def _more_specific_elsewhere(w: World) -> str:
    gateway = w.ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    w.ec2.attach_internet_gateway(InternetGatewayId=gateway, VpcId=w.source.vpc_id)
    w.ec2.create_route(
        RouteTableId=w.source.table_id, DestinationCidrBlock="10.20.1.0/25", GatewayId=gateway
    )
    return f"sends 10.20.1.0/25 to {gateway}, not over the peering"


def _acl_denies(w: World) -> str:
    w.ec2.create_network_acl_entry(
        NetworkAclId=w.target.acl_id, RuleNumber=50, Protocol="-1", RuleAction="deny",
        Egress=False, CidrBlock="10.0.0.0/16",
    )  # fmt: skip
    return f"network ACL {w.target.acl_id} of subnet {w.target.subnet_id}: rule 50 denies all"


def _acl_denies_api_replies(w: World) -> str:
    w.ec2.create_network_acl_entry(
        NetworkAclId=w.source.acl_id, RuleNumber=60, Protocol="6", RuleAction="deny",
        Egress=True, CidrBlock="10.20.0.0/16", PortRange={"From": 1024, "To": 65535},
    )  # fmt: skip
    return "rule 60 denies protocol 6 ports 1024-65535"


def _ingress_revoked(w: World) -> str:
    w.ec2.revoke_security_group_ingress(
        GroupId=w.target.nodes,
        IpPermissions=[{"IpProtocol": "-1", "UserIdGroupPairs": [{"GroupId": w.source.nodes}]}],
    )
    return f"security groups {w.target.nodes} of"


def _api_port_revoked(w: World) -> str:
    rule = {
        "IpProtocol": "tcp", "FromPort": API_PORT, "ToPort": API_PORT,
        "UserIdGroupPairs": [{"GroupId": w.target.nodes}],
    }  # fmt: skip
    w.ec2.revoke_security_group_ingress(GroupId=w.source.members, IpPermissions=[rule])
    return f"admit no TCP {API_PORT} from"


def _egress_revoked(w: World) -> str:
    everything = [{"IpProtocol": "-1", "IpRanges": [{"CidrIp": "0.0.0.0/0"}]}]
    w.ec2.revoke_security_group_egress(GroupId=w.target.nodes, IpPermissions=everything)
    return "let no all traffic out to"


@pytest.mark.parametrize(
    "breakage",
    [
        _no_route_back,
        _no_route_there,
        _more_specific_elsewhere,
        _acl_denies,
        _acl_denies_api_replies,
        _ingress_revoked,
        _api_port_revoked,
        _egress_revoked,
    ],
    ids=lambda b: b.__name__.strip("_"),
)
def test_each_missing_route_acl_entry_or_rule_is_named(world: World, breakage: Breakage) -> None:
    expected = breakage(world)
    problems = world.problems()
    assert any(expected in p for p in problems), problems


def test_an_api_port_admitted_by_the_other_vpcs_range_is_enough(world: World) -> None:
    _api_port_revoked(world)
    world.ec2.authorize_security_group_ingress(
        GroupId=world.source.members,
        IpPermissions=[{
            "IpProtocol": "tcp", "FromPort": 6000, "ToPort": 7000,
            "IpRanges": [{"CidrIp": "10.20.0.0/16"}],
        }],
    )  # fmt: skip
    assert world.problems() == []


def test_all_traffic_is_stopped_by_a_deny_of_one_protocol(world: World) -> None:
    world.ec2.create_network_acl_entry(
        NetworkAclId=world.target.acl_id, RuleNumber=70, Protocol="17", RuleAction="deny",
        Egress=True, CidrBlock="10.0.1.0/24", PortRange={"From": 53, "To": 53},
    )  # fmt: skip
    problems = world.problems()
    assert any("rule 70 denies protocol 17 ports 53-53" in p for p in problems), problems
    assert not any("the API" in p and "rule 70" in p for p in problems), problems
