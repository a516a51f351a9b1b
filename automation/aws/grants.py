"""Security-group grants on a migration's dependencies, added and removed idempotently.

A mirror cluster (seed 000) or the new VPC's nodes (seed 001) must reach what the old
nodes reached — a database, a cache — whose security groups admit the old nodes' SG
by reference. These functions add the extra ingress rule before traffic moves and
remove it at teardown. Each checks the group first and also treats AWS's
``InvalidPermission.Duplicate``/``NotFound`` as "already so", so a rerun or a race
changes nothing. Dry runs ask EC2 itself (``DryRun=True``), which also proves the
caller holds the permission.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict, Field, model_validator

from automation.core.errors import from_client_error

if TYPE_CHECKING:
    from mypy_boto3_ec2 import EC2Client
    from mypy_boto3_ec2.type_defs import IpPermissionTypeDef, UserIdGroupPairTypeDef


class SgGrant(BaseModel):
    """Ingress on ``group_id`` from members of ``source_group_id``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    group_id: str = Field(description="The dependency's security group, e.g. the database's.")
    source_group_id: str = Field(description="The group to admit, e.g. the new nodes' SG.")
    protocol: str = Field(default="tcp", description="tcp, udp, icmp or -1 (all).")
    from_port: int | None = None
    to_port: int | None = None
    source_owner_id: str | None = Field(default=None, description="Account of the source SG.")
    description: str = "kubeshift migration grant"

    @model_validator(mode="after")
    def _ports(self) -> SgGrant:
        if self.protocol != "-1" and self.from_port is None:
            raise ValueError(f"protocol {self.protocol} needs from_port")
        return self

    @property
    def ports(self) -> tuple[int | None, int | None]:
        if self.protocol == "-1":
            return (None, None)
        return (self.from_port, self.to_port if self.to_port is not None else self.from_port)

    def permission(self, with_description: bool = True) -> IpPermissionTypeDef:
        pair: UserIdGroupPairTypeDef = {"GroupId": self.source_group_id}
        if self.source_owner_id:
            pair["UserId"] = self.source_owner_id
        if with_description:
            pair["Description"] = self.description
        perm: IpPermissionTypeDef = {"IpProtocol": self.protocol, "UserIdGroupPairs": [pair]}
        low, high = self.ports
        if low is not None and high is not None:  # ``ports`` sets both or neither
            perm["FromPort"] = low
            perm["ToPort"] = high
        return perm

    def describe(self) -> str:
        low, high = self.ports
        ports = "all" if low is None else (f"{low}" if low == high else f"{low}-{high}")
        return f"{self.group_id} <- {self.source_group_id} {self.protocol}/{ports}"


GrantAction = Literal["added", "removed", "present", "absent", "would-add", "would-remove"]


@dataclass(frozen=True)
class GrantResult:
    grant: SgGrant
    action: GrantAction

    @property
    def changed(self) -> bool:
        return self.action in {"added", "removed"}

    @property
    def message(self) -> str:
        return f"{self.action}: {self.grant.describe()}"


def existing_pair(ec2: EC2Client, grant: SgGrant) -> UserIdGroupPairTypeDef | None:
    """The group's rule entry admitting the source on exactly these ports, if any."""
    try:
        groups = ec2.describe_security_groups(GroupIds=[grant.group_id])["SecurityGroups"]
    except ClientError as exc:
        raise from_client_error(exc, f"read security group {grant.group_id}") from exc
    low, high = grant.ports
    for perm in groups[0].get("IpPermissions", []) if groups else []:
        if perm.get("IpProtocol") != grant.protocol:
            continue
        if grant.protocol != "-1" and (perm.get("FromPort"), perm.get("ToPort")) != (low, high):
            continue
        for pair in perm.get("UserIdGroupPairs", []):
            if pair.get("GroupId") == grant.source_group_id:
                return pair.copy()
    return None


def grant_present(ec2: EC2Client, grant: SgGrant) -> bool:
    """Whether the group already admits the source on exactly these ports."""
    return existing_pair(ec2, grant) is not None


def _apply(
    call: Callable[..., object],
    grant: SgGrant,
    perms: list[IpPermissionTypeDef],
    *,
    dry_run: bool,
    verb: str,
    already_code: str,
    done: GrantAction,
    already: GrantAction,
    would: GrantAction,
) -> GrantResult:
    """Call authorize/revoke (or its ``DryRun``); AWS's "already so" code means no change."""
    try:
        call(GroupId=grant.group_id, IpPermissions=perms, DryRun=dry_run)
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code")
        if dry_run and code == "DryRunOperation":
            return GrantResult(grant, would)
        if code == already_code:
            return GrantResult(grant, already)
        suffix = " (dry run)" if dry_run else ""
        raise from_client_error(exc, f"{verb} grant {grant.describe()}{suffix}") from exc
    return GrantResult(grant, would if dry_run else done)


def add_grant(ec2: EC2Client, grant: SgGrant, *, dry_run: bool = False) -> GrantResult:
    """Authorize the ingress rule unless it is there already."""
    if existing_pair(ec2, grant) is not None:
        return GrantResult(grant, "present")
    return _apply(
        ec2.authorize_security_group_ingress,
        grant,
        [grant.permission()],
        dry_run=dry_run,
        verb="add",
        already_code="InvalidPermission.Duplicate",
        done="added",
        already="present",
        would="would-add",
    )


def remove_grant(ec2: EC2Client, grant: SgGrant, *, dry_run: bool = False) -> GrantResult:
    """Revoke the ingress rule if it is there."""
    pair = existing_pair(ec2, grant)
    if pair is None:
        return GrantResult(grant, "absent")
    # AWS ignores the description when matching; moto needs the one the rule has.
    perm = grant.permission(with_description=False)
    if pair.get("Description"):
        perm["UserIdGroupPairs"][0]["Description"] = pair["Description"]
    return _apply(
        ec2.revoke_security_group_ingress,
        grant,
        [perm],
        dry_run=dry_run,
        verb="remove",
        already_code="InvalidPermission.NotFound",
        done="removed",
        already="absent",
        would="would-remove",
    )


def add_grants(
    ec2: EC2Client, grants: Sequence[SgGrant], *, dry_run: bool = False
) -> tuple[GrantResult, ...]:
    return tuple(add_grant(ec2, g, dry_run=dry_run) for g in grants)


def remove_grants(
    ec2: EC2Client, grants: Sequence[SgGrant], *, dry_run: bool = False
) -> tuple[GrantResult, ...]:
    return tuple(remove_grant(ec2, g, dry_run=dry_run) for g in grants)
