"""kops's state store read as kops keeps it (moto's S3): the instance groups it holds,
the Auto Scaling groups kops names after them, and their release — moved out of kops's
sight, its nodeup configurations left where the nodes read them."""

from __future__ import annotations

import shlex
from typing import Any

import pytest
import yaml

from automation.aws.kops_state import (
    asg_name,
    config_base,
    group_claims,
    move_aside,
    release_commands,
    still_claimed,
)
from automation.core.errors import ConfigError
from tests.support.moto_fixtures import MotoServer

BUCKET = "acme-kops-state"
CLUSTER = "prod.k8s.local"
STORE = f"s3://{BUCKET}/{CLUSTER}"


def _spec(name: str, role: str) -> bytes:
    document = {"apiVersion": "kops.k8s.io/v1alpha2", "kind": "InstanceGroup",
                "metadata": {"name": name}, "spec": {"role": role, "minSize": 1}}  # fmt: skip
    return yaml.safe_dump(document).encode()


@pytest.fixture
def s3(moto: MotoServer) -> Any:
    client = moto.client("s3")
    client.create_bucket(
        Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": moto.region}
    )
    objects = {
        f"{CLUSTER}/config": b"kind: Cluster\n",
        f"{CLUSTER}/instancegroup/master-us-west-2a": _spec("master-us-west-2a", "Master"),
        f"{CLUSTER}/instancegroup/nodes-spot": _spec("nodes-spot", "Node"),
        f"{CLUSTER}/igconfig/node/nodes-spot/nodeupconfig.yaml": b"InstanceGroupName: x\n",
        "other.k8s.local/instancegroup/nodes": _spec("nodes", "Node"),
    }
    for key, body in objects.items():
        client.put_object(Bucket=BUCKET, Key=key, Body=body)
    return client


def test_each_instance_group_claims_the_group_kops_names_after_it(s3: Any) -> None:
    claims = group_claims(STORE, s3)
    assert [(c.group, sorted(c.names)) for c in claims] == [
        ("master-us-west-2a", [f"master-us-west-2a.masters.{CLUSTER}"]),
        ("nodes-spot", [f"nodes-spot.{CLUSTER}"]),
    ]  # the other cluster's groups and the nodeup configurations claim nothing
    assert asg_name("api-a", "APIServer", CLUSTER) == f"api-a.apiservers.{CLUSTER}"
    assert asg_name("cp-a", "ControlPlane", CLUSTER) == f"cp-a.masters.{CLUSTER}"
    held = still_claimed(claims, {f"nodes-spot.{CLUSTER}", "lt-0abc", "nodes-spot"})
    assert [c.group for c in held] == ["nodes-spot"]


def test_a_release_moves_the_spec_aside_once_and_leaves_nodeup_its_configuration(
    s3: Any,
) -> None:
    (spot,) = still_claimed(group_claims(STORE, s3), {f"nodes-spot.{CLUSTER}"})
    (command,) = release_commands(STORE, [spot])
    assert shlex.split(command) == [
        "aws", "s3", "mv", f"{STORE}/instancegroup/nodes-spot",
        f"{STORE}/kubeshift-released/instancegroup/nodes-spot",
    ]  # fmt: skip
    assert move_aside(STORE, [spot], s3) == ["nodes-spot"]
    assert [c.group for c in group_claims(STORE, s3)] == ["master-us-west-2a"]
    kept = s3.get_object(
        Bucket=BUCKET, Key=f"{CLUSTER}/kubeshift-released/instancegroup/nodes-spot"
    )
    assert yaml.safe_load(kept["Body"].read())["metadata"]["name"] == "nodes-spot"
    nodeup = s3.get_object(
        Bucket=BUCKET, Key=f"{CLUSTER}/igconfig/node/nodes-spot/nodeupconfig.yaml"
    )
    assert nodeup["Body"].read() == b"InstanceGroupName: x\n"
    # run again: nothing holds the group any more, so nothing is moved twice
    assert still_claimed(group_claims(STORE, s3), {f"nodes-spot.{CLUSTER}"}) == []


@pytest.mark.parametrize(
    ("location", "says"),
    [
        (f"{BUCKET}/{CLUSTER}", "is not a kops ConfigBase"),
        (f"s3://{BUCKET}", "is not a kops ConfigBase"),
        ("s3://no-such-bucket/prod.k8s.local", r"could not be read \(NoSuchBucket\)"),
    ],
)
def test_a_store_that_cannot_be_read_is_one_sentence(s3: Any, location: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        group_claims(location, s3)


def test_an_object_that_is_no_instance_group_is_one_sentence(s3: Any) -> None:
    s3.put_object(Bucket=BUCKET, Key=f"{CLUSTER}/instancegroup/broken", Body=b"- [not: a spec")
    with pytest.raises(ConfigError, match=r"instancegroup/broken is not a kops instance group"):
        group_claims(STORE, s3)
    assert config_base(f"{STORE}/").cluster == CLUSTER
