"""``aws:ebs`` volumes (``aws:ebs/volume:Volume``).

``force_new`` is what the Terraform AWS provider (``internal/service/ec2/ebs_volume.go``)
marks ``ForceNew``; size, type, IOPS and throughput change in place with ModifyVolume.
Waits follow the Terraform provider's (its create, update and delete timeouts), so the
calls are right for AWS too; against moto every wait ends at its first poll.
"""

from __future__ import annotations

from botocore.exceptions import ClientError

from automation.sandbox.provider.diffing import contains_unknown
from automation.sandbox.provider.model import (
    MOTO_LACKS,
    REGION,
    Aws,
    ForceNew,
    NotFound,
    Props,
    Request,
    ResourceType,
    register,
)
from automation.sandbox.provider.types.ec2_calls import (
    SRC,
    Raw,
    account_id,
    client_token,
    declared_change,
    ec2_arn,
    integer,
    is_gone,
    one,
    retag,
    retry,
    rfc3339,
    some,
    tag_outputs,
    tag_spec,
    until,
    until_gone,
)

_EBS = SRC + "ebs_volume.go"
_VOLUME_CREATE = 5 * 60.0  # the Terraform provider's timeouts
_VOLUME_UPDATE = 5 * 60.0
_VOLUME_DELETE = 10 * 60.0
_PROVISIONED = ("io1", "io2")


def _find_volume(aws: Aws, id_: str) -> Raw:
    volume = one(lambda: aws.ec2.describe_volumes(VolumeIds=[id_])["Volumes"])
    if volume.get("State") == "deleted":
        raise NotFound(f"{id_} is deleted")
    return volume


@register
class Volume(ResourceType):
    """``aws:ebs/volume:Volume`` — ``ebs_volume.go``: ``availability_zone``,
    ``encrypted``, ``kms_key_id``, ``multi_attach_enabled``, ``outpost_arn`` and
    ``snapshot_id`` ForceNew; ``size``, ``type``, ``iops`` and ``throughput`` change with
    ModifyVolume; tags in place. ``finalSnapshot`` snapshots the volume before deleting."""

    token = "aws:ebs/volume:Volume"
    not_read = {
        "outpostArn": "moto has no Outposts, so no sandbox volume has one",
        "volumeInitializationRate": MOTO_LACKS,
        "region": REGION,
    }
    force_new = (
        ForceNew("availabilityZone", _EBS + ": availability_zone ForceNew"),
        ForceNew("encrypted", _EBS + ": encrypted ForceNew"),
        ForceNew("kmsKeyId", _EBS + ": kms_key_id ForceNew"),
        ForceNew("multiAttachEnabled", _EBS + ": multi_attach_enabled ForceNew"),
        ForceNew("outpostArn", _EBS + ": outpost_arn ForceNew"),
        ForceNew("snapshotId", _EBS + ": snapshot_id ForceNew"),
    )
    computed = (
        "arn",
        "createTime",
        "encrypted",
        "iops",
        "kmsKeyId",
        "size",
        "snapshotId",
        "tagsAll",
        "throughput",
        "type",
    )
    write_only = ("finalSnapshot",)
    optional_computed = (
        "encrypted", "iops", "kmsKeyId", "size", "snapshotId", "throughput", "type"
    )  # fmt: skip
    defaults = {"finalSnapshot": False, "multiAttachEnabled": False}

    def check(self, req: Request, news: Props) -> Props:
        checked = {"finalSnapshot": False, **news}
        if contains_unknown(news):
            return checked
        # resourceEBSVolumeCustomizeDiff's rules, and AtLeastOneOf(size, snapshot_id).
        kind, iops, throughput = news.get("type"), news.get("iops"), news.get("throughput")
        if not news.get("size") and not news.get("snapshotId"):
            raise ValueError("set size or snapshotId")
        if kind in _PROVISIONED and not iops:
            raise ValueError(f"iops must be set when type is {kind}")
        if iops and kind not in (*_PROVISIONED, "gp3"):
            raise ValueError(f"iops must not be set when type is {kind or 'gp2 (the default)'}")
        if news.get("multiAttachEnabled") and kind not in _PROVISIONED:
            raise ValueError("multiAttachEnabled needs type io1 or io2")
        if throughput and (kind != "gp3" or not 125 <= throughput <= 1000):
            raise ValueError("throughput (125-1000) is only for type gp3")
        return checked

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        args = some(
            {
                "AvailabilityZone": inputs["availabilityZone"],
                "Encrypted": inputs.get("encrypted"),
                "Iops": integer(inputs.get("iops")) or None,
                "KmsKeyId": inputs.get("kmsKeyId"),
                "MultiAttachEnabled": inputs.get("multiAttachEnabled") or None,
                "OutpostArn": inputs.get("outpostArn"),
                "Size": integer(inputs.get("size")) or None,
                "SnapshotId": inputs.get("snapshotId"),
                "Throughput": integer(inputs.get("throughput")) or None,
                "VolumeType": inputs.get("type"),
            }
        )
        created = aws.ec2.create_volume(
            ClientToken=client_token(), **args, **tag_spec("volume", inputs.get("tags"))
        )
        id_ = created["VolumeId"]
        until(lambda: _find_volume(aws, id_), lambda v: v["State"] == "available", _VOLUME_CREATE)
        return id_, self.read(aws, req, id_, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        volume = _find_volume(aws, id_)
        return some(
            {
                "arn": ec2_arn(aws, account_id(aws), f"volume/{id_}"),
                "availabilityZone": volume["AvailabilityZone"],
                "createTime": rfc3339(volume.get("CreateTime")),
                "encrypted": bool(volume.get("Encrypted")),
                "finalSnapshot": bool(state.get("finalSnapshot")),
                "iops": volume.get("Iops"),
                "kmsKeyId": volume.get("KmsKeyId"),
                "multiAttachEnabled": bool(volume.get("MultiAttachEnabled")),
                "outpostArn": volume.get("OutpostArn"),
                "size": volume.get("Size"),
                "snapshotId": volume.get("SnapshotId"),
                "throughput": volume.get("Throughput"),
                "type": volume.get("VolumeType"),
                **tag_outputs(volume.get("Tags")),
            }
        )

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        if any(declared_change(olds, news, p) for p in ("iops", "size", "throughput", "type")):
            kind = news.get("type") or olds.get("type")
            iops = integer(news.get("iops") or olds.get("iops"))
            throughput = integer(news.get("throughput") or olds.get("throughput"))
            args: Raw = {"VolumeId": id_}
            if declared_change(olds, news, "iops") and iops:
                args["Iops"] = iops
            if declared_change(olds, news, "size"):
                args["Size"] = integer(news["size"])
            if throughput and kind == "gp3":  # AWS does not keep it across a modification
                args["Throughput"] = throughput
            if declared_change(olds, news, "type"):
                args["VolumeType"] = kind
                if kind in (*_PROVISIONED, "gp3") and iops:  # else AWS resets it (3000)
                    args["Iops"] = iops
            aws.ec2.modify_volume(**args)
            until(
                lambda: _find_volume(aws, id_),
                lambda v: v["State"] in ("available", "in-use"),
                _VOLUME_UPDATE,
            )
        retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        ec2 = aws.ec2
        try:
            if state.get("finalSnapshot"):
                snapshot = retry(
                    lambda: ec2.create_snapshot(
                        VolumeId=id_, **tag_spec("snapshot", state.get("tagsAll"))
                    ),
                    ("SnapshotCreationPerVolumeRateExceeded",),
                    60.0,
                )
                ec2.get_waiter("snapshot_completed").wait(
                    SnapshotIds=[snapshot["SnapshotId"]],
                    WaiterConfig={"Delay": 10, "MaxAttempts": int(_VOLUME_DELETE / 10)},
                )
            retry(lambda: ec2.delete_volume(VolumeId=id_), ("VolumeInUse",), _VOLUME_DELETE)
        except ClientError as err:
            if is_gone(err):
                return
            raise
        until_gone(lambda: _find_volume(aws, id_), _VOLUME_DELETE)
