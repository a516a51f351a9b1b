"""Network component: subnets per AZ, route tables, gateways behind switches."""

from __future__ import annotations

from collections import Counter

import pytest

from automation.review.render import record
from components.network import Network, NetworkArgs

AZS = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]


def _args(**overrides: object) -> NetworkArgs:
    base: dict[str, object] = dict(
        cidr="10.0.0.0/16",
        azs=AZS,
        public_subnet_cidrs=["10.0.0.0/20", "10.0.16.0/20", "10.0.32.0/20"],
        private_subnet_cidrs=["10.0.64.0/19", "10.0.96.0/19", "10.0.128.0/19"],
        cluster_name="prod",
        name_tag="prod-source",
    )
    base.update(overrides)
    return NetworkArgs(**base)  # type: ignore[arg-type]


def _types(resources: list) -> Counter[str]:
    return Counter(r.type.rsplit(":", 1)[-1] for r in resources)


def test_full_network() -> None:
    out: dict[str, object] = {}

    def program() -> dict[str, object]:
        net = Network("prod-source", _args())
        out["keys"] = sorted(net.route_table_ids)
        return {"rts": net.route_table_ids}

    rendering = record(program)
    counts = _types(rendering.resources)
    assert counts == Counter(
        Network=1,
        Vpc=1,
        Subnet=6,
        RouteTable=4,
        RouteTableAssociation=6,
        InternetGateway=1,
        Route=4,
        Eip=3,
        NatGateway=3,
    )
    assert out["keys"] == [
        "private-eu-west-1a",
        "private-eu-west-1b",
        "private-eu-west-1c",
        "public",
    ]
    by_name = {r.name: r for r in rendering.resources}
    private_a = by_name["prod-source-private-eu-west-1a"].inputs
    assert private_a["cidrBlock"] == "10.0.64.0/19"
    assert private_a["availabilityZone"] == "eu-west-1a"
    assert private_a["tags"]["kubernetes.io/role/internal-elb"] == "1"
    assert all(
        r.parent == "prod-source"
        for r in rendering.resources
        if r.type != "kubeshift:network:Network"
    )
    # Every private table routes its default to the NAT of its own AZ.
    assert by_name["prod-source-private-default-eu-west-1b"].inputs["natGatewayId"] == (
        "prod-source-nat-eu-west-1b-id"
    )


@pytest.mark.parametrize(
    ("switches", "expected"),
    [
        ({"single_nat_gateway": True}, {"NatGateway": 1, "Eip": 1, "Route": 4}),
        ({"enable_nat_gateway": False}, {"NatGateway": 0, "Eip": 0, "Route": 1}),
        ({"enable_internet_gateway": False}, {"InternetGateway": 0, "NatGateway": 0, "Route": 0}),
    ],
    ids=["single-nat", "no-nat", "no-igw"],
)
def test_gateway_switches(switches: dict[str, bool], expected: dict[str, int]) -> None:
    rendering = record(lambda: Network("n", _args(**switches)))
    counts = _types(rendering.resources)
    assert {kind: counts[kind] for kind in expected} == expected


def test_a_shared_node_table_is_the_only_table_tagged_and_is_tagged_first() -> None:
    """The route controller writes to the one table tagged for the cluster. The other
    tables wait for the shared one before losing their tag, so no other table is ever
    the only tagged one, and none ever gets a pod route."""
    rendering = record(lambda: Network("prod-source", _args(shared_node_route_table=True)))
    tables = [r for r in rendering.resources if r.type == "aws:ec2/routeTable:RouteTable"]
    tagged = [t.name for t in tables if "kubernetes.io/cluster/prod" in t.inputs["tags"]]
    assert tagged == ["prod-source-private-rt"]
    others = [t for t in tables if t.name not in tagged]
    assert len(others) == 4
    for table in others:
        assert "prod-source-private-rt" in table.options.get("dependsOn", []), table.name
    associations = [
        r.inputs["routeTableId"]
        for r in rendering.resources
        if r.type == "aws:ec2/routeTableAssociation:RouteTableAssociation" and "private" in r.name
    ]
    assert len(associations) == 3 and len(set(associations)) == 1
