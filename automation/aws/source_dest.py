"""The source/destination check of a cluster's instances, which native pod routing needs off.

With the check on, EC2 drops every packet whose destination is not the instance's own
address — a pod's, routed to the node by the VPC route table, included. New workers
switch it off at boot (their role allows it on the cluster's own instances); this turns
it off on the instances that were running before, and reports any still on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from automation.aws.nodes import ClusterInstance
from automation.core.errors import from_client_error
from automation.core.waiting import Pending

if TYPE_CHECKING:
    from mypy_boto3_ec2 import EC2Client


@dataclass(frozen=True)
class SourceDestChange:
    """What ``switch_off`` did, or in a dry run would do."""

    switched: tuple[str, ...]
    already_off: int
    dry_run: bool

    @property
    def message(self) -> str:
        if not self.switched:
            return f"source/destination check already off on all {self.already_off} instances"
        verb = "would switch" if self.dry_run else "switched"
        shown = ", ".join(self.switched[:5]) + (" ..." if len(self.switched) > 5 else "")
        return (
            f"{verb} the source/destination check off on {len(self.switched)} instance(s) "
            f"({shown}); {self.already_off} already off"
        )


def switch_off(
    ec2: EC2Client, instances: Sequence[ClusterInstance], *, dry_run: bool = False
) -> SourceDestChange:
    """Turn the check off where it is on; instances already off are left alone."""
    on = [i.instance_id for i in instances if i.source_dest_check]
    if not dry_run:
        for instance_id in on:
            try:
                ec2.modify_instance_attribute(
                    InstanceId=instance_id, SourceDestCheck={"Value": False}
                )
            except ClientError as exc:
                raise from_client_error(
                    exc, f"switch the source/destination check off on {instance_id}"
                ) from exc
    return SourceDestChange(tuple(on), len(instances) - len(on), dry_run)


def checks_off(instances: Sequence[ClusterInstance]) -> Pending:
    """Every instance has its source/destination check off; the others are named."""
    on = [f"{i.instance_id}: source/destination check on" for i in instances if i.source_dest_check]
    return Pending.of(on, f"{len(instances) - len(on)}/{len(instances)} instances with it off")
