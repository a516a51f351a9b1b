"""The source/destination check of a cluster's instances, which native pod routing needs off.

With the check on, EC2 drops every packet whose destination is not the instance's own
address — a pod's, routed to the node by the VPC route table, included. New workers
switch it off at boot (their role allows it on the cluster's own instances); this turns
it off on the instances that were running before, and reports any still on — and, going
back to the overlay, on again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from botocore.exceptions import ClientError

from automation.aws.nodes import ClusterInstance
from automation.core.errors import from_client_error
from automation.core.waiting import Pending

if TYPE_CHECKING:
    from mypy_boto3_ec2 import EC2Client


@dataclass(frozen=True)
class SourceDestChange:
    """What ``switch_off``/``switch_on`` did, or in a dry run would do."""

    switched: tuple[str, ...]
    already: int
    """Instances that had the check as asked already."""
    dry_run: bool
    to: Literal["on", "off"] = "off"

    @property
    def message(self) -> str:
        if not self.switched:
            return f"source/destination check already {self.to} on all {self.already} instances"
        verb = "would switch" if self.dry_run else "switched"
        shown = ", ".join(self.switched[:5]) + (" ..." if len(self.switched) > 5 else "")
        return (
            f"{verb} the source/destination check {self.to} on {len(self.switched)} "
            f"instance(s) ({shown}); {self.already} already {self.to}"
        )


def _switch(
    ec2: EC2Client, instances: Sequence[ClusterInstance], to: Literal["on", "off"], dry_run: bool
) -> SourceDestChange:
    value = to == "on"
    pending = [i.instance_id for i in instances if i.source_dest_check != value]
    if not dry_run:
        for instance_id in pending:
            try:
                ec2.modify_instance_attribute(
                    InstanceId=instance_id, SourceDestCheck={"Value": value}
                )
            except ClientError as exc:
                raise from_client_error(
                    exc, f"switch the source/destination check {to} on {instance_id}"
                ) from exc
    return SourceDestChange(tuple(pending), len(instances) - len(pending), dry_run, to)


def switch_off(
    ec2: EC2Client, instances: Sequence[ClusterInstance], *, dry_run: bool = False
) -> SourceDestChange:
    """Turn the check off where it is on; instances already off are left alone."""
    return _switch(ec2, instances, "off", dry_run)


def switch_on(
    ec2: EC2Client, instances: Sequence[ClusterInstance], *, dry_run: bool = False
) -> SourceDestChange:
    """Going back to the overlay: turn the check on again where it is off."""
    return _switch(ec2, instances, "on", dry_run)


def checks_off(instances: Sequence[ClusterInstance]) -> Pending:
    """Every instance has its source/destination check off; the others are named."""
    on = [f"{i.instance_id}: source/destination check on" for i in instances if i.source_dest_check]
    return Pending.of(on, f"{len(instances) - len(on)}/{len(instances)} instances with it off")


def checks_on(instances: Sequence[ClusterInstance]) -> Pending:
    """Every instance has its source/destination check on (EC2's default); the others
    are named."""
    off = [
        f"{i.instance_id}: source/destination check off"
        for i in instances
        if not i.source_dest_check
    ]
    return Pending.of(off, f"{len(instances) - len(off)}/{len(instances)} instances with it on")
