"""The sandbox's live cluster built with boto3 under kops's names: no engine, no state,
and what ``kubeshift adopt`` reads back from it is the cluster that was built."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from automation.adoption.discovery import discover
from automation.adoption.stack_file import propose_stack
from automation.aws.clients import AwsAccess, AwsClients
from automation.render import render_program
from automation.sandbox.bridge import kops_role, user_data_text
from automation.sandbox.moto_gaps import (
    grace_period_as_given,
    groups_spread_over_zones_and_types,
    interface_groups_reach_instances,
    portless_protocols,
    reserve_interface_addresses,
    rules_equal_whatever_their_descriptions,
)
from automation.sandbox.provider.model import Aws
from automation.sandbox.world.build import (
    EVENTS_VOLUME,
    KOPS_POLICY,
    KOPS_RULE,
    VPC,
    as_kops,
    as_kops_groups,
    build,
    foreign_boot_scripts,
    foreign_names,
    open_as_kops,
    with_names,
)
from automation.sandbox.world.kops import KOPS_GROUP_METRICS, KOPS_RULES, domain
from components.config import load_stack_file
from components.security_groups import DESCRIPTIONS
from tests.support.moto_fixtures import MotoServer

LOCAL = Path(__file__).resolve().parents[4] / "stacks" / "Pulumi.local.yaml"
REGION = "us-west-2"


@pytest.fixture
def values(moto: MotoServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The local stack, its hosted zone made in moto; moto as the sandbox runs it (AWS's
    managed policies loaded, interfaces' fixed addresses taken)."""
    from moto.autoscaling.models import AutoScalingBackend, FakeAutoScalingGroup
    from moto.ec2.models.elastic_network_interfaces import NetworkInterface
    from moto.ec2.models.instances import InstanceBackend
    from moto.ec2.models.security_groups import SecurityGroupRule

    monkeypatch.setenv("MOTO_IAM_LOAD_MANAGED_POLICIES", "true")  # the server is in-process
    monkeypatch.setattr(NetworkInterface, "__init__", NetworkInterface.__init__)  # undone after
    spread = FakeAutoScalingGroup.replace_autoscaling_group_instances
    monkeypatch.setattr(FakeAutoScalingGroup, "replace_autoscaling_group_instances", spread)
    monkeypatch.setattr(SecurityGroupRule, "__eq__", SecurityGroupRule.__eq__)
    create = AutoScalingBackend.create_auto_scaling_group
    monkeypatch.setattr(AutoScalingBackend, "create_auto_scaling_group", create)
    monkeypatch.setattr(InstanceBackend, "run_instances", InstanceBackend.run_instances)
    grace_period_as_given()
    interface_groups_reach_instances()
    reserve_interface_addresses()
    groups_spread_over_zones_and_types()
    rules_equal_whatever_their_descriptions()
    moto.reset()
    values = load_stack_file(LOCAL)
    route53 = moto.client("route53")
    zone = route53.create_hosted_zone(Name="local-demo.example.internal", CallerReference="t")
    values["kubeshift:cluster"]["dns"]["zone_id"] = zone["HostedZone"]["Id"].rsplit("/", 1)[-1]
    return values


@pytest.fixture
def built(values: dict[str, Any], moto: MotoServer) -> list[Any]:
    return build(values, Aws(REGION, moto.endpoint_url))


def _program_built(built: list[Any]) -> list[Any]:
    return [b for b in built if b.type not in (KOPS_RULE, KOPS_POLICY, EVENTS_VOLUME)]


def test_the_cluster_runs_under_kops_names(
    built: list[Any], values: dict[str, Any], moto: MotoServer
) -> None:
    # every resource the program declares for a cluster of kops's shape, and no other
    declared = [r for r in render_program(as_kops(values), "baseline").resources if r.custom]
    assert sorted(b.name for b in _program_built(built)) == sorted(r.name for r in declared)
    assert not [b for b in built if b.name.endswith("-shared")]
    # kops attaches no policy to its roles: its grants are inline, one policy per role
    # named as the role; nothing of kubeshift's is granted while nodeup boots every node
    attached = [b for b in built if b.type == "aws:iam/rolePolicyAttachment:RolePolicyAttachment"]
    assert attached == []
    aws = Aws(REGION, moto.endpoint_url)
    iam = aws.client("iam")
    dns = domain("local-demo")
    for role in (f"masters.{dns}", f"nodes.{dns}"):
        assert iam.list_role_policies(RoleName=role)["PolicyNames"] == [role]
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
    # kops's three groups say what kops says they are for; the group it does not build
    # keeps the program's description
    assert {described[f"{g}.{dns}"] for g in ("nodes", "masters", "api-elb")} == {
        "Security group for nodes",
        "Security group for masters",
        "Security group for api ELB",
    }
    assert described[f"ingress-lb.{dns}"] == DESCRIPTIONS["ingress-lb"]
    # no group every instance carries: kops builds none beside masters and nodes
    assert not [name for name in described if name.startswith("shared")]
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
    built: list[Any], moto: MotoServer
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
    assert len(balancers) == 2 and len(target_groups) == 3

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


def test_kops_opens_its_groups_its_own_way_beside_the_programs_rules(
    built: list[Any], moto: MotoServer
) -> None:
    dns = domain("local-demo")
    rules = _live_rules(moto)
    named = {t["Value"]: r for r in rules for t in r.get("Tags", []) if t["Key"] == "Name"}
    added = [b for b in built if b.type == KOPS_RULE]
    # every rule of kops's model is live; those the program declares too were not doubled
    assert {b.name for b in added} <= set(named)
    assert 0 < len(added) < len(KOPS_RULES)
    ssh = named[f"from-0.0.0.0/0-ingress-tcp-22to22-masters.{dns}"]
    assert (ssh["IpProtocol"], ssh["FromPort"], ssh["ToPort"]) == ("tcp", 22, 22)
    assert ssh["CidrIpv4"] == "0.0.0.0/0" and ssh["Group"] == f"masters.{dns}"
    etcd_gap = named[f"from-nodes.{dns}-ingress-tcp-2382to4000-masters.{dns}"]
    nodes_group = next(r["GroupId"] for r in rules if r["Group"] == f"nodes.{dns}")
    assert etcd_gap["ReferencedGroupInfo"]["GroupId"] == nodes_group
    v6 = [r for r in rules if r.get("CidrIpv6") == "::/0" and r["IsEgress"]]
    assert sorted(r["Group"] for r in v6) == [f"{g}.{dns}" for g in ("api-elb", "masters", "nodes")]


def test_with_calico_kops_admits_the_nodes_ip_in_ip_to_the_members(
    built: list[Any], moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.models.security_groups import SecurityGroupRule

    dns = domain("local-demo")
    assert [r for r in _live_rules(moto) if r["IpProtocol"] == "4"] == []  # no Calico here
    monkeypatch.setattr(SecurityGroupRule, "__init__", SecurityGroupRule.__init__)  # undone
    portless_protocols()
    aws = Aws(REGION, moto.endpoint_url)
    vpc_id = next(b.id for b in built if b.type == VPC)
    added = open_as_kops(aws, "local-demo", vpc_id, calico=True)
    # the rest of kops's model is live already: only Calico's rule is new
    assert [b.name for b in added] == [f"from-nodes.{dns}-ingress-4-0to0-masters.{dns}"]
    live = _live_rules(moto)
    [ipip] = [r for r in live if r["IpProtocol"] == "4"]
    assert ipip["SecurityGroupRuleId"] == added[0].id
    assert ipip["Group"] == f"masters.{dns}" and not ipip["IsEgress"]
    assert (ipip["FromPort"], ipip["ToPort"]) == (-1, -1)  # AWS reports no ports as -1
    nodes_group = next(r["GroupId"] for r in live if r["Group"] == f"nodes.{dns}")
    assert ipip["ReferencedGroupInfo"]["GroupId"] == nodes_group


def test_write_config_reads_back_every_name_kops_gave(
    built: list[Any], values: dict[str, Any], tmp_path: Path
) -> None:
    clients = AwsClients(AwsAccess(region=REGION))
    proposed = propose_stack(values, tmp_path / "Pulumi.local.yaml", clients)
    assert proposed.proposal.problems == []
    # kops's events etcd is named, not modelled: kubeshift moves the main one
    assert [n for n in proposed.proposal.notes if "(3 volume(s) tagged k8s.io/etcd/events" in n]
    cluster = proposed.values["kubeshift:cluster"]
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
    assert sorted(cluster["names"].values()) == sorted(foreign_names(values).values())
    # kops never wrote kubeshift's own tags, so the stack declares none
    assert cluster["own_tags"] is False
    # nor a group both its workers and its members carry
    assert cluster["shared_group"] is False
    # kops's own tags, which kubeshift does not declare, are kept: its 5 groups, 4
    # subnets and the members' 3 etcd volumes
    kept = cluster["kept_tags"]
    assert len(kept) == 12
    member = kept["local-demo-control-plane-asg-2"]
    assert member == {"kops.k8s.io/instancegroup": "master-us-west-2b-2"}
    worker = kept["local-demo-workers-general-spot-spot"]
    assert worker == {"k8s.io/role/node": "1", "kops.k8s.io/instancegroup": "general-spot"}
    assert kept["local-demo-source-network-private-us-west-2a"] == {"SubnetType": "Private"}
    assert kept["local-demo-control-plane-etcd-2"] == {"k8s.io/etcd/main": "2/1,2,3"}
    # kops's boot scripts too: the old workers' nodes must keep booting nodeup
    assert sorted(cluster["user_data"].values()) == sorted(foreign_boot_scripts(values).values())
    assert sorted(cluster["user_data"]) == [
        "local-demo-control-plane-1", "local-demo-control-plane-2", "local-demo-control-plane-3",
        "local-demo-workers-general-on-demand-on-demand", "local-demo-workers-general-spot-spot",
    ]  # fmt: skip
    # kops's descriptions are kept too: EC2 cannot change them
    assert cluster["descriptions"] == {
        "local-demo-api-lb": "Security group for api ELB",
        "local-demo-control-plane": "Security group for masters",
        "local-demo-node": "Security group for nodes",
    }


def test_with_the_names_every_resource_is_found_and_without_them_none_named_is(
    built: list[Any], values: dict[str, Any]
) -> None:
    clients = AwsClients(AwsAccess(region=REGION))
    named = discover(as_kops(values), clients, "local")
    assert named.problems == [] and named.skipped == []
    assert len(named.resources) == len(_program_built(built))
    # kops's own rules are found, listed as not modelled, and not taken
    rules = [u.arn for u in named.unmodelled if u.kind == "ec2:security-group-rule"]
    assert {arn.rsplit("/", 1)[-1] for arn in rules} == {b.id for b in built if b.type == KOPS_RULE}
    # so are its events volumes, which no member has attached yet
    volumes = {u.arn.rsplit("/", 1)[-1] for u in named.unmodelled if u.kind == "ec2:volume"}
    assert volumes == {b.id for b in built if b.type == EVENTS_VOLUME} and len(volumes) == 3
    assert not {r.id for r in named.resources} & volumes
    # and its roles' inline policies: kops's grants, which kubeshift leaves to kops
    policies = {u.arn for u in named.unmodelled if u.kind == "iam:role-policy"}
    assert policies == {b.id for b in built if b.type == KOPS_POLICY} and len(policies) == 2
    # booting kubeshift's script instead, the program grants what it calls: kubeshift's
    # own addition, no lookup problem (the preview shows its create, and adopt refuses it)
    own_boot = discover(
        as_kops_groups(with_names(values, foreign_names(values))), clients, "local"
    )
    assert own_boot.problems == []
    assert {r.name for r in own_boot.resources} == {r.name for r in named.resources}
    # a stack file that expects kubeshift's shared group: one problem, and the way past it
    shared = as_kops(values)
    shared["kubeshift:cluster"] = {**shared["kubeshift:cluster"], "shared_group": True}
    expecting = discover(shared, clients, "local")
    assert len(expecting.problems) == 2, expecting.problems
    assert expecting.problems[0].startswith("local-demo-common-sg-shared: no live security group")
    assert "kubeshift:cluster.shared_group: false declares none" in expecting.problems[1]
    unnamed = discover(values, clients, "local")
    assert "local-demo-common-sg-node: no live security group local-demo-node in" in " ".join(
        unnamed.problems
    )
    assert len(unnamed.resources) < len(_program_built(built))
    # the refusal says where the missing names are
    hint = re.match(r"(\d+) resources tagged for local-demo \(", unnamed.problems[-1])
    assert hint and int(hint.group(1)) > 0, unnamed.problems[-1]
    assert "`kubeshift adopt --write-config FILE` proposes" in unnamed.problems[-1]


def test_up_keeps_a_whole_world_and_refuses_to_finish_one_cut_short(
    values: dict[str, Any], moto: MotoServer, tmp_path: Path
) -> None:
    from automation.sandbox.commands import SandboxError, _build_as_kops
    from automation.sandbox.layout import SandboxPaths
    from automation.sandbox.state import SandboxState

    paths = SandboxPaths(tmp_path / "sandbox")
    paths.root.mkdir()
    state = SandboxState(
        stack="local", scenario="vpc-move", region=REGION, supervisor_pid=0,
        moto_endpoint=moto.endpoint_url, processes=[], clusters=[], pulumi_bin="pulumi",
        started_at=0.0,
    )  # fmt: skip
    said: list[str] = []
    _build_as_kops(values, paths, state, said.append)
    assert paths.world_built.exists() and "AWS resources" in said[-1]
    assert int(re.findall(r"(\d+) AWS resources", said[-1])[0]) > 80  # kops's rules too
    _build_as_kops(values, paths, state, said.append)  # an `up` cut short after the build
    assert said[-1] == "  the live cluster local-demo is already built"
    vpcs = Aws(REGION, moto.endpoint_url).ec2.describe_vpcs()["Vpcs"]
    assert len([v for v in vpcs if not v.get("IsDefault")]) == 1  # nothing built twice
    paths.world_built.unlink()  # as if the build itself had been cut short
    with pytest.raises(SandboxError, match=r"was cut short\. Run `kubeshift sandbox down`"):
        _build_as_kops(values, paths, state, said.append)
