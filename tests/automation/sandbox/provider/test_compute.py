"""The stand-in provider's launch templates, network interfaces and EBS volumes on moto.

Each type is created and checked against what boto3 sees, read back (also from the
declared inputs alone, as an import does), updated in place where AWS can, deleted
twice and then read as gone. Replacement is judged from ``replace_props()`` the way the
servicer judges it. Numbers are declared as floats, as the engine sends them, and the
declared shapes are kubeshift's own (components/control_plane.py, worker_pools.py).
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from pulumi.runtime import rpc

from automation.sandbox.provider.model import REGISTRY, Aws, NotFound, Props, Request, ResourceType
from automation.sandbox.provider.types.launch_templates import LaunchTemplate
from automation.sandbox.provider.types.network_interfaces import NetworkInterface
from automation.sandbox.provider.types.volumes import Volume
from tests.support.moto_fixtures import MotoServer

pytestmark = pytest.mark.moto

ACCOUNT = "123456789012"  # moto's
AZ = "eu-west-1a"


def replaces(kind: type[ResourceType], olds: Props, changes: Props) -> bool:
    """Whether applying ``changes`` to ``olds`` replaces a resource of ``kind``, as the
    servicer's Diff decides (static ForceNew and the type's conditional rules)."""
    return REGISTRY[kind.token].diff(olds, {**olds, **changes}).replace


def req(kind: type[ResourceType]) -> Request:
    return Request(name="test", token=kind.token)


def create(aws: Aws, kind: type[ResourceType], declared: Props) -> tuple[str, Props, Props]:
    """Check and create through the registry; reading back from the outputs, or from the
    checked inputs alone (an import), gives the same outputs."""
    resource = REGISTRY[kind.token]
    assert isinstance(resource, kind)
    inputs = resource.check(req(kind), declared)
    id_, outputs = resource.create(aws, req(kind), inputs)
    assert resource.read(aws, req(kind), id_, outputs) == outputs
    assert resource.read(aws, req(kind), id_, inputs) == outputs
    return id_, inputs, outputs


def update(aws: Aws, kind: type[ResourceType], id_: str, olds: Props, changes: Props) -> Props:
    """An in-place update (asserting nothing replace-worthy changed); reads back equal."""
    assert not replaces(kind, olds, changes)
    resource = REGISTRY[kind.token]
    outputs = resource.update(aws, req(kind), id_, olds, {**olds, **changes})
    assert resource.read(aws, req(kind), id_, outputs) == outputs
    return outputs


def delete_twice(aws: Aws, kind: type[ResourceType], id_: str, state: Props) -> None:
    resource = REGISTRY[kind.token]
    resource.delete(aws, req(kind), id_, state)
    resource.delete(aws, req(kind), id_, state)
    with pytest.raises(NotFound):
        resource.read(aws, req(kind), id_, state)


@pytest.fixture
def aws(moto: MotoServer) -> Aws:
    return Aws(region="eu-west-1", endpoint_url=moto.endpoint_url)


@pytest.fixture
def network(aws: Aws) -> dict[str, str]:
    """A VPC, a subnet in ``AZ`` and two security groups."""
    ec2 = aws.ec2
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24", AvailabilityZone=AZ)
    groups = [
        ec2.create_security_group(GroupName=name, Description=name, VpcId=vpc)["GroupId"]
        for name in ("a", "b")
    ]
    return {
        "vpc": vpc,
        "subnet": subnet["Subnet"]["SubnetId"],
        "sg_a": groups[0],
        "sg_b": groups[1],
    }


# --- launch template ------------------------------------------------------------------


def user_data(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def version_data(aws: Aws, id_: str, version: str) -> dict[str, Any]:
    versions = aws.ec2.describe_launch_template_versions(LaunchTemplateId=id_, Versions=[version])
    return dict(versions["LaunchTemplateVersions"][0]["LaunchTemplateData"])


def test_launch_template_lifecycle(aws: Aws, network: dict[str, str]) -> None:
    declared = {
        "name": "demo-workers-general-spot",
        "imageId": "ami-12c6146b",
        "instanceType": "m6i.large",
        "userData": user_data("#!/bin/sh\necho join\n"),
        "iamInstanceProfile": {"name": "demo-node"},
        "vpcSecurityGroupIds": [network["sg_a"]],
        "metadataOptions": {
            "httpEndpoint": "enabled",
            "httpTokens": "required",
            "httpPutResponseHopLimit": 2.0,
            "instanceMetadataTags": "disabled",
        },
        "blockDeviceMappings": [
            {
                "deviceName": "/dev/xvda",
                "ebs": {
                    "volumeSize": 50.0,
                    "volumeType": "gp3",
                    "encrypted": "true",
                    "deleteOnTermination": "true",
                },
            }
        ],
        "tagSpecifications": [
            {"resourceType": "instance", "tags": {"Name": "demo-workers"}},
            {"resourceType": "volume", "tags": {"Name": "demo-workers"}},
        ],
        "updateDefaultVersion": True,
        "tags": {"Name": "demo-workers-general-spot"},
    }
    id_, inputs, outputs = create(aws, LaunchTemplate, declared)

    data = version_data(aws, id_, "1")
    assert data["ImageId"] == "ami-12c6146b" and data["InstanceType"] == "m6i.large"
    assert data["UserData"] == declared["userData"]
    assert data["IamInstanceProfile"] == {"Name": "demo-node"}
    assert data["SecurityGroupIds"] == [network["sg_a"]]
    assert data["MetadataOptions"]["HttpPutResponseHopLimit"] == 2
    assert data["BlockDeviceMappings"][0]["Ebs"] == {
        "VolumeSize": 50,
        "VolumeType": "gp3",
        "Encrypted": True,
        "DeleteOnTermination": True,
    }
    assert (outputs["latestVersion"], outputs["defaultVersion"]) == (1, 1)
    assert outputs["arn"] == f"arn:aws:ec2:eu-west-1:{ACCOUNT}:launch-template/{id_}"
    for prop in ("blockDeviceMappings", "iamInstanceProfile", "metadataOptions", "userData"):
        assert outputs[prop] == declared[prop], prop  # the declared shape comes back
    assert outputs["tagSpecifications"] == declared["tagSpecifications"]
    assert outputs["tagsAll"] == {"Name": "demo-workers-general-spot"}

    assert replaces(LaunchTemplate, inputs, {"name": "other"})
    assert not replaces(LaunchTemplate, inputs, {"imageId": "ami-2", "tags": {}})

    # A launch-data change makes version 2, and updateDefaultVersion makes it the default;
    # the update's preview leaves both unknown, so a plan made from it admits them.
    new_script = user_data("#!/bin/sh\necho join again\n")
    resource = REGISTRY[LaunchTemplate.token]
    changed = {**outputs, "userData": new_script}
    assert resource.recomputed(outputs, changed) == ("latestVersion", "defaultVersion")
    assert resource.recomputed(outputs, {**changed, "updateDefaultVersion": False}) == (
        "latestVersion",
    )
    # Upstream's CustomizeDiff marks the versions unknown on a tags change too (though
    # it makes no version), and leaves them known on a description change (though it
    # does): the referencing groups preview exactly as they do on an account.
    retagged = {**outputs, "tags": {"team": "k8s"}}
    assert resource.recomputed(outputs, retagged) == ("latestVersion", "defaultVersion")
    assert resource.recomputed(outputs, {**retagged, "updateDefaultVersion": False}) == (
        "latestVersion",
    )
    assert resource.recomputed(outputs, {**outputs, "description": "v2"}) == ()
    assert resource.recomputed(outputs, {**outputs, "updateDefaultVersion": False}) == ()
    untagged = {k: v for k, v in outputs.items() if k != "tags"}  # the program drops them
    assert resource.recomputed(outputs, untagged) == ("latestVersion", "defaultVersion")
    assert resource.recomputed(outputs, dict(outputs)) == ()
    groups = [network["sg_a"], network["sg_b"]]
    grouped = {**inputs, "vpcSecurityGroupIds": groups}
    reordered = {**grouped, "vpcSecurityGroupIds": groups[::-1]}
    assert resource.diff(grouped, reordered).changed == ()  # a set: order is no change
    outputs = update(aws, LaunchTemplate, id_, outputs, {"userData": new_script})
    assert (outputs["latestVersion"], outputs["defaultVersion"]) == (2, 2)
    assert version_data(aws, id_, "2")["UserData"] == new_script
    template = aws.ec2.describe_launch_templates(LaunchTemplateIds=[id_])["LaunchTemplates"][0]
    assert (template["LatestVersionNumber"], template["DefaultVersionNumber"]) == (2, 2)

    # Tags alone make no version.
    outputs = update(aws, LaunchTemplate, id_, outputs, {"tags": {"team": "k8s"}})
    assert outputs["latestVersion"] == 2 and outputs["tags"] == {"team": "k8s"}
    tags = aws.ec2.describe_tags(Filters=[{"Name": "resource-id", "Values": [id_]}])["Tags"]
    assert [(t["Key"], t["Value"]) for t in tags] == [("team", "k8s")]

    # Without updateDefaultVersion the default stays.
    outputs = update(
        aws,
        LaunchTemplate,
        id_,
        outputs,
        {"updateDefaultVersion": False, "vpcSecurityGroupIds": [network["sg_a"], network["sg_b"]]},
    )
    assert (outputs["latestVersion"], outputs["defaultVersion"]) == (3, 2)
    assert version_data(aws, id_, "3")["SecurityGroupIds"] == [network["sg_a"], network["sg_b"]]

    delete_twice(aws, LaunchTemplate, id_, outputs)
    assert (
        aws.ec2.describe_launch_templates(
            Filters=[{"Name": "launch-template-name", "Values": ["demo-workers-general-spot"]}]
        )["LaunchTemplates"]
        == []
    )


def test_a_templates_groups_on_its_network_interface(aws: Aws, network: dict[str, str]) -> None:
    """Where kops puts them: the template's first interface, which takes no public
    address; a change of its groups is a new version."""
    interface = {
        "associatePublicIpAddress": "false", "deleteOnTermination": "true", "deviceIndex": 0.0,
        "securityGroups": [network["sg_b"], network["sg_a"]],
    }  # fmt: skip
    declared = {
        "name": "nodes.demo.k8s.local", "imageId": "ami-12c6146b",
        "networkInterfaces": [interface], "updateDefaultVersion": True,
    }  # fmt: skip
    id_, inputs, outputs = create(aws, LaunchTemplate, declared)
    (live,) = version_data(aws, id_, "1")["NetworkInterfaces"]
    assert sorted(live["Groups"]) == sorted([network["sg_a"], network["sg_b"]])
    assert (live["AssociatePublicIpAddress"], live["DeviceIndex"]) == (False, 0)
    assert "SecurityGroupIds" not in version_data(aws, id_, "1")
    assert outputs["networkInterfaces"] == [
        {**interface, "deviceIndex": 0, "securityGroups": sorted(interface["securityGroups"])}
    ]
    assert outputs.get("vpcSecurityGroupIds") is None
    one = [{**outputs["networkInterfaces"][0], "securityGroups": [network["sg_a"]]}]
    updated = update(aws, LaunchTemplate, id_, inputs, {"networkInterfaces": one})
    assert updated["latestVersion"] == 2
    assert version_data(aws, id_, "2")["NetworkInterfaces"][0]["Groups"] == [network["sg_a"]]


def test_launch_template_autoname_and_checks(aws: Aws) -> None:
    id_, _, outputs = create(aws, LaunchTemplate, {"imageId": "ami-1"})
    assert outputs["name"].startswith("test-")
    check = REGISTRY[LaunchTemplate.token].check
    with pytest.raises(ValueError, match="launch template name"):
        check(req(LaunchTemplate), {"name": "has space"})
    with pytest.raises(ValueError, match="not both"):
        check(req(LaunchTemplate), {"updateDefaultVersion": True, "defaultVersion": 1.0})
    delete_twice(aws, LaunchTemplate, id_, outputs)


# --- network interface ----------------------------------------------------------------


def live_interface(aws: Aws, id_: str) -> dict[str, Any]:
    found = aws.ec2.describe_network_interfaces(NetworkInterfaceIds=[id_])["NetworkInterfaces"]
    return dict(found[0])


def test_network_interface_lifecycle(aws: Aws, network: dict[str, str]) -> None:
    id_, inputs, outputs = create(
        aws,
        NetworkInterface,
        {
            "subnetId": network["subnet"],
            "privateIps": ["10.0.1.10"],
            "securityGroups": [network["sg_a"]],
            "description": "etcd member 0 of demo",
            "tags": {"Name": "demo-control-plane-0"},
        },
    )
    live = live_interface(aws, id_)
    assert live["PrivateIpAddress"] == "10.0.1.10"
    assert [g["GroupId"] for g in live["Groups"]] == [network["sg_a"]]
    assert live["Description"] == "etcd member 0 of demo"
    assert live["TagSet"] == [{"Key": "Name", "Value": "demo-control-plane-0"}]
    assert outputs["privateIp"] == "10.0.1.10"  # what control_plane.py reads
    assert outputs["arn"] == f"arn:aws:ec2:eu-west-1:{ACCOUNT}:network-interface/{id_}"
    assert (outputs["ownerId"], outputs["sourceDestCheck"], outputs["attachments"]) == (
        ACCOUNT,
        True,
        [],
    )

    for prop, value in {"subnetId": "subnet-2", "privateIps": ["10.0.1.11"]}.items():
        assert replaces(NetworkInterface, inputs, {prop: value}), prop
    # The primary kept, a secondary address comes and goes in place (upstream's
    # ForceNewIf on private_ips looks only for the old primary among the new ones).
    interface = REGISTRY[NetworkInterface.token]
    with_secondary = {**inputs, "privateIps": ["10.0.1.10", "10.0.1.20"]}
    assert not interface.diff(inputs, with_secondary, outputs).replace
    assert interface.diff(inputs, {**inputs, "privateIps": ["10.0.1.20"]}, outputs).replace
    unknown_only = {**inputs, "privateIps": [rpc.UNKNOWN]}
    assert interface.diff(inputs, unknown_only, outputs).replace
    outputs = update(
        aws, NetworkInterface, id_, outputs, {"privateIps": with_secondary["privateIps"]}
    )
    assert live_interface(aws, id_)["PrivateIpAddress"] == "10.0.1.10"
    assert sorted(outputs["privateIps"]) == ["10.0.1.10", "10.0.1.20"]
    outputs = update(aws, NetworkInterface, id_, outputs, {"privateIps": ["10.0.1.10"]})
    assert outputs["privateIps"] == ["10.0.1.10"]
    changes = {
        "securityGroups": [network["sg_a"], network["sg_b"]],
        "description": "moved",
        "sourceDestCheck": False,
        "tags": {"Name": "x"},
    }
    outputs = update(aws, NetworkInterface, id_, outputs, changes)
    live = live_interface(aws, id_)
    assert {g["GroupId"] for g in live["Groups"]} == {network["sg_a"], network["sg_b"]}
    assert (live["Description"], live["SourceDestCheck"]) == ("moved", False)
    assert outputs["tags"] == {"Name": "x"}

    delete_twice(aws, NetworkInterface, id_, outputs)


def test_network_interface_delete_detaches_it_first(aws: Aws, network: dict[str, str]) -> None:
    id_, _, outputs = create(aws, NetworkInterface, {"subnetId": network["subnet"]})
    image = aws.ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
    instance = aws.ec2.run_instances(
        ImageId=image, MinCount=1, MaxCount=1, SubnetId=network["subnet"]
    )["Instances"][0]["InstanceId"]
    aws.ec2.attach_network_interface(NetworkInterfaceId=id_, InstanceId=instance, DeviceIndex=1)
    attached = REGISTRY[NetworkInterface.token].read(aws, req(NetworkInterface), id_, outputs)
    assert attached["attachments"][0]["instance"] == instance

    delete_twice(aws, NetworkInterface, id_, attached)
    enis = aws.ec2.describe_instances(InstanceIds=[instance])["Reservations"][0]["Instances"][0]
    assert id_ not in [e["NetworkInterfaceId"] for e in enis["NetworkInterfaces"]]


# --- EBS volume -----------------------------------------------------------------------


def live_volume(aws: Aws, id_: str) -> dict[str, Any]:
    return dict(aws.ec2.describe_volumes(VolumeIds=[id_])["Volumes"][0])


def test_volume_lifecycle(aws: Aws) -> None:
    id_, inputs, outputs = create(
        aws,
        Volume,
        {
            "availabilityZone": AZ,
            "size": 20.0,
            "type": "gp3",
            "encrypted": True,
            "tags": {"Name": "demo-etcd-0"},
        },
    )
    live = live_volume(aws, id_)
    assert (live["AvailabilityZone"], live["Size"], live["VolumeType"], live["Encrypted"]) == (
        AZ,
        20,
        "gp3",
        True,
    )
    assert live["Tags"] == [{"Key": "Name", "Value": "demo-etcd-0"}]
    assert outputs["arn"] == f"arn:aws:ec2:eu-west-1:{ACCOUNT}:volume/{id_}"
    assert (outputs["size"], outputs["type"], outputs["encrypted"]) == (20, "gp3", True)
    assert outputs["createTime"].endswith("Z")

    for prop, value in {"availabilityZone": "eu-west-1b", "encrypted": False}.items():
        assert replaces(Volume, inputs, {prop: value}), prop
    outputs = update(aws, Volume, id_, outputs, {"size": 40.0, "type": "gp2", "tags": {}})
    live = live_volume(aws, id_)
    assert (live["Size"], live["VolumeType"], live.get("Tags", [])) == (40, "gp2", [])
    assert (outputs["size"], outputs["type"], outputs["tags"]) == (40, "gp2", {})

    delete_twice(aws, Volume, id_, outputs)


def test_volume_final_snapshot(aws: Aws) -> None:
    id_, _, outputs = create(
        aws,
        Volume,
        {"availabilityZone": AZ, "size": 1.0, "finalSnapshot": True, "tags": {"k": "v"}},
    )
    delete_twice(aws, Volume, id_, outputs)
    snapshots = aws.ec2.describe_snapshots(Filters=[{"Name": "volume-id", "Values": [id_]}])
    assert [s["Tags"] for s in snapshots["Snapshots"]] == [[{"Key": "k", "Value": "v"}]]


def test_volume_checks() -> None:
    check = REGISTRY[Volume.token].check
    cases: list[tuple[Props, str]] = [
        ({"availabilityZone": AZ}, "size or snapshotId"),
        ({"availabilityZone": AZ, "size": 1.0, "type": "io2"}, "iops must be set"),
        ({"availabilityZone": AZ, "size": 1.0, "iops": 3000.0}, "iops must not be set"),
        ({"availabilityZone": AZ, "size": 1.0, "throughput": 200.0}, "only for type gp3"),
        ({"availabilityZone": AZ, "size": 1.0, "multiAttachEnabled": True}, "io1 or io2"),
    ]
    for declared, message in cases:
        with pytest.raises(ValueError, match=message):
            check(req(Volume), declared)
    gp3: Props = {
        "availabilityZone": AZ,
        "size": 1.0,
        "type": "gp3",
        "iops": 4000.0,
        "throughput": 250.0,
    }
    assert check(req(Volume), gp3) == {"finalSnapshot": False, **gp3}
