"""Telling a live cluster's resources apart by the part they play, whatever their names."""

from __future__ import annotations

from typing import Any

from automation.adoption.kept_names import (
    etcd_volume_members,
    kept_names,
    kops_etcd_member,
    shares_no_group,
)
from automation.adoption.live import Balancer, LiveCluster
from automation.adoption.proposal import member_numbers


def _tags(**tags: str) -> list[dict[str, str]]:
    return [{"Key": k, "Value": v} for k, v in tags.items()]


def _group(
    name: str, template: str, tg: str, *, member: str = "", pool: str = "", tagged: bool = True
) -> Any:
    """A group (a member's with ``member``; ``tagged``: with kubeshift's member tag)."""
    tags = {"kubernetes.io/cluster/shop": "owned"}
    tags.update({"k8s.io/role/master": "1"} if member else {})
    tags.update({"kubeshift.io/member": member} if member and tagged else {})
    tags.update({"kops.k8s.io/instancegroup": pool} if pool else {})
    group: dict[str, Any] = {
        "AutoScalingGroupName": name, "VPCZoneIdentifier": "subnet-a",
        "TargetGroupARNs": [tg], "Tags": _tags(**tags),
    }  # fmt: skip
    spec = {"LaunchTemplateId": template, "Version": "1"}
    if member:
        group["LaunchTemplate"] = spec
    else:
        group["MixedInstancesPolicy"] = {
            "InstancesDistribution": {"OnDemandPercentageAboveBaseCapacity": 100},
            "LaunchTemplate": {"LaunchTemplateSpecification": spec,
                               "Overrides": [{"InstanceType": "m5.large"}]},
        }  # fmt: skip
    return group


def _balancer(name: str, group: str, tg_arn: str, tg_name: str, port: int) -> Balancer:
    return Balancer(
        lb={"LoadBalancerName": name, "SecurityGroups": [group]},
        listeners=[{"Port": port, "DefaultActions": [{"TargetGroupArn": tg_arn}]}],
        target_groups={tg_arn: {"TargetGroupArn": tg_arn, "TargetGroupName": tg_name}},
        rules=[],
    )


def test_a_kops_named_cluster_maps_every_named_part_to_kubeshifts_name() -> None:
    live = LiveCluster(
        name="shop",
        vpc={"VpcId": "vpc-1", "CidrBlock": "10.0.0.0/16"},
        subnets=[{"SubnetId": "subnet-a", "AvailabilityZone": "eu-west-1a"}],
        nat_gateways=1, internet_gateway=True,
        groups=[
            _group("nodes-eu-west-1a.shop.k8s.local", "lt-n", "tg-http", pool="general"),
            _group("master-eu-west-1a.masters.shop.k8s.local", "lt-m", "tg-api", member="1"),
        ],
        templates={
            "lt-n": {"SecurityGroupIds": ["sg-n", "sg-s"],
                     "IamInstanceProfile": {"Name": "nodes.shop.k8s.local"}},
            "lt-m": {"SecurityGroupIds": ["sg-m", "sg-s"],
                     "IamInstanceProfile": {"Arn": "arn:aws:iam::1:instance-profile/masters.shop"}},
        },
        volumes=[], interfaces=[],
        balancers={
            "lb-api": _balancer("api-shop-k8s-local", "sg-a", "tg-api", "tcp-shop-api", 443),
            "lb-in": _balancer("shop-ingress", "sg-i", "tg-http", "http-shop", 80),
        },
        template_names={"lt-n": "nodes-eu-west-1a.shop.k8s.local",
                        "lt-m": "master-eu-west-1a.masters.shop.k8s.local"},
        group_names={"sg-n": "nodes.shop.k8s.local", "sg-m": "masters.shop.k8s.local",
                     "sg-s": "shop-shared", "sg-a": "api-elb.shop.k8s.local",
                     "sg-i": "shop-ingress-lb"},
        profile_roles={"nodes.shop.k8s.local": "nodes.shop.k8s.local",
                       "masters.shop": "masters.shop.k8s.local"},
    )  # fmt: skip

    assert kept_names(live) == {
        "autoscaling-group:shop-control-plane-1": "master-eu-west-1a.masters.shop.k8s.local",
        "autoscaling-group:shop-workers-general-m5-large-eu-west-1a-on-demand":
            "nodes-eu-west-1a.shop.k8s.local",
        "iam-role:shop-control-plane-role": "masters.shop.k8s.local",
        "iam-role:shop-node-role": "nodes.shop.k8s.local",
        "instance-profile:shop-control-plane-profile": "masters.shop",
        "instance-profile:shop-node-profile": "nodes.shop.k8s.local",
        "launch-template:shop-control-plane-1": "master-eu-west-1a.masters.shop.k8s.local",
        "launch-template:shop-workers-general-on-demand": "nodes-eu-west-1a.shop.k8s.local",
        "load-balancer:shop-api": "api-shop-k8s-local",
        "security-group:shop-api-lb": "api-elb.shop.k8s.local",
        "security-group:shop-control-plane": "masters.shop.k8s.local",
        "security-group:shop-node": "nodes.shop.k8s.local",
        "target-group:shop-api-443": "tcp-shop-api",
        "target-group:shop-ingress-80": "http-shop",
    }  # fmt: skip  (shop-ingress, shop-shared and shop-ingress-lb are kubeshift's own names)


def test_members_without_kubeshifts_tag_keep_their_names_by_kops_instance_group() -> None:
    groups = [
        _group(f"master-eu-west-1a-{n}.masters.shop.k8s.local", f"lt-{n}", "tg-api",
               member=n, tagged=False)
        for n in ("2", "1")
    ]  # fmt: skip
    live = LiveCluster(
        name="shop",
        vpc={"VpcId": "vpc-1", "CidrBlock": "10.0.0.0/16"},
        subnets=[{"SubnetId": "subnet-a", "AvailabilityZone": "eu-west-1a"}],
        nat_gateways=1, internet_gateway=True, groups=groups,
        templates={"lt-1": {}, "lt-2": {}}, volumes=[], interfaces=[],
        template_names={"lt-1": "master-eu-west-1a-1.masters.shop.k8s.local",
                        "lt-2": "master-eu-west-1a-2.masters.shop.k8s.local"},
    )  # fmt: skip

    names = kept_names(live)
    for n in ("1", "2"):
        kops = f"master-eu-west-1a-{n}.masters.shop.k8s.local"
        assert names[f"autoscaling-group:shop-control-plane-{n}"] == kops
        assert names[f"launch-template:shop-control-plane-{n}"] == kops


def _members_over_two_zones(groups: list[Any], volumes: list[Any]) -> LiveCluster:
    """A cluster of member ``groups`` in ``subnet-a`` (eu-west-1a) and ``subnet-b``."""
    return LiveCluster(
        name="shop",
        vpc={"VpcId": "vpc-1", "CidrBlock": "10.0.0.0/16"},
        subnets=[{"SubnetId": "subnet-a", "AvailabilityZone": "eu-west-1a"},
                 {"SubnetId": "subnet-b", "AvailabilityZone": "eu-west-1b"}],
        nat_gateways=1, internet_gateway=True, groups=groups,
        templates={}, volumes=volumes, interfaces=[],
    )  # fmt: skip


def test_a_members_etcd_volume_keeps_its_name_when_its_member_is_plain() -> None:
    """By kops's etcd tag where it numbers the members; else by the one member in the
    volume's AZ; a volume two members could own keeps kubeshift's name (adoption then
    names it missing); the events etcd's volumes are not the program's."""
    groups = []
    for n, subnet in (("1", "subnet-a"), ("2", "subnet-b"), ("3", "subnet-a")):
        group = _group(f"master-{n}.masters.shop.k8s.local", f"lt-{n}", "tg-api", member=n,
                       tagged=False)  # fmt: skip
        groups.append({**group, "VPCZoneIdentifier": subnet})

    def volume(id_: str, az: str, name: str, **tags: str) -> dict[str, Any]:
        return {"VolumeId": id_, "AvailabilityZone": az, "Tags": _tags(Name=name, **tags)}

    dns = "shop.k8s.local"
    main, events = "k8s.io/etcd/main", "k8s.io/etcd/events"
    volumes = [
        volume("vol-1", "eu-west-1a", f"1.etcd-main.{dns}", **{main: "1/1,2,3"}),
        volume("vol-2", "eu-west-1b", f"b.etcd-main.{dns}", **{main: "b/a,b,c"}),
        volume("vol-3", "eu-west-1a", f"c.etcd-main.{dns}", **{main: "c/a,b,c"}),
        volume("vol-4", "eu-west-1b", f"b.etcd-events.{dns}", **{events: "b/a,b,c"}),
    ]
    live = _members_over_two_zones(groups, volumes)

    assert etcd_volume_members(live) == {"vol-1": 1, "vol-2": 2}
    volume_names = {k: v for k, v in kept_names(live).items() if k.startswith("tag:")}
    assert volume_names == {
        "tag:shop-etcd-1": f"1.etcd-main.{dns}",
        "tag:shop-etcd-2": f"b.etcd-main.{dns}",
    }


def test_kops_letter_named_etcd_members_follow_their_instance_groups() -> None:
    """kops names a member's etcd member after its instance group's zone letter, and
    its number where a zone holds several (``master-eu-west-1a-2`` runs ``a-2``): two
    members in one AZ are then still told apart."""
    groups = []
    for group_name, subnet in (("master-eu-west-1a-1", "subnet-a"),
                               ("master-eu-west-1b-1", "subnet-b"),
                               ("master-eu-west-1a-2", "subnet-a")):  # fmt: skip
        group = _group(f"{group_name}.masters.shop.k8s.local", group_name, "tg-api",
                       member="x", tagged=False)  # fmt: skip
        groups.append({**group, "VPCZoneIdentifier": subnet})
    every = "a-1,a-2,b-1"
    volumes = [
        {"VolumeId": f"vol-{m}", "AvailabilityZone": f"eu-west-1{m[0]}",
         "Tags": _tags(Name=f"{m}.etcd-main.shop.k8s.local",
                       **{"k8s.io/etcd/main": f"{m}/{every}"})}
        for m in ("a-1", "a-2", "b-1")
    ]  # fmt: skip
    live = _members_over_two_zones(groups, volumes)
    numbers = member_numbers(live)  # kops numbers per zone: by turns from the AZs
    by_group = {g.split(".")[0]: n for g, n in numbers.items()}
    assert etcd_volume_members(live) == {
        "vol-a-1": by_group["master-eu-west-1a-1"],
        "vol-a-2": by_group["master-eu-west-1a-2"],
        "vol-b-1": by_group["master-eu-west-1b-1"],
    }
    assert kops_etcd_member("master-us-gov-west-1c") == "c"
    assert kops_etcd_member("nodes-us-east-1a") is None


def test_a_kops_instance_group_spanning_zones_keeps_its_name_as_the_pools_one_group() -> None:
    group = _group("nodes.shop.k8s.local", "lt-n", "tg-http", pool="nodes")
    group["VPCZoneIdentifier"] = "subnet-a,subnet-b"
    live = LiveCluster(
        name="shop",
        vpc={"VpcId": "vpc-1", "CidrBlock": "10.0.0.0/16"},
        subnets=[{"SubnetId": "subnet-a", "AvailabilityZone": "eu-west-1a"},
                 {"SubnetId": "subnet-b", "AvailabilityZone": "eu-west-1b"}],
        nat_gateways=1, internet_gateway=True, groups=[group],
        templates={"lt-n": {}}, volumes=[], interfaces=[],
        template_names={"lt-n": "nodes.shop.k8s.local"},
    )  # fmt: skip

    names = kept_names(live)

    assert names["autoscaling-group:shop-workers-nodes-on-demand"] == "nodes.shop.k8s.local"
    assert names["launch-template:shop-workers-nodes-on-demand"] == "nodes.shop.k8s.local"


def _two_templates(worker_groups: list[str], member_groups: list[str]) -> LiveCluster:
    return LiveCluster(
        name="shop",
        vpc={"VpcId": "vpc-1", "CidrBlock": "10.0.0.0/16"},
        subnets=[], nat_gateways=0, internet_gateway=False,
        groups=[
            _group("nodes.shop.k8s.local", "lt-n", "tg-http", pool="general"),
            _group("master-a.masters.shop.k8s.local", "lt-m", "tg-api", member="1"),
        ],
        templates={"lt-n": {"SecurityGroupIds": worker_groups},
                   "lt-m": {"SecurityGroupIds": member_groups}},
        volumes=[], interfaces=[], balancers={},
    )  # fmt: skip


def test_workers_and_members_share_no_group_only_when_both_carry_groups_apart() -> None:
    assert not shares_no_group(_two_templates(["sg-n", "sg-s"], ["sg-m", "sg-s"]))
    # kops: every instance carries its role's group only
    assert shares_no_group(_two_templates(["sg-n"], ["sg-m"]))
    # templates that name no group say nothing of what is shared
    assert not shares_no_group(_two_templates(["sg-n"], []))
