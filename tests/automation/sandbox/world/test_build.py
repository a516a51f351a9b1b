"""The sandbox's live cluster built with boto3 under kops's names: no engine, no state,
and what ``kubeshift adopt`` reads back from it is the cluster that was built."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from automation.adoption.discovery import discover
from automation.adoption.stack_file import propose_stack
from automation.aws.clients import AwsAccess, AwsClients
from automation.sandbox.boots import nodeup_config_hash, nodeup_config_key
from automation.sandbox.kubelet_flags import kops_role, user_data_text
from automation.sandbox.moto_gaps.ec2 import portless_protocols
from automation.sandbox.provider.model import Aws
from automation.sandbox.world.build import EVENTS_VOLUME, KOPS_POLICY, KOPS_RULE, Built, build
from automation.sandbox.world.firewall import open_as_kops
from automation.sandbox.world.kops import (
    DESCRIPTIONS,
    KOPS_GROUP_METRICS,
    KOPS_RULES,
    STATE_STORE,
    domain,
    load_balancer_name,
    nodeup_script,
)
from automation.sandbox.world.model import kops_cluster
from components.contract.loading import load_config
from tests.support.moto_fixtures import MotoServer

LOCAL = Path(__file__).resolve().parents[4] / "stacks" / "Pulumi.local.yaml"
REGION = "us-west-2"


@pytest.fixture
def values(kops_values: dict[str, Any]) -> dict[str, Any]:
    return kops_values


@pytest.fixture
def built(kops_values: dict[str, Any], moto: MotoServer) -> list[Built]:
    return build(kops_values, Aws(REGION, moto.endpoint_url))


NAMED = ("autoscaling:group", "ec2:launch-template", "ec2:security-group", "iam:role",
         "elbv2:load-balancer", "elbv2:target-group", "ec2:volume")  # fmt: skip
"""What a name identifies: ``kubeshift:cluster.names`` keeps each."""


def test_the_cluster_runs_under_kops_names(
    built: list[Built], values: dict[str, Any], moto: MotoServer
) -> None:
    aws = Aws(REGION, moto.endpoint_url)
    dns = domain("local-demo")
    # the VPC and its parts, named as kops names them
    names = {(b.kind, b.name) for b in built}
    assert {("ec2:vpc", dns), ("ec2:route-table", dns), ("ec2:internet-gateway", dns)} < names
    for zone in ("us-west-2a", "us-west-2b"):
        assert ("ec2:subnet", f"{zone}.{dns}") in names
        assert ("ec2:subnet", f"utility-{zone}.{dns}") in names
        assert ("ec2:route-table", f"private-{zone}.{dns}") in names
    # one NAT gateway, as the stack asks: both private tables route through it
    assert [b.name for b in built if b.kind == "ec2:nat-gateway"] == [f"us-west-2a.{dns}"]
    # kops attaches no policy to its roles: its grants are inline, one policy per role
    # named as the role; nothing of kubeshift's is granted while nodeup boots every node
    iam = aws.client("iam")
    for role in (f"masters.{dns}", f"nodes.{dns}"):
        assert iam.list_role_policies(RoleName=role)["PolicyNames"] == [role]
        assert iam.list_attached_role_policies(RoleName=role)["AttachedPolicies"] == []
    masters = iam.get_role_policy(RoleName=f"masters.{dns}", PolicyName=f"masters.{dns}")
    actions = {a for s in masters["PolicyDocument"]["Statement"] for a in s["Action"]}
    assert {"ec2:AttachVolume", "autoscaling:SetDesiredCapacity"} <= actions
    listed = aws.client("autoscaling").describe_auto_scaling_groups()["AutoScalingGroups"]
    groups = {g["AutoScalingGroupName"]: g for g in listed}
    assert "master-us-west-2b-2.masters.local-demo.k8s.local" in groups
    assert all(name.endswith(".local-demo.k8s.local") for name in groups)
    running = sum(len(g["Instances"]) for g in groups.values())
    assert running == 11  # 3 members and 4 workers in each of the 2 worker groups
    # a kops instance group: one group over both zones and types, named as its template
    spot = groups["general-spot.local-demo.k8s.local"]
    assert len(spot["VPCZoneIdentifier"].split(",")) == 2
    assert sorted(i["AvailabilityZone"] for i in spot["Instances"]) == [
        "us-west-2a", "us-west-2a", "us-west-2b", "us-west-2b"
    ]  # fmt: skip
    overrides = spot["MixedInstancesPolicy"]["LaunchTemplate"]["Overrides"]
    assert {o["InstanceType"] for o in overrides} == {"m5.large", "m5a.large"}
    # the groups launched last: no instance holds a member interface's fixed address
    interfaces = aws.ec2.describe_network_interfaces()["NetworkInterfaces"]
    addresses = [i["PrivateIpAddress"] for i in interfaces]
    assert len(addresses) == len(set(addresses))
    listed_groups = aws.ec2.describe_security_groups()["SecurityGroups"]
    described = {g["GroupName"]: g["Description"] for g in listed_groups}
    # kops's three groups say what kops says they are for, and nothing was added by
    # hand beside them: no ingress load balancer's group, no group every instance carries
    assert {role: described[f"{role}.{dns}"] for role in DESCRIPTIONS} == DESCRIPTIONS
    assert set(described) == {"default", *(f"{role}.{dns}" for role in DESCRIPTIONS)}
    # kops's ingress is a LoadBalancer Service: the only balancer is the API's
    balancers = aws.client("elbv2").describe_load_balancers()["LoadBalancers"]
    assert [b["LoadBalancerName"] for b in balancers] == [
        load_balancer_name("api", "local-demo", f"api.{dns}")
    ]
    # every template boots kops's nodeup, a member's as a control-plane instance group
    templates = aws.ec2.describe_launch_templates()["LaunchTemplates"]
    roles = {
        t["LaunchTemplateName"]: kops_role(
            user_data_text(
                aws.ec2.describe_launch_template_versions(
                    LaunchTemplateId=t["LaunchTemplateId"], Versions=["$Latest"]
                )["LaunchTemplateVersions"][0]["LaunchTemplateData"]["UserData"]
            )
        )
        for t in templates
    }
    assert (
        roles == {name: "ControlPlane" if ".masters." in name else "Node" for name in roles}
        and len(roles) == 5
    )


def test_kops_settings_kubeshift_declares_otherwise_are_as_kops_left_them(
    built: list[Built], moto: MotoServer
) -> None:
    """Where AWS can change them in place and no kubeshift setting names them: the
    differences ``adopt --keep-live`` keeps."""
    aws = Aws(REGION, moto.endpoint_url)
    groups = aws.client("autoscaling").describe_auto_scaling_groups()["AutoScalingGroups"]
    assert len(groups) == 5
    for group in groups:
        assert {m["Metric"] for m in group["EnabledMetrics"]} == set(KOPS_GROUP_METRICS)
        assert group["HealthCheckGracePeriod"] == 0
    # each template's groups on its first interface; its instances run in them
    for template in aws.ec2.describe_launch_templates()["LaunchTemplates"]:
        data = aws.ec2.describe_launch_template_versions(
            LaunchTemplateId=template["LaunchTemplateId"], Versions=["$Latest"]
        )["LaunchTemplateVersions"][0]["LaunchTemplateData"]
        assert "SecurityGroupIds" not in data
        (interface,) = data["NetworkInterfaces"]
        assert interface["DeviceIndex"] == 0 and interface["Groups"]
        assert interface["AssociatePublicIpAddress"] is False
    reservations = aws.ec2.describe_instances()["Reservations"]
    assert all(i["SecurityGroups"] for r in reservations for i in r["Instances"])
    elb = aws.client("elbv2")
    balancers = elb.describe_load_balancers()["LoadBalancers"]
    target_groups = elb.describe_target_groups()["TargetGroups"]
    assert len(balancers) == 1 and len(target_groups) == 1

    def attribute(described: list[dict[str, str]], key: str) -> str:
        return next(a["Value"] for a in described if a["Key"] == key)

    for balancer in balancers:
        described = elb.describe_load_balancer_attributes(
            LoadBalancerArn=balancer["LoadBalancerArn"]
        )["Attributes"]
        assert attribute(described, "load_balancing.cross_zone.enabled") == "false"
    for group in target_groups:
        described = elb.describe_target_group_attributes(TargetGroupArn=group["TargetGroupArn"])[
            "Attributes"
        ]
        assert attribute(described, "deregistration_delay.timeout_seconds") == "300"


def _live_rules(moto: MotoServer) -> list[dict[str, Any]]:
    ec2 = Aws(REGION, moto.endpoint_url).ec2
    listed = ec2.describe_security_groups()["SecurityGroups"]
    groups = {g["GroupId"]: g["GroupName"] for g in listed}
    rules = ec2.describe_security_group_rules()["SecurityGroupRules"]
    return [{**r, "Group": groups[r["GroupId"]]} for r in rules]


def test_kops_opens_its_groups_its_own_way_and_nothing_else_is_opened(
    built: list[Built], moto: MotoServer
) -> None:
    dns = domain("local-demo")
    rules = _live_rules(moto)
    named = {t["Value"]: r for r in rules for t in r.get("Tags", []) if t["Key"] == "Name"}
    added = [b for b in built if b.kind == KOPS_RULE]
    # every rule of kops's model is live, and every rule is named as kops names them
    assert {b.name for b in added} == {rule.name(dns) for rule in KOPS_RULES}
    assert len(named) == len([r for r in rules if r["Group"] != "default"])
    # kops opens the API's port to anyone and nothing narrower: the ranges the stack file
    # allows are adoption's to add; kops's rule from the API's group to the members on
    # 443 is there once
    api = [r for r in rules if r["Group"] == f"api-elb.{dns}" and r.get("FromPort") == 443]
    assert sorted(r.get("CidrIpv4") for r in api) == ["0.0.0.0/0"]
    to_members = [r for r in rules if r["Group"] == f"masters.{dns}" and r.get("FromPort") == 443]
    assert len(to_members) == 1
    ssh = named[f"from-0.0.0.0/0-ingress-tcp-22to22-masters.{dns}"]
    assert (ssh["IpProtocol"], ssh["FromPort"], ssh["ToPort"]) == ("tcp", 22, 22)
    assert ssh["CidrIpv4"] == "0.0.0.0/0" and ssh["Group"] == f"masters.{dns}"
    etcd_gap = named[f"from-nodes.{dns}-ingress-tcp-2382to4000-masters.{dns}"]
    nodes_group = next(r["GroupId"] for r in rules if r["Group"] == f"nodes.{dns}")
    assert etcd_gap["ReferencedGroupInfo"]["GroupId"] == nodes_group
    v6 = [r for r in rules if r.get("CidrIpv6") == "::/0" and r["IsEgress"]]
    assert sorted(r["Group"] for r in v6) == [f"{g}.{dns}" for g in ("api-elb", "masters", "nodes")]


def test_with_calico_kops_admits_the_nodes_ip_in_ip_to_the_members(
    built: list[Built],
    values: dict[str, Any],
    moto: MotoServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from moto.ec2.models.security_groups import SecurityGroupRule

    dns = domain("local-demo")
    assert [r for r in _live_rules(moto) if r["IpProtocol"] == "4"] == []  # no Calico here
    monkeypatch.setattr(SecurityGroupRule, "__init__", SecurityGroupRule.__init__)  # undone
    portless_protocols()
    aws = Aws(REGION, moto.endpoint_url)
    calico = replace(kops_cluster(load_config(values)), calico=True)
    groups = {b.name.split(".", 1)[0]: b.id for b in built if b.kind == "ec2:security-group"}
    added = open_as_kops(aws, calico, groups)
    # the rest of kops's model is live already: only Calico's rule is new
    assert [b.name for b in added] == [f"from-nodes.{dns}-ingress-4-0to0-masters.{dns}"]
    live = _live_rules(moto)
    [ipip] = [r for r in live if r["IpProtocol"] == "4"]
    assert ipip["SecurityGroupRuleId"] == added[0].id
    assert ipip["Group"] == f"masters.{dns}" and not ipip["IsEgress"]
    assert (ipip["FromPort"], ipip["ToPort"]) == (-1, -1)  # AWS reports no ports as -1
    nodes_group = next(r["GroupId"] for r in live if r["Group"] == f"nodes.{dns}")
    assert ipip["ReferencedGroupInfo"]["GroupId"] == nodes_group


def _proposed(values: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    clients = AwsClients(AwsAccess(region=REGION))
    proposed = propose_stack(values, tmp_path / "Pulumi.local.yaml", clients)
    assert proposed.proposal.problems == []
    return proposed.values


def test_write_config_reads_back_every_name_kops_gave(
    built: list[Built], values: dict[str, Any], tmp_path: Path, moto: MotoServer
) -> None:
    clients = AwsClients(AwsAccess(region=REGION))
    proposed = propose_stack(values, tmp_path / "Pulumi.local.yaml", clients)
    assert proposed.proposal.problems == []
    # kops's volumes say etcd-manager keeps membership of a main and an events etcd;
    # its members are named by their numbers here, so no etcd_names
    assert [n for n in proposed.proposal.notes if "k8s.io/etcd/events (3)" in n]
    cluster = proposed.values["kubeshift:cluster"]
    assert cluster["control_plane"]["membership"] == "etcd-manager"
    assert "etcd_names" not in cluster["control_plane"]
    # with no kubeshift tag to say a pool, kops's instance groups are the pools: one
    # launch template each, its groups the zones and types
    pools = {p["name"]: (p["capacity_types"], p["group_per"]) for p in cluster["worker_pools"]}
    assert pools == {
        "general-on-demand": (["on-demand"], "capacity"), "general-spot": (["spot"], "capacity")
    }  # fmt: skip
    # kops's node templates: a 128 GiB root volume, and pods kept from the metadata
    settings = {(p["root_volume_size"], p["metadata_hop_limit"]) for p in cluster["worker_pools"]}
    assert settings == {(128, 1)}
    assert cluster["control_plane"]["root_volume_size"] == 64
    # every name the world gave what a name identifies, each kept once per kind
    assert set(cluster["names"].values()) == {b.name for b in built if b.kind in NAMED}
    # kops never wrote kubeshift's own tags, so the stack declares none
    assert cluster["own_tags"] is False
    assert "legacy_tags" not in cluster  # kops writes KubernetesCluster
    assert "autoscaler_tags" not in cluster  # and cluster-autoscaler's tags
    # nor a group both its workers and its members carry
    assert cluster["shared_group"] is False
    # kops's own tags, which kubeshift does not declare, are kept, and the Name it gave
    # each part of the VPC, by which adoption finds a route table or an address
    kept = cluster["kept_tags"]
    member = kept["local-demo-control-plane-asg-2"]
    assert member == {"kops.k8s.io/instancegroup": "master-us-west-2b-2"}
    worker = kept["local-demo-workers-general-spot-spot"]
    assert worker == {"k8s.io/role/node": "1", "kops.k8s.io/instancegroup": "general-spot"}
    dns = domain("local-demo")
    assert kept["local-demo-source-network-private-us-west-2a"] == {
        "Name": f"us-west-2a.{dns}", "SubnetType": "Private"
    }  # fmt: skip
    table = kept["local-demo-source-network-private-rt-us-west-2b"]
    assert table == {"Name": f"private-us-west-2b.{dns}"}
    assert kept["local-demo-source-network-nat-eip-us-west-2a"] == {"Name": f"us-west-2a.{dns}"}
    assert kept["local-demo-control-plane-etcd-2"] == {"k8s.io/etcd/main": "2/1,2,3"}
    # the tags of the rules kubeshift declares too: kops tags every rule it makes
    egress = kept["local-demo-common-sg-node-egress"]
    assert egress["Name"] == f"from-nodes.{dns}-egress-all-0to0-0.0.0.0/0"
    # kops's boot scripts too: the old workers' nodes must keep booting nodeup
    scripts = cluster["user_data"]
    assert sorted(scripts) == [
        "local-demo-control-plane-1", "local-demo-control-plane-2", "local-demo-control-plane-3",
        "local-demo-workers-general-on-demand-on-demand", "local-demo-workers-general-spot-spot",
    ]  # fmt: skip
    store = Aws(REGION, moto.endpoint_url).client("s3")

    def stored_hash(role: str, group: str) -> str:
        key = nodeup_config_key(dns, role, group)
        return nodeup_config_hash(store.get_object(Bucket=STATE_STORE, Key=key)["Body"].read())

    # each names its instance group's file in kops's state store by its hash, as nodeup
    # requires
    assert scripts["local-demo-control-plane-2"] == nodeup_script(
        "master-us-west-2b-2", dns, "ControlPlane",
        config_hash=stored_hash("ControlPlane", "master-us-west-2b-2"),
    )  # fmt: skip
    assert scripts["local-demo-workers-general-spot-spot"] == nodeup_script(
        "general-spot", dns, "Node", config_hash=stored_hash("Node", "general-spot")
    )
    # kops's descriptions are kept too: EC2 cannot change them
    assert cluster["descriptions"] == {
        "local-demo-api-lb": "Security group for api ELB",
        "local-demo-control-plane": "Security group for masters",
        "local-demo-node": "Security group for nodes",
    }


def test_with_the_proposal_every_resource_is_found_and_without_it_none_named_is(
    built: list[Built], values: dict[str, Any], tmp_path: Path
) -> None:
    clients = AwsClients(AwsAccess(region=REGION))
    proposed = _proposed(values, tmp_path)
    named = discover(proposed, clients, "local")
    assert named.problems == [] and named.skipped == []
    # what kops never built, adoption adds beside it: kubeshift's ingress load balancer
    # (its group, target groups, listeners, attachments and records) and the API's
    # client rules the stack file asks for; nothing else
    added: dict[str, set[str]] = {}
    for addition in named.additions:
        added.setdefault(addition.type.rsplit(":", 1)[-1], set()).add(addition.name)
    assert added.pop("LoadBalancer") == {"local-demo-ingress-lb"}
    assert added.pop("SecurityGroup") == {"local-demo-common-sg-ingress-lb"}
    assert {n.rsplit("-", 1)[0] for n in added.pop("TargetGroup")} == {"local-demo-ingress-tg"}
    assert {n.rsplit("-", 1)[0] for n in added.pop("Listener")} == {"local-demo-ingress-listener"}
    attachments = added.pop("Attachment")
    assert attachments and all(n.startswith("local-demo-ingress-attach-") for n in attachments)
    assert added.pop("Record") == {"local-demo-dns-ingress-0"}
    rules = added.pop("SecurityGroupIngressRule") | added.pop("SecurityGroupEgressRule")
    assert {n for n in rules if "ingress-lb" not in n} == {
        "local-demo-common-sg-api-lb-443-10-0-0-0-16",
        "local-demo-common-sg-api-lb-443-172-16-0-0-12",
    }
    assert added == {}
    assert not {a.name for a in named.additions} & {r.name for r in named.resources}
    # every rule the world made is one kubeshift declares, found, or kops's own: listed
    # as not modelled, and not taken
    found = {r.id for r in named.resources}
    unmodelled = named.unmodelled
    rules = {u.arn.rsplit("/", 1)[-1] for u in unmodelled if u.kind == "ec2:security-group-rule"}
    made = {b.id for b in built if b.kind in (KOPS_RULE, "ec2:security-group-rule")}
    assert rules | (made & found) == made and not rules & found
    kops = {rule.name(domain("local-demo")) for rule in KOPS_RULES}
    assert {b.name for b in built if b.id in rules} < kops
    # so are its events volumes, which no member has attached yet
    volumes = {u.arn.rsplit("/", 1)[-1] for u in named.unmodelled if u.kind == "ec2:volume"}
    assert volumes == {b.id for b in built if b.kind == EVENTS_VOLUME} and len(volumes) == 3
    assert not found & volumes
    # and its roles' inline policies: kops's grants, which kubeshift leaves to kops
    policies = {u.arn for u in named.unmodelled if u.kind == "iam:role-policy"}
    assert policies == {b.id for b in built if b.kind == KOPS_POLICY} and len(policies) == 2
    # everything else the world built, kubeshift declares and found
    ours = {b.id for b in built if b.kind in NAMED or b.kind.startswith("ec2:")}
    assert ours - volumes - rules <= found
    # booting kubeshift's script instead, the program grants what it calls: kubeshift's
    # own addition, no lookup problem (the preview shows its create, and adopt refuses it)
    own_boot = {**proposed, "kubeshift:cluster": dict(proposed["kubeshift:cluster"])}
    del own_boot["kubeshift:cluster"]["user_data"]
    booting = discover(own_boot, clients, "local")
    assert booting.problems == []
    assert {r.name for r in booting.resources} == {r.name for r in named.resources}
    # a stack file that expects kubeshift's shared group: one problem, and the way past it
    cluster = {**proposed["kubeshift:cluster"], "shared_group": True}
    shared = {**proposed, "kubeshift:cluster": cluster}
    expecting = discover(shared, clients, "local")
    assert len(expecting.problems) == 2, expecting.problems
    assert expecting.problems[0].startswith("local-demo-common-sg-shared: no live security group")
    assert "kubeshift:cluster.shared_group: false declares none" in expecting.problems[1]
    unnamed = discover(values, clients, "local")
    assert "local-demo-common-sg-node: no live security group local-demo-node in" in " ".join(
        unnamed.problems
    )
    assert len(unnamed.resources) < len(named.resources)
    # the refusal says where the missing names are
    hint = re.match(r"(\d+) resources tagged for local-demo \(", unnamed.problems[-1])
    assert hint and int(hint.group(1)) > 0, unnamed.problems[-1]
    assert "`kubeshift adopt --write-config FILE` proposes" in unnamed.problems[-1]


def test_up_keeps_a_whole_world_and_refuses_to_finish_one_cut_short(
    values: dict[str, Any], moto: MotoServer, tmp_path: Path
) -> None:
    from automation.sandbox.world_up import SandboxError, _build_live
    from tests.support.kops_world import sandbox_without_services

    paths, state = sandbox_without_services(tmp_path / "sandbox", moto, REGION)
    said: list[str] = []
    _build_live(values, paths, state, said.append, "kops")
    assert paths.world_built.exists() and "AWS resources" in said[-1]
    # what it says it built counts every rule the world made, beside groups and templates
    aws = Aws(REGION, moto.endpoint_url)
    rules = [r for r in _live_rules(moto) if r["Group"] != "default"]
    groups = aws.client("autoscaling").describe_auto_scaling_groups()["AutoScalingGroups"]
    counted = int(re.findall(r"(\d+) AWS resources", said[-1])[0])
    assert counted > len(rules) + 2 * len(groups)
    _build_live(values, paths, state, said.append, "kops")  # an `up` cut short after the build
    assert said[-1] == "  the live cluster local-demo is already built"
    vpcs = aws.ec2.describe_vpcs()["Vpcs"]
    assert len([v for v in vpcs if not v.get("IsDefault")]) == 1  # nothing built twice
    paths.world_built.unlink()  # as if the build itself had been cut short
    with pytest.raises(SandboxError, match=r"was cut short\. Run `kubeshift sandbox down`"):
        _build_live(values, paths, state, said.append, "kops")
