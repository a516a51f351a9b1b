"""Peering component: acceptance, DNS options, a route in every table on both sides."""

from __future__ import annotations

from automation.review.render import record
from components.peering import Peering, PeeringArgs
from tests.components.conftest import by_type


def test_routes_in_every_table_both_ways() -> None:
    def program() -> None:
        Peering(
            "p",
            PeeringArgs(
                requester_vpc_id="vpc-a",
                requester_cidr="10.0.0.0/16",
                requester_route_table_ids={
                    "public": "rt-a0",
                    "private-a": "rt-a1",
                    "private-b": "rt-a2",
                },
                accepter_vpc_id="vpc-b",
                accepter_cidr="10.1.0.0/16",
                accepter_route_table_ids={"public": "rt-b0", "private-a": "rt-b1"},
                name_tag="p",
            ),
        )

    resources = record(program).resources
    routes = {
        r.inputs["routeTableId"]: r.inputs["destinationCidrBlock"]
        for r in by_type(resources, "aws:ec2/route:Route")
    }
    assert routes == {
        "rt-a0": "10.1.0.0/16",
        "rt-a1": "10.1.0.0/16",
        "rt-a2": "10.1.0.0/16",
        "rt-b0": "10.0.0.0/16",
        "rt-b1": "10.0.0.0/16",
    }
    (connection,) = by_type(resources, "aws:ec2/vpcPeeringConnection:VpcPeeringConnection")
    assert connection.inputs["vpcId"] == "vpc-a"
    assert connection.inputs["peerVpcId"] == "vpc-b"
    (accepter,) = by_type(
        resources, "aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter"
    )
    assert accepter.inputs["autoAccept"] is True
    assert accepter.inputs["vpcPeeringConnectionId"] == connection.id
    # one AWS object: tags that differ would fight and every refresh would show drift
    assert accepter.inputs["tags"] == connection.inputs["tags"]
    assert all(r.parent == "p" for r in resources if r.custom)


def test_dns_resolution_can_be_left_off() -> None:
    def program() -> None:
        Peering(
            "p",
            PeeringArgs(
                "vpc-a",
                "10.0.0.0/16",
                {},
                "vpc-b",
                "10.1.0.0/16",
                {},
                name_tag="p",
                allow_remote_dns_resolution=False,
            ),
        )

    resources = record(program).resources
    assert by_type(resources, "aws:ec2/peeringConnectionOptions:PeeringConnectionOptions") == []
