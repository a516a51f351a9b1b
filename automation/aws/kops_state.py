"""What kops's state store still claims of what kubeshift adopts, and how it lets go.

kops keeps a cluster under its ``ConfigBase`` (``s3://<bucket>/<cluster name>``): the
cluster spec, and one object per instance group at ``instancegroup/<name>`` (kops
``pkg/client/simple/vfsclientset``: ``configBase.Join("instancegroup")``). Its next
``kops update cluster --yes`` builds each instance group it finds there: an Auto
Scaling group and a launch template both named ``<group>.masters.<cluster>`` for a
member, ``<group>.apiservers.<cluster>`` for an API server, ``<group>.<cluster>`` for
the rest (kops ``pkg/model`` ``AutoscalingGroupName``) — so a group kubeshift removes
would come back, and one it changes would be changed back.

``kops delete instancegroup`` deletes the group's cloud resources before its spec
(kops ``pkg/instancegroups`` ``DeleteInstanceGroup``), so it is not how kops lets go:
moving the spec out of ``instancegroup/`` is. kops then neither builds nor updates
that group, and its AWS resources stay as they are. The group's nodeup configuration
(``igconfig/<role>/<group>/nodeupconfig.yaml``) stays where it is: the nodes kubeshift
launches from the kept boot script read it there (nodeup's ``command.go`` reads the
group's ``igconfig`` file, or kops-controller's answer, never ``instancegroup/``).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict

from automation.core.errors import ConfigError

INSTANCE_GROUPS = "instancegroup/"
RELEASED = "kubeshift-released/instancegroup/"
"""Where a released group's spec is moved, beside kops's own (kops lists only
``instancegroup/``), so that moving it back restores kops's claim."""
_MEMBER_ROLES = {"Master": ".masters.", "ControlPlane": ".masters.", "APIServer": ".apiservers."}


class KopsClaim(BaseModel):
    """One instance group kops's state store holds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    group: str
    """Its name (``metadata.name``)."""
    role: str
    key: str
    """Its spec's key in the bucket."""
    names: frozenset[str]
    """What it names in AWS: its Auto Scaling group's and launch template's name."""


class ConfigBase(BaseModel):
    """``s3://<bucket>/<cluster>``: where kops keeps one cluster."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bucket: str
    prefix: str

    @property
    def cluster(self) -> str:
        return self.prefix.rsplit("/", 1)[-1]

    def url(self, key: str = "") -> str:
        return f"s3://{self.bucket}/{key or self.prefix}"


def config_base(location: str) -> ConfigBase:
    """The ``ConfigBase`` ``runtime.kops_state`` names (``s3://BUCKET/CLUSTER``)."""
    bucket, _, prefix = location.removeprefix("s3://").partition("/")
    prefix = prefix.strip("/")
    if not location.startswith("s3://") or not bucket or not prefix:
        raise ConfigError(
            f"kubeshift:runtime.kops_state {location!r} is not a kops ConfigBase: give "
            "s3://BUCKET/CLUSTER, as kops's cluster spec names it (spec.configBase)."
        )
    return ConfigBase(bucket=bucket, prefix=prefix)


def asg_name(group: str, role: str, cluster: str) -> str:
    """The Auto Scaling group (and launch template) kops builds for ``group``."""
    return f"{group}{_MEMBER_ROLES.get(role, '.')}{cluster}"


def claim_in(text: str, key: str, base: ConfigBase) -> KopsClaim:
    """The claim of one instance group's spec (kops's YAML) at ``key``."""
    try:
        spec = yaml.safe_load(text)
    except yaml.YAMLError:
        spec = None
    meta = spec.get("metadata") if isinstance(spec, dict) else None
    body = spec.get("spec") if isinstance(spec, dict) else None
    if not isinstance(meta, dict) or not isinstance(body, dict) or not meta.get("name"):
        raise ConfigError(
            f"{base.url(key)} is not a kops instance group (no metadata.name and spec); "
            "check kubeshift:runtime.kops_state."
        )
    group, role = str(meta["name"]), str(body.get("role", "Node"))
    return KopsClaim(
        group=group, role=role, key=key, names=frozenset({asg_name(group, role, base.cluster)})
    )


def group_claims(location: str, s3: Any) -> list[KopsClaim]:
    """Every instance group the state store at ``location`` holds, read with ``s3``."""
    from botocore.exceptions import ClientError

    base = config_base(location)
    folder = f"{base.prefix}/{INSTANCE_GROUPS}"
    try:
        keys = [
            str(item["Key"])
            for page in s3.get_paginator("list_objects_v2").paginate(
                Bucket=base.bucket, Prefix=folder
            )
            for item in page.get("Contents", [])
            if "/" not in str(item["Key"]).removeprefix(folder)
        ]
        texts = {key: s3.get_object(Bucket=base.bucket, Key=key)["Body"].read() for key in keys}
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        raise ConfigError(
            f"kops's state store {base.url()} could not be read ({code}); check "
            "kubeshift:runtime.kops_state and that the operator may s3:ListBucket and "
            "s3:GetObject it."
        ) from None
    return [claim_in(bytes(texts[key]).decode(), key, base) for key in sorted(keys)]


def still_claimed(claims: Iterable[KopsClaim], names: Iterable[str]) -> list[KopsClaim]:
    """The instance groups that claim any of ``names`` (of what kubeshift adopts or
    changes), in the store's order."""
    wanted = set(names)
    return [c for c in claims if c.names & wanted]


def released_key(claim: KopsClaim, base: ConfigBase) -> str:
    return f"{base.prefix}/{RELEASED}{claim.group}"


def release_commands(location: str, claims: Iterable[KopsClaim]) -> list[str]:
    """The ``aws s3 mv`` that moves each claimed group's spec out of kops's sight (and
    back, run the other way round)."""
    base = config_base(location)
    return [
        f"aws s3 mv {shlex.quote(base.url(c.key))} {shlex.quote(base.url(released_key(c, base)))}"
        for c in claims
    ]


def move_aside(location: str, claims: Iterable[KopsClaim], s3: Any) -> list[str]:
    """Move each claimed group's spec to :data:`RELEASED` (a copy, then the delete: S3 has
    no move); return the groups moved. A spec moved already is not listed by
    :func:`group_claims`, so running it again moves nothing twice."""
    from botocore.exceptions import ClientError

    base = config_base(location)
    moved: list[str] = []
    for claim in claims:
        target = released_key(claim, base)
        try:
            s3.copy_object(
                Bucket=base.bucket, Key=target, CopySource={"Bucket": base.bucket, "Key": claim.key}
            )
            s3.delete_object(Bucket=base.bucket, Key=claim.key)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            raise ConfigError(
                f"{base.url(claim.key)} could not be moved to {base.url(target)} ({code}); "
                f"{len(moved)} group(s) were released before it: check that the operator may "
                "s3:GetObject, s3:PutObject and s3:DeleteObject in kops's state store."
            ) from None
        moved.append(claim.group)
    return moved
