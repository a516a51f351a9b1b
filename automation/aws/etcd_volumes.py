"""Where an etcd-manager member's volumes are: which instance holds each, and where it runs.

kops's etcd-manager claims a member's volumes by tag in its instance's AZ
(``k8s.io/etcd/main`` and ``k8s.io/etcd/events``, valued ``<member>/<every member>``;
kops's ``pkg/model/components/etcdmanager``), attaching them itself. After a member's
instance is replaced, its volumes must be attached to the new one before its etcd can
come back under its ID: this reads that from EC2.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from automation.aws.nodes import LEGACY_CLUSTER_TAG, cluster_tag_key
from automation.core.errors import from_client_error

if TYPE_CHECKING:
    from mypy_boto3_ec2 import EC2Client
    from mypy_boto3_ec2.type_defs import VolumeTypeDef

MAIN_VOLUME_TAG = "k8s.io/etcd/main"
EVENTS_VOLUME_TAG = "k8s.io/etcd/events"
VOLUME_TAGS = {"main": MAIN_VOLUME_TAG, "events": EVENTS_VOLUME_TAG}
"""etcd cluster -> the tag kops gives its members' volumes."""


@dataclass(frozen=True)
class MemberVolume:
    """One of a member's etcd volumes and the instance it is attached to, if any."""

    volume_id: str
    etcd: str
    """``main`` or ``events``."""
    zone: str
    holder: str | None
    holder_state: str = ""
    holder_address: str | None = None


def member_volumes(ec2: EC2Client, *, cluster: str, member: str) -> tuple[MemberVolume, ...]:
    """The volumes tagged for etcd-manager's ``member`` of ``cluster`` (either tag style),
    with their holders' states and private addresses."""
    found: list[tuple[str, str, str, str | None]] = []
    for etcd, tag in VOLUME_TAGS.items():
        for volume in _volumes(ec2, tag):
            tags = {t["Key"]: t["Value"] for t in volume.get("Tags", [])}
            ours = tags.get(LEGACY_CLUSTER_TAG) == cluster or cluster_tag_key(cluster) in tags
            if not ours or tags.get(tag, "").split("/")[0] != member:
                continue
            holders = [a["InstanceId"] for a in volume.get("Attachments", []) if a.get("State")
                       in ("attaching", "attached")]  # fmt: skip
            found.append(
                (volume["VolumeId"], etcd, volume["AvailabilityZone"], next(iter(holders), None))
            )
    instances = _instances(ec2, {h for *_, h in found if h})
    return tuple(
        MemberVolume(
            volume_id, etcd, zone, holder,
            *(instances.get(holder, ("", None)) if holder else ("", None)),
        )
        for volume_id, etcd, zone, holder in found
    )  # fmt: skip


def _volumes(ec2: EC2Client, tag: str) -> Iterable[VolumeTypeDef]:
    try:
        for page in ec2.get_paginator("describe_volumes").paginate(
            Filters=[{"Name": "tag-key", "Values": [tag]}]
        ):
            yield from page.get("Volumes", [])
    except ClientError as exc:
        raise from_client_error(exc, f"list volumes tagged {tag}") from exc


def _instances(ec2: EC2Client, ids: set[str]) -> dict[str, tuple[str, str | None]]:
    """Instance ID -> (state, private address), for those EC2 still knows."""
    known: dict[str, tuple[str, str | None]] = {}
    for instance_id in sorted(ids):
        try:
            reply = ec2.describe_instances(InstanceIds=[instance_id])
        except ClientError as exc:
            if "InvalidInstanceID" in str(exc):
                continue  # gone: the volume's attachment record outlived it
            raise from_client_error(exc, f"describe instance {instance_id}") from exc
        for reservation in reply.get("Reservations", []):
            for raw in reservation.get("Instances", []):
                known[raw["InstanceId"]] = (
                    raw.get("State", {}).get("Name", ""),
                    raw.get("PrivateIpAddress"),
                )
    return known


def member_at(ec2: EC2Client, address: str) -> str | None:
    """etcd-manager's name of the member the running instance at private ``address``
    runs: the one whose main etcd volume it holds; None where it holds none."""
    try:
        reply = ec2.describe_instances(Filters=[
            {"Name": "private-ip-address", "Values": [address]},
            {"Name": "instance-state-name", "Values": ["running"]},
        ])  # fmt: skip
        ids = [i["InstanceId"] for r in reply.get("Reservations", []) for i in r["Instances"]]
        if not ids:
            return None
        volumes = ec2.describe_volumes(Filters=[
            {"Name": "attachment.instance-id", "Values": ids},
            {"Name": "tag-key", "Values": [MAIN_VOLUME_TAG]},
        ])["Volumes"]  # fmt: skip
    except ClientError as exc:
        raise from_client_error(exc, f"find the etcd member at {address}") from exc
    for volume in volumes:
        tags = {t["Key"]: t["Value"] for t in volume.get("Tags", [])}
        return tags[MAIN_VOLUME_TAG].split("/")[0]
    return None
