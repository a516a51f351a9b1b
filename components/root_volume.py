"""The root volume a launch template maps: gp3, encrypted, gone with its instance."""

from __future__ import annotations

import pulumi_aws as aws

ROOT_DEVICE = "/dev/xvda"


def root_volume(size: int | None) -> list[aws.ec2.LaunchTemplateBlockDeviceMappingArgsDict] | None:
    """A template's block device mappings for a root volume of ``size`` GiB (None: the
    image's own, no mapping)."""
    if size is None:
        return None
    return [
        {
            "device_name": ROOT_DEVICE,
            "ebs": {
                "volume_size": size,
                "volume_type": "gp3",
                "encrypted": "true",
                "delete_on_termination": "true",
            },
        }
    ]
