"""What is tagged for the cluster, so adoption can list what the program does not model.

The Resource Groups Tagging API lists every taggable resource carrying the cluster
tag in one paginated call. Instances an adopted Auto Scaling group launched, and the
volumes and interfaces attached to them, belong to that group rather than to nobody,
so they are not listed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from automation.aws.lookup.model import Lookup, by


@dataclass(frozen=True)
class TaggedResource:
    arn: str

    @property
    def kind(self) -> str:
        """``<service>:<resource type>``, e.g. ``ec2:security-group``."""
        parts = self.arn.split(":", 5)
        if len(parts) < 6:
            return "unknown"
        resource = parts[5]
        return f"{parts[2]}:{resource.split('/', 1)[0].split(':', 1)[0]}"

    @property
    def resource_id(self) -> str:
        """The id at the end of the ARN (``vpc/vpc-1`` -> ``vpc-1``)."""
        return self.arn.rsplit("/", 1)[-1]

    def belongs_to(self, ids: set[str]) -> bool:
        """The resource is one of ``ids`` (by ARN, or by the id the ARN ends with)."""
        return self.arn in ids or self.resource_id in ids


def tagged_resources(lookup: Lookup, groups: Iterable[str] = ()) -> list[TaggedResource]:
    """Resources tagged ``kubernetes.io/cluster/<name>``, but for the instances of
    ``groups`` (adopted Auto Scaling groups) and what is attached to them."""
    pages = lookup.clients.tagging.get_paginator("get_resources").paginate(
        TagFilters=[{"Key": lookup.cluster_tag}]
    )
    found = [TaggedResource(m["ResourceARN"]) for p in pages for m in p["ResourceTagMappingList"]]
    owned = _owned_by_groups(lookup, list(groups))
    return [t for t in found if t.resource_id not in owned]


def _owned_by_groups(lookup: Lookup, groups: list[str]) -> set[str]:
    """Instance ids of ``groups`` and the volumes and interfaces attached to them."""
    instances: set[str] = set()
    for start in range(0, len(groups), 50):  # DescribeAutoScalingGroups takes 50 names
        pages = lookup.clients.autoscaling.get_paginator("describe_auto_scaling_groups").paginate(
            AutoScalingGroupNames=groups[start : start + 50]
        )
        instances.update(
            i["InstanceId"] for p in pages for g in p["AutoScalingGroups"] for i in g["Instances"]
        )
    owned = set(instances)
    ids = sorted(instances)
    for start in range(0, len(ids), 200):  # filter values per call
        chunk = ids[start : start + 200]
        volumes = lookup.clients.ec2.get_paginator("describe_volumes").paginate(
            Filters=[by("attachment.instance-id", *chunk)]
        )
        owned.update(v["VolumeId"] for p in volumes for v in p["Volumes"])
        interfaces = lookup.clients.ec2.get_paginator("describe_network_interfaces").paginate(
            Filters=[by("attachment.instance-id", *chunk)]
        )
        owned.update(i["NetworkInterfaceId"] for p in interfaces for i in p["NetworkInterfaces"])
    return owned
