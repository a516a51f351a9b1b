"""Fixed addresses kept for their owners: explicit subnet CIDR reservations.

A member's interface sits at a fixed address (DNS and etcd peers name it), but the
interface is made only when the member moves, phases after other instances have
launched into the same subnet. AWS hands a launching instance any free address of its
subnet, so a worker could take the member's address first, and the move would then
fail on ``InvalidIPAddress.InUse``. An *explicit* reservation sets the address aside:
"AWS does not use the IP addresses. You manually assign the IP addresses" (Amazon VPC
User Guide, *Subnet CIDR reservations*), which is what the member's interface does.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws


@dataclass(frozen=True)
class KeptAddress:
    """One address to keep in one subnet, and whom for."""

    key: str
    """Logical-name part, unique within the caller (e.g. ``member-2``)."""
    subnet_id: pulumi.Input[str]
    address: str
    owner: str
    """Who the address is kept for, as the reservation's description says it."""


def keep_addresses(
    name: str, kept: list[KeptAddress], opts: pulumi.ResourceOptions | None = None
) -> dict[str, aws.ec2.SubnetCidrReservation]:
    """An explicit ``/32`` reservation per address, named ``<name>-<key>``, by key.

    Every argument of ``aws_ec2_subnet_cidr_reservation`` is ForceNew (no update in
    ``vpc_subnet_cidr_reservation.go``): moving an address replaces its reservation.
    """
    return {
        k.key: aws.ec2.SubnetCidrReservation(
            f"{name}-{k.key}",
            subnet_id=k.subnet_id,
            cidr_block=f"{k.address}/32",
            reservation_type="explicit",
            description=k.owner,
            opts=opts,
        )
        for k in kept
    }
