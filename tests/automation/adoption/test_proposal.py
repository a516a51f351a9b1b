"""Proposing the cluster block from a snapshot of what runs (no cloud: the snapshot is
built here in AWS's own answer shapes)."""

from __future__ import annotations

from typing import Any

import pytest

from automation.adoption.live import Balancer, LiveCluster
from automation.adoption.proposal import member_groups, member_numbers, propose
from components.contract.checks import POOL_NAME

LT = "lt-0123"


def _tags(**tags: str) -> list[dict[str, str]]:
    return [{"Key": k, "Value": v} for k, v in tags.items()]


def _group(name: str, subnet: str, *, spot: bool = False, size: int = 1, **tags: str) -> Any:
    return {
        "AutoScalingGroupName": name,
        "MinSize": 0,
        "DesiredCapacity": size,
        "MaxSize": 3,
        "VPCZoneIdentifier": subnet,
        "TargetGroupARNs": [],
        "MixedInstancesPolicy": {
            "InstancesDistribution": {"OnDemandPercentageAboveBaseCapacity": 0 if spot else 100},
            "LaunchTemplate": {
                "LaunchTemplateSpecification": {"LaunchTemplateId": LT, "Version": "1"},
                "Overrides": [{"InstanceType": "m5.large"}],
            },
        },
        "Tags": _tags(
            **{
                "kubernetes.io/cluster/shop": "owned",
                "KubernetesCluster": "shop",
                "k8s.io/cluster-autoscaler/enabled": "true",
                **tags,
            }
        ),
    }


def _live(*groups: Any) -> LiveCluster:
    subnets = [
        {"SubnetId": f"subnet-{kind}-{az}", "AvailabilityZone": f"eu-west-1{az}",
         "CidrBlock": cidr, "Tags": _tags(**{role: "1"})}
        for kind, role, az, cidr in (
            ("pub", "kubernetes.io/role/elb", "a", "10.0.0.0/20"),
            ("pub", "kubernetes.io/role/elb", "b", "10.0.16.0/20"),
            ("prv", "kubernetes.io/role/internal-elb", "a", "10.0.64.0/19"),
            ("prv", "kubernetes.io/role/internal-elb", "b", "10.0.96.0/19"),
        )
    ]  # fmt: skip
    vpc_tags = _tags(team="payments", Name="shop", **{"kubernetes.io/cluster/shop": "owned"})
    return LiveCluster(
        name="shop",
        vpc={"VpcId": "vpc-1", "CidrBlock": "10.0.0.0/16", "Tags": vpc_tags},
        subnets=subnets, nat_gateways=2, internet_gateway=True, groups=list(groups),
        templates={LT: {"ImageId": "ami-0123456789abcdef0",
                        "BlockDeviceMappings": [{"Ebs": {"VolumeSize": 80}}],
                        "MetadataOptions": {"HttpTokens": "required",
                                            "HttpPutResponseHopLimit": 1}}},
        volumes=[], interfaces=[],
    )  # fmt: skip


def test_groups_become_pools_by_their_tag_with_labels_taints_and_capacity() -> None:
    label = "k8s.io/cluster-autoscaler/node-template/label/"
    taint = "k8s.io/cluster-autoscaler/node-template/taint/"
    common = {
        "kops.k8s.io/instancegroup": "batch",
        f"{label}workload": "batch",
        f"{label}kubeshift.io/pool": "batch",  # kubeshift's own label: not proposed
        f"{taint}dedicated": "batch:NoSchedule",
    }
    live = _live(
        _group("batch-a", "subnet-prv-a", **common),
        _group("batch-a-spot", "subnet-prv-a", spot=True, **common),
    )

    proposal = propose(live, "Z1")

    assert proposal.problems == ["No record in the zone points at the API load balancer."]
    (pool,) = proposal.cluster["worker_pools"]
    assert pool["name"] == "batch"
    assert pool["capacity_types"] == ["on-demand", "spot"]
    assert pool["azs"] == ["eu-west-1a"]  # not every AZ of the network
    assert pool["labels"] == {"workload": "batch"}
    assert pool["taints"] == [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
    assert pool["root_volume_size"] == 80
    assert pool["metadata_hop_limit"] == 1  # kops's: pods do not reach the metadata
    network = proposal.cluster["network"]
    assert network["private_subnets"] == ["10.0.64.0/19", "10.0.96.0/19"]
    assert (network["enable_nat_gateway"], network["single_nat_gateway"]) == (True, False)
    assert proposal.cluster["tags"] == {"team": "payments"}


def _spanning(group: Any, *types: str) -> Any:
    overrides = [{"InstanceType": t} for t in types]
    group["MixedInstancesPolicy"]["LaunchTemplate"]["Overrides"] = overrides
    return group


def test_a_kops_instance_group_spanning_zones_and_types_is_a_pool_grouped_per_capacity() -> None:
    group = "kops.k8s.io/instancegroup"
    live = _live(
        _spanning(
            _group("nodes.shop.k8s.local", "subnet-prv-a,subnet-prv-b", size=4, **{group: "nodes"}),
            "m5a.large",
            "m5.large",
        ),
    )

    proposal = propose(live, "Z1")

    (pool,) = proposal.cluster["worker_pools"]
    assert pool["group_per"] == "capacity"
    assert pool["instance_types"] == ["m5a.large", "m5.large"]  # in priority order
    assert (pool["capacity_types"], pool["desired_size"]) == (["on-demand"], 4)
    assert "azs" not in pool  # both AZs of the network
    assert not [p for p in proposal.problems if "nodes" in p]


def test_a_pool_mixing_spanning_and_single_zone_groups_is_a_problem() -> None:
    tag = {"kops.k8s.io/instancegroup": "nodes"}
    live = _live(
        _group("nodes-all", "subnet-prv-a,subnet-prv-b", **tag),
        _group("nodes-a", "subnet-prv-a", spot=True, **tag),
    )

    proposal = propose(live, "Z1")

    assert (
        "Pool nodes mixes groups that span AZs or instance types with others: kubeshift "
        "models a pool as one group per capacity type or one per type, AZ and capacity "
        "type." in proposal.problems
    )


def test_a_group_whose_name_says_only_what_it_runs_is_a_problem_and_sizes_a_note() -> None:
    live = _live(
        _group("web-a", "subnet-prv-a", size=1, **{"kubeshift.io/pool": "web"}),
        _group("web-b", "subnet-prv-b", size=2, **{"kubeshift.io/pool": "web"}),
        _group("shop-m5-large-eu-west-1a-spot", "subnet-prv-a"),
    )

    proposal = propose(live, "Z1")

    assert (
        "Auto Scaling group shop-m5-large-eu-west-1a-spot matches no pool: it carries none "
        "of the tags kubeshift.io/pool, kops.k8s.io/instancegroup, and its name says no "
        "more than its AZ, instance type and capacity type." in proposal.problems
    )
    assert proposal.notes == [
        "Pool web: its 2 groups differ in size; proposed those of web-a for each."
    ]
    assert "azs" not in proposal.cluster["worker_pools"][0]  # every AZ of the network


@pytest.mark.parametrize(
    ("setting", "missing"),
    [("legacy_tags", "KubernetesCluster"), ("autoscaler_tags", "k8s.io/cluster-autoscaler/")],
)
def test_groups_without_a_kind_of_tag_propose_to_declare_none(setting: str, missing: str) -> None:
    tagged = _group("web-a", "subnet-prv-a", **{"kubeshift.io/pool": "web"})
    untagged = _group("web-a", "subnet-prv-a", **{"kubeshift.io/pool": "web"})
    untagged["Tags"] = [t for t in untagged["Tags"] if not t["Key"].startswith(missing)]

    assert setting not in propose(_live(tagged), "Z1").cluster
    proposal = propose(_live(untagged), "Z1")
    assert proposal.cluster[setting] is False
    assert any(missing.rstrip("/") in note for note in proposal.notes)


def _untagged(name: str, subnet: str, kind: str, *, spot_market: bool = False) -> Any:
    """A Terraform module's group: one instance type in one AZ, no policy, no pool tag."""
    group = _group(name, subnet)
    del group["MixedInstancesPolicy"]
    template = f"lt-{name}"
    group["LaunchTemplate"] = {"LaunchTemplateId": template, "Version": "1"}
    data: dict[str, Any] = {"ImageId": "ami-0123456789abcdef0", "InstanceType": kind}
    if spot_market:
        data["InstanceMarketOptions"] = {"MarketType": "spot"}
    return group, template, data


def test_groups_without_a_pool_tag_are_pooled_by_their_names_less_what_each_runs() -> None:
    """Seed 001's modules: a group per instance type, AZ and capacity type, named after
    them and nothing tagged for a pool. The name less those (and the cluster's name)
    is the pool; spot comes from the template's market options where there is no
    mixed-instances policy."""
    made = [
        _untagged(f"shop-general-{kind.replace('.', '-')}-eu-west-1{az}-{cap}",
                  f"subnet-prv-{az}", kind, spot_market=cap == "spot")
        for kind in ("m5.large", "c5.xlarge") for az in "ab" for cap in ("on-demand", "spot")
    ] + [_untagged("shop_batch_r5large_euwest1a_od", "subnet-prv-a", "r5.large")]  # fmt: skip
    live = _live(*(group for group, _, _ in made))
    live.templates.update({template: data for _, template, data in made})

    proposal = propose(live, "Z1")

    pools = {p["name"]: p for p in proposal.cluster["worker_pools"]}
    assert sorted(pools) == ["batch", "general"]
    general = pools["general"]
    assert general["instance_types"] == ["c5.xlarge", "m5.large"]
    assert general["capacity_types"] == ["on-demand", "spot"]
    assert "group_per" not in general  # one group per type, AZ and capacity, as the seed's
    assert general["template_per"] == "group"  # each its own template, spot by its market
    assert "template_per" not in pools["batch"]  # one on-demand group fits a shared one
    assert (pools["batch"]["capacity_types"], pools["batch"]["azs"]) == (
        ["on-demand"],
        ["eu-west-1a"],
    )
    noted = [n for n in proposal.notes if "carry no pool tag" in n]
    assert len(noted) == 2 and any(n.startswith("Pool general gathers 8 group(s)") for n in noted)
    assert not [p for p in proposal.problems if "matches no pool" in p]


def test_an_instance_group_whose_name_is_no_pool_name_becomes_a_valid_pool_noted() -> None:
    """kops names instance groups freely (up to a DNS label); a pool name goes into
    kubeshift's names and is 1-24 characters: a longer one is cut, with a hash that
    keeps two long names apart, and the proposal stays a valid stack."""
    long_a, long_b = "nodes-spot-m5-2xlarge-eu-west-1a", "nodes-spot-m5-2xlarge-eu-west-1b"
    ig = "kops.k8s.io/instancegroup"
    live = _live(
        _group(f"{long_a}.shop.k8s.local", "subnet-prv-a", **{ig: long_a}),
        _group(f"{long_b}.shop.k8s.local", "subnet-prv-b", **{ig: long_b}),
        _group("nodes.shop.k8s.local", "subnet-prv-a", **{ig: "nodes"}),
    )

    proposal = propose(live, "Z1")

    names = [p["name"] for p in proposal.cluster["worker_pools"]]
    assert "nodes" in names and len(names) == len(set(names)) == 3
    cut = [n for n in names if n != "nodes"]
    assert all(POOL_NAME.match(n) and n.startswith("nodes-spot-m5") for n in cut)
    assert sorted(n for n in proposal.notes if n.startswith("Pool ")) == sorted(
        f"Pool {pool} stands for {tagged!r}, which is not a pool name (1-24 lower-case "
        "letters, digits or hyphens); the live groups keep their names."
        for pool, tagged in zip(cut, (long_a, long_b), strict=True)
    )


def test_without_a_master_tag_the_members_are_the_groups_behind_the_apis_target_group() -> None:
    """A Terraform module's control plane carries no ``k8s.io/role/master``: its
    single-instance groups behind a target group on the API's port (not a node port)
    are the members; a worker group behind the ingress's node port is not, and neither
    is a larger group behind the API's port."""
    api_tg, ingress_tg = "arn:tg/api", "arn:tg/ingress"
    members = [_group(f"shop-cp-{n}", f"subnet-prv-{az}") for n, az in ((1, "a"), (2, "b"))]
    for member in members:
        member["MaxSize"], member["TargetGroupARNs"] = 1, [api_tg]
    workers = _group("shop-general-m5-large-eu-west-1a-spot", "subnet-prv-a")
    workers["TargetGroupARNs"] = [ingress_tg]
    bastion = _group("shop-api-proxies", "subnet-prv-a")
    bastion["TargetGroupARNs"] = [api_tg]  # MaxSize 3: not a member
    live = _live(*members, workers, bastion)
    lb = {"LoadBalancerName": "shop-api", "DNSName": "api.elb", "Scheme": "internal"}
    live.balancers = {
        "arn:lb/api": Balancer(lb=lb, listeners=[], rules=[],
                               target_groups={api_tg: {"Port": 6443}}),
        "arn:lb/ingress": Balancer(lb={**lb, "LoadBalancerName": "shop-ingress"}, listeners=[],
                                   rules=[], target_groups={ingress_tg: {"Port": 30443}}),
    }  # fmt: skip

    assert member_groups(live) == {"shop-cp-1", "shop-cp-2"}
    assert member_numbers(live) == {"shop-cp-1": 1, "shop-cp-2": 2}  # by turns from the AZs
    proposal = propose(live, "Z1")
    assert proposal.cluster["control_plane"]["members"] == 2
    assert any("No group carries k8s.io/role/master" in n for n in proposal.notes)


def _master(name: str, subnet: str, **tags: str) -> Any:
    return _group(name, subnet, **{"k8s.io/role/master": "1", **tags})


def test_members_are_numbered_by_kops_instance_group_names_without_kubeshifts_tag() -> None:
    live = _live(
        _master("master-eu-west-1b-2.masters.shop.k8s.local", "subnet-prv-b"),
        _master("master-eu-west-1a-1.masters.shop.k8s.local", "subnet-prv-a"),
        _master("master-eu-west-1a-3.masters.shop.k8s.local", "subnet-prv-a"),
    )
    assert member_numbers(live) == {
        "master-eu-west-1a-1.masters.shop.k8s.local": 1,
        "master-eu-west-1b-2.masters.shop.k8s.local": 2,
        "master-eu-west-1a-3.masters.shop.k8s.local": 3,
    }
    plane = propose(live, None).cluster["control_plane"]
    # members 1, 2, 3 in a, b, a: the program's rotation over the cluster's AZs
    assert "azs" not in plane
    assert plane["root_volume_size"] == 80  # what the members' template maps


def test_unnumbered_members_are_taken_by_turns_from_their_azs() -> None:
    live = _live(
        _master("master-eu-west-1b.masters.shop.k8s.local", "subnet-prv-b"),
        _master("master-eu-west-1a-green.masters.shop.k8s.local", "subnet-prv-a"),
        _master("master-eu-west-1a-blue.masters.shop.k8s.local", "subnet-prv-a"),
    )
    assert member_numbers(live) == {
        "master-eu-west-1a-blue.masters.shop.k8s.local": 1,
        "master-eu-west-1b.masters.shop.k8s.local": 2,
        "master-eu-west-1a-green.masters.shop.k8s.local": 3,
    }
    assert "azs" not in propose(live, None).cluster["control_plane"]


def test_kubeshifts_member_tags_win_when_every_member_carries_one() -> None:
    live = _live(
        _master("cp-a", "subnet-prv-a", **{"kubeshift.io/member": "2"}),
        _master("cp-b", "subnet-prv-b", **{"kubeshift.io/member": "1"}),
    )
    assert member_numbers(live) == {"cp-a": 2, "cp-b": 1}
    # member 1 in b, member 2 in a: not the rotation a, b, so the AZs are proposed
    assert propose(live, None).cluster["control_plane"]["azs"] == ["eu-west-1b", "eu-west-1a"]


def test_the_first_members_address_is_read_from_an_interface_described_as_its_own() -> None:
    live = _live(_master("master-eu-west-1a-1.masters.shop.k8s.local", "subnet-prv-a"))
    live.interfaces = [
        {"Description": "etcd member 1 of shop", "PrivateIpAddress": "10.0.64.10",
         "SubnetId": "subnet-prv-a", "TagSet": []},
        {"Description": "Primary network interface", "PrivateIpAddress": "10.0.64.99",
         "SubnetId": "subnet-prv-a", "TagSet": []},
    ]  # fmt: skip
    assert propose(live, None).cluster["control_plane"]["host_index"] == 10


def test_kops_etcd_manager_is_proposed_and_the_events_volumes_do_not_size_the_members() -> None:
    live = _live(*(
        _master(f"master-eu-west-1{az}-{n}.masters.shop.k8s.local", f"subnet-prv-{az}")
        for n, az in ((1, "a"), (2, "b"))
    ))  # fmt: skip

    def volume(n: int, kind: str, size: int, type_: str) -> dict[str, Any]:
        tags = _tags(**{f"k8s.io/etcd/{kind}": f"{n}/1,2", "k8s.io/role/master": "1"})
        return {"VolumeId": f"vol-{kind}-{n}", "Size": size, "VolumeType": type_, "Tags": tags}

    live.volumes = [volume(1, "events", 8, "io1"), volume(2, "events", 8, "io1"),
                    volume(1, "main", 20, "gp3"), volume(2, "main", 20, "gp3")]  # fmt: skip
    proposal = propose(live, None)
    plane = proposal.cluster["control_plane"]
    assert (plane["etcd_volume_size"], plane["etcd_volume_type"]) == (20, "gp3")
    assert plane["membership"] == "etcd-manager" and "etcd_names" not in plane
    noted = [n for n in proposal.notes if "etcd-manager keeps membership" in n]
    assert len(noted) == 1 and "k8s.io/etcd/events (2)" in noted[0]

    live.volumes = [v for v in live.volumes if "main" not in v["VolumeId"]]
    plain = propose(live, None)  # no volume etcd-manager claims: static members
    assert "membership" not in plain.cluster["control_plane"]
    assert not [n for n in plain.notes if "etcd-manager" in n]


def test_etcd_managers_member_names_are_matched_to_members_by_zone() -> None:
    """kops names etcd members after their zones (a, b): each member's name is the one
    whose volume sits in its AZ."""
    live = _live(*(
        _master(f"master-eu-west-1{az}-{n}.masters.shop.k8s.local", f"subnet-prv-{az}")
        for n, az in ((1, "a"), (2, "b"))
    ))  # fmt: skip
    live.volumes = [
        {"VolumeId": f"vol-{az}", "Size": 20, "VolumeType": "gp3",
         "AvailabilityZone": f"eu-west-1{az}", "Tags": _tags(**{"k8s.io/etcd/main": f"{az}/a,b"})}
        for az in ("b", "a")
    ]  # fmt: skip
    proposal = propose(live, None)
    assert proposal.cluster["control_plane"]["etcd_names"] == ["a", "b"]
    assert not [p for p in proposal.problems if "etcd" in p]


def _balancer(dns_name: str) -> Any:
    from automation.adoption.live import Balancer

    return Balancer(lb={"DNSName": dns_name}, listeners=[], target_groups={}, rules=[])


def test_kops_api_record_aliased_to_its_balancer_is_proposed_as_an_alias() -> None:
    """kops points ``api.<cluster>`` at its NLB by an alias A record (no TTL of its own);
    the ingress record is a CNAME whose TTL the proposal keeps."""
    from automation.adoption.proposal import Proposal, _dns

    live = _live()
    live.records = [
        {"Name": "api.shop.example.com.", "Type": "A",
         "AliasTarget": {"DNSName": "dualstack.API-1.elb.eu-west-1.amazonaws.com.",
                         "HostedZoneId": "Z2IFOLAFXWLO4F", "EvaluateTargetHealth": False}},
        {"Name": "\\052.apps.shop.example.com.", "Type": "CNAME", "TTL": 30,
         "ResourceRecords": [{"Value": "ingress-1.elb.eu-west-1.amazonaws.com"}]},
        {"Name": "other.shop.example.com.", "Type": "A", "TTL": 300,
         "ResourceRecords": [{"Value": "10.0.0.1"}]},
    ]  # fmt: skip
    proposal = Proposal(cluster={})
    api = _balancer("api-1.elb.eu-west-1.amazonaws.com")
    ingress = _balancer("ingress-1.elb.eu-west-1.amazonaws.com")
    dns = _dns(live, "Z0SHOP", api, ingress, proposal)
    assert dns == {
        "zone_id": "Z0SHOP", "api_record": "api.shop.example.com", "api_alias": True,
        "ingress_records": ["*.apps.shop.example.com"], "ttl": 30,
    }  # fmt: skip
    assert proposal.problems == []
