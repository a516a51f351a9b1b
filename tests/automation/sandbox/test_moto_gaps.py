"""The sandbox's moto, patched where it differs from AWS in a way a migration notices."""

from __future__ import annotations

import pytest

from automation.sandbox.moto_gaps import reserve_interface_addresses
from tests.support.moto_fixtures import MotoServer


def _instance_addresses(moto: MotoServer, fixed: str) -> tuple[set[str], str]:
    ec2 = moto.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.9.1.0/24")["Subnet"]["SubnetId"]
    member = ec2.create_network_interface(SubnetId=subnet, PrivateIpAddress=fixed)
    launched = ec2.run_instances(
        ImageId="ami-12c6146b", MinCount=12, MaxCount=12, SubnetId=subnet
    )["Instances"]
    return {i["PrivateIpAddress"] for i in launched}, member["NetworkInterface"]["PrivateIpAddress"]


def test_no_instance_is_given_an_interfaces_fixed_address(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.models.elastic_network_interfaces import NetworkInterface

    monkeypatch.setattr(NetworkInterface, "__init__", NetworkInterface.__init__)  # undone after
    reserve_interface_addresses()
    reserve_interface_addresses()  # idempotent: one wrapper
    addresses, fixed = _instance_addresses(moto, "10.9.1.10")
    assert fixed == "10.9.1.10"
    assert len(addresses) == 12 and fixed not in addresses


def test_unpatched_moto_hands_the_fixed_address_out(moto: MotoServer) -> None:
    """The gap itself: should moto close it, the patch can go."""
    addresses, fixed = _instance_addresses(moto, "10.9.1.10")
    assert fixed in addresses
