"""The sandbox's moto, patched where it differs from AWS in a way a migration notices."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from botocore.parsers import ResponseParserError

from automation.sandbox.moto_gaps.autoscaling import (
    grace_period_as_given,
    groups_spread_over_zones_and_types,
    metrics_collection_adds_and_disables,
    spot_templates_refused_under_mixed_policies,
)
from automation.sandbox.moto_gaps.ec2 import (
    PEERING_STATUS,
    VOLUME_MODIFICATIONS_PER_DAY,
    addresses_taken_once,
    groups_in_use_stay,
    indexed_tag_lookups,
    instance_interfaces_go_with_it,
    interface_descriptions_cleared,
    interface_groups_reach_instances,
    launch_groups_in_one_place,
    nat_interfaces_go_with_them,
    peering_filters_applied,
    peering_status_in_place,
    portless_protocols,
    referenced_groups_stay,
    reservation_descriptions_kept,
    reserve_interface_addresses,
    rules_equal_whatever_their_descriptions,
    volume_modifications_as_aws,
)
from automation.sandbox.moto_gaps.elb import default_health_checks
from tests.support.moto_fixtures import MotoServer


def _instance_addresses(moto: MotoServer, fixed: str) -> tuple[set[str], str]:
    ec2 = moto.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.9.1.0/24")["Subnet"]["SubnetId"]
    member = ec2.create_network_interface(SubnetId=subnet, PrivateIpAddress=fixed)
    launched = ec2.run_instances(ImageId="ami-12c6146b", MinCount=12, MaxCount=12, SubnetId=subnet)[
        "Instances"
    ]
    return {i["PrivateIpAddress"] for i in launched}, member["NetworkInterface"]["PrivateIpAddress"]


def test_no_instance_is_given_an_interfaces_fixed_address(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.models.elastic_network_interfaces import NetworkInterface

    monkeypatch.setattr(NetworkInterface, "__init__", NetworkInterface.__init__)  # undone after
    reserve_interface_addresses()
    reserve_interface_addresses()  # idempotent: one wrapper
    addresses, fixed = _instance_addresses(moto, "10.9.1.10")
    assert fixed == "10.9.1.10"
    assert len(addresses) == 12 and fixed not in addresses


def test_unpatched_moto_hands_the_fixed_address_out(moto: MotoServer) -> None:
    """The gap itself: should moto close it, the patch can go."""
    addresses, fixed = _instance_addresses(moto, "10.9.1.10")
    assert fixed in addresses


def _new_classic_balancer(moto: MotoServer) -> dict[str, object]:
    elb = moto.client("elb")
    name = "kubeshift-gap-check"
    elb.create_load_balancer(
        LoadBalancerName=name,
        Listeners=[{"Protocol": "TCP", "LoadBalancerPort": 80, "InstancePort": 30080}],
        AvailabilityZones=[f"{moto.region}a"],
    )
    try:
        return dict(elb.describe_load_balancers(LoadBalancerNames=[name])[
            "LoadBalancerDescriptions"][0])  # fmt: skip
    finally:
        elb.delete_load_balancer(LoadBalancerName=name)


def test_a_new_classic_load_balancer_has_awss_default_health_check(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.elb.models import ELBBackend

    monkeypatch.setattr(ELBBackend, "create_load_balancer", ELBBackend.create_load_balancer)
    default_health_checks()
    default_health_checks()  # idempotent: one wrapper
    check = _new_classic_balancer(moto)["HealthCheck"]
    assert check == {
        "Target": "TCP:30080", "Interval": 30, "Timeout": 5,
        "UnhealthyThreshold": 2, "HealthyThreshold": 10,
    }  # fmt: skip


def test_unpatched_moto_gives_a_classic_load_balancer_no_health_check(moto: MotoServer) -> None:
    assert "HealthCheck" not in _new_classic_balancer(moto)


def _tagged_instances(moto: MotoServer, count: int) -> dict[str, dict[str, str]]:
    """Launch ``count`` tagged instances; describe them by tag; their tags by id."""
    ec2 = moto.client("ec2")
    tags = [{"Key": "kubernetes.io/cluster/gap", "Value": "owned"}, {"Key": "Name", "Value": "n"}]
    ec2.run_instances(
        ImageId="ami-12c6146b",
        MinCount=count,
        MaxCount=count,
        TagSpecifications=[{"ResourceType": "instance", "Tags": tags}],
    )
    found = ec2.describe_instances(
        Filters=[{"Name": "tag-key", "Values": ["kubernetes.io/cluster/gap"]}]
    )["Reservations"]
    described = {
        i["InstanceId"]: {t["Key"]: t["Value"] for t in i.get("Tags", [])}
        for r in found
        for i in r["Instances"]
    }
    for instance_id in described:
        ec2.terminate_instances(InstanceIds=[instance_id])
    return described


def _count_tag_scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from moto.ec2.models.tags import TagBackend

    scans = [0]
    original = TagBackend.describe_tags

    def counted(self: object, *args: object, **kwargs: object) -> object:
        scans[0] += 1
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(TagBackend, "describe_tags", counted)
    return scans


def test_one_resources_tags_are_read_without_scanning_every_tag(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.models.core import TaggedEC2Resource

    monkeypatch.setattr(TaggedEC2Resource, "get_tags", TaggedEC2Resource.get_tags)  # undone
    indexed_tag_lookups()
    indexed_tag_lookups()  # idempotent: one replacement
    scans = _count_tag_scans(monkeypatch)
    described = _tagged_instances(moto, 6)
    assert len(described) == 6
    assert all(t == {"kubernetes.io/cluster/gap": "owned", "Name": "n"} for t in described.values())
    assert scans[0] == 0


def test_unpatched_moto_scans_every_tag_for_each_resource(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gap itself: a tag scan per instance described, several per filtered one."""
    scans = _count_tag_scans(monkeypatch)
    described = _tagged_instances(moto, 6)
    assert len(described) == 6
    assert scans[0] >= 6


def _referencing_groups(moto: MotoServer) -> tuple[str, str, str]:
    """A nodes group admitting itself and a masters group admitting the nodes' group:
    kops's shape. Returns the EC2 VPC id, the nodes' and the masters' group ids."""
    ec2 = moto.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.8.0.0/16")["Vpc"]["VpcId"]
    nodes, masters = (
        ec2.create_security_group(GroupName=n, Description=n, VpcId=vpc)["GroupId"]
        for n in ("nodes.gap", "masters.gap")
    )
    for group in (nodes, masters):
        ec2.authorize_security_group_ingress(
            GroupId=group,
            IpPermissions=[{"IpProtocol": "-1", "UserIdGroupPairs": [{"GroupId": nodes}]}],
        )
    return vpc, nodes, masters


def test_a_group_another_groups_rule_refers_to_stays_until_the_rule_goes(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.models.security_groups import SecurityGroupBackend

    original = SecurityGroupBackend.delete_security_group
    monkeypatch.setattr(SecurityGroupBackend, "delete_security_group", original)  # undone
    referenced_groups_stay()
    referenced_groups_stay()  # idempotent: one wrapper
    ec2 = moto.client("ec2")
    _, nodes, masters = _referencing_groups(moto)
    with pytest.raises(ClientError) as refused:
        ec2.delete_security_group(GroupId=nodes)
    assert refused.value.response["Error"]["Code"] == "DependencyViolation"
    assert nodes in refused.value.response["Error"]["Message"]
    ec2.revoke_security_group_ingress(
        GroupId=masters,
        IpPermissions=[{"IpProtocol": "-1", "UserIdGroupPairs": [{"GroupId": nodes}]}],
    )
    ec2.delete_security_group(GroupId=nodes)  # its own rule about itself does not hold it
    ec2.delete_security_group(GroupId=masters)
    left = ec2.describe_security_groups(Filters=[{"Name": "group-id", "Values": [nodes, masters]}])
    assert left["SecurityGroups"] == []


def test_unpatched_moto_deletes_a_group_another_groups_rule_refers_to(moto: MotoServer) -> None:
    """The gap itself: the group goes while the masters' rule still names it."""
    ec2 = moto.client("ec2")
    _, nodes, masters = _referencing_groups(moto)
    ec2.delete_security_group(GroupId=nodes)
    left = ec2.describe_security_groups(Filters=[{"Name": "group-id", "Values": [nodes]}])
    assert left["SecurityGroups"] == []
    [group] = ec2.describe_security_groups(GroupIds=[masters])["SecurityGroups"]
    referred = [pair["GroupId"] for p in group["IpPermissions"] for pair in p["UserIdGroupPairs"]]
    assert referred == [nodes]


def _ipip_from_nodes(nodes: str) -> list[dict]:
    return [{"IpProtocol": "4", "UserIdGroupPairs": [{"GroupId": nodes}]}]


def test_a_rule_for_a_protocol_without_ports_is_kept_as_aws_keeps_it(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.models.security_groups import SecurityGroupRule

    monkeypatch.setattr(SecurityGroupRule, "__init__", SecurityGroupRule.__init__)  # undone
    portless_protocols()
    portless_protocols()  # idempotent: one wrapper
    ec2 = moto.client("ec2")
    _, nodes, masters = _referencing_groups(moto)
    ec2.authorize_security_group_ingress(GroupId=masters, IpPermissions=_ipip_from_nodes(nodes))
    group = ec2.describe_security_groups(GroupIds=[masters])["SecurityGroups"][0]
    (ipip,) = [p for p in group["IpPermissions"] if p["IpProtocol"] == "4"]
    assert "FromPort" not in ipip and "ToPort" not in ipip
    assert [pair["GroupId"] for pair in ipip["UserIdGroupPairs"]] == [nodes]
    (rule,) = [
        r
        for r in ec2.describe_security_group_rules(
            Filters=[{"Name": "group-id", "Values": [masters]}]
        )["SecurityGroupRules"]
        if r["IpProtocol"] == "4"
    ]
    assert (rule["FromPort"], rule["ToPort"]) == (-1, -1)
    with pytest.raises(ClientError) as again:
        ec2.authorize_security_group_ingress(GroupId=masters, IpPermissions=_ipip_from_nodes(nodes))
    assert again.value.response["Error"]["Code"] == "InvalidPermission.Duplicate"
    ec2.revoke_security_group_ingress(GroupId=masters, IpPermissions=_ipip_from_nodes(nodes))
    group = ec2.describe_security_groups(GroupIds=[masters])["SecurityGroups"][0]
    assert [p for p in group["IpPermissions"] if p["IpProtocol"] == "4"] == []


def test_unpatched_moto_fails_on_a_protocol_without_ports(moto: MotoServer) -> None:
    _, nodes, masters = _referencing_groups(moto)
    ec2 = boto3.client(
        "ec2",
        region_name=moto.region,
        endpoint_url=moto.endpoint_url,
        config=Config(retries={"max_attempts": 1}),
    )
    with pytest.raises(ResponseParserError, match="500 Internal Server Error"):  # a TypeError
        ec2.authorize_security_group_ingress(GroupId=masters, IpPermissions=_ipip_from_nodes(nodes))


def _spanning_group(moto: MotoServer, *, spot: bool) -> list[tuple[str, str]]:
    """(AZ, instance type) of each instance of a 6-instance group over two subnets."""
    ec2, asg = moto.client("ec2"), moto.client("autoscaling")
    vpc = ec2.create_vpc(CidrBlock="10.8.0.0/16")["Vpc"]["VpcId"]
    subnets = [
        ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.8.{i}.0/24", AvailabilityZone=moto.region + az)[
            "Subnet"]["SubnetId"]
        for i, az in enumerate("ab")
    ]  # fmt: skip
    template = ec2.create_launch_template(
        LaunchTemplateName=f"spanning-{spot}", LaunchTemplateData={"ImageId": "ami-12c6146b"}
    )["LaunchTemplate"]["LaunchTemplateId"]
    asg.create_auto_scaling_group(
        AutoScalingGroupName=f"spanning-{spot}", MinSize=0, MaxSize=6, DesiredCapacity=6,
        VPCZoneIdentifier=",".join(subnets),
        MixedInstancesPolicy={
            "LaunchTemplate": {
                "LaunchTemplateSpecification": {"LaunchTemplateId": template},
                "Overrides": [{"InstanceType": "m5.large"}, {"InstanceType": "m5a.large"}],
            },
            "InstancesDistribution": {"OnDemandPercentageAboveBaseCapacity": 0 if spot else 100},
        },
    )  # fmt: skip
    ids = [
        i["InstanceId"]
        for i in asg.describe_auto_scaling_groups(AutoScalingGroupNames=[f"spanning-{spot}"])[
            "AutoScalingGroups"][0]["Instances"]
    ]  # fmt: skip
    described = ec2.describe_instances(InstanceIds=ids)["Reservations"]
    return sorted(
        (i["Placement"]["AvailabilityZone"][-1], i["InstanceType"])
        for r in described
        for i in r["Instances"]
    )


def test_a_group_over_two_zones_balances_them_and_launches_its_override_types(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.autoscaling.models import FakeAutoScalingGroup

    replace = FakeAutoScalingGroup.replace_autoscaling_group_instances
    monkeypatch.setattr(FakeAutoScalingGroup, "replace_autoscaling_group_instances", replace)
    groups_spread_over_zones_and_types()
    groups_spread_over_zones_and_types()  # idempotent: one wrapper

    spot = _spanning_group(moto, spot=True)
    on_demand = _spanning_group(moto, spot=False)

    assert [az for az, _ in spot].count("a") == 3 and [az for az, _ in spot].count("b") == 3
    assert {t for _, t in spot} == {"m5.large", "m5a.large"}
    assert [az for az, _ in on_demand].count("a") == 3
    assert {t for _, t in on_demand} == {"m5.large"}  # on-demand: the first, by priority


def test_unpatched_moto_launches_a_whole_group_in_its_first_subnet(moto: MotoServer) -> None:
    assert {az for az, _ in _spanning_group(moto, spot=True)} == {"a"}


def _same_permission_twice(moto: MotoServer) -> str:
    """Authorize one permission from a group twice, described apart: the second's code."""
    ec2 = moto.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.7.0.0/16")["Vpc"]["VpcId"]
    group, peer = (
        ec2.create_security_group(GroupName=n, Description=n, VpcId=vpc)["GroupId"]
        for n in ("members", "api")
    )
    for description in ("from the API load balancer", ""):
        pair = {"GroupId": peer, **({"Description": description} if description else {})}
        try:
            ec2.authorize_security_group_ingress(
                GroupId=group,
                IpPermissions=[{"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443,
                                "UserIdGroupPairs": [pair]}],
            )  # fmt: skip
        except ClientError as exc:
            return str(exc.response["Error"]["Code"])
    return "added twice"


def test_a_permission_described_otherwise_is_refused_as_a_duplicate(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.models.security_groups import SecurityGroupRule

    monkeypatch.setattr(SecurityGroupRule, "__eq__", SecurityGroupRule.__eq__)  # undone after
    rules_equal_whatever_their_descriptions()
    rules_equal_whatever_their_descriptions()  # idempotent
    assert _same_permission_twice(moto) == "InvalidPermission.Duplicate"


def test_unpatched_moto_adds_a_permission_described_otherwise_again(moto: MotoServer) -> None:
    assert _same_permission_twice(moto) == "added twice"


def _collecting_group(moto: MotoServer) -> Any:
    ec2, autoscaling = moto.client("ec2"), moto.client("autoscaling")
    data = {"ImageId": "ami-12c6146b", "InstanceType": "t3.micro"}
    ec2.create_launch_template(LaunchTemplateName="nodes", LaunchTemplateData=data)
    autoscaling.create_auto_scaling_group(
        AutoScalingGroupName="nodes", LaunchTemplate={"LaunchTemplateName": "nodes"},
        MinSize=0, MaxSize=1, AvailabilityZones=[f"{moto.region}a"],
    )  # fmt: skip
    for metric in ("GroupMinSize", "GroupMaxSize"):  # one call each: AWS adds them up
        autoscaling.enable_metrics_collection(
            AutoScalingGroupName="nodes", Metrics=[metric], Granularity="1Minute"
        )
    return autoscaling


def _collected(autoscaling: Any) -> set[str]:
    group = autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=["nodes"])
    return {m["Metric"] for m in group["AutoScalingGroups"][0].get("EnabledMetrics") or []}


def test_metrics_are_added_up_and_disabled_as_aws_does(
    moto: MotoServer, metrics_gap_closed: None
) -> None:
    metrics_collection_adds_and_disables()  # idempotent
    autoscaling = _collecting_group(moto)
    assert _collected(autoscaling) == {"GroupMinSize", "GroupMaxSize"}
    autoscaling.disable_metrics_collection(AutoScalingGroupName="nodes", Metrics=["GroupMaxSize"])
    assert _collected(autoscaling) == {"GroupMinSize"}
    autoscaling.disable_metrics_collection(AutoScalingGroupName="nodes")  # none named: all
    assert _collected(autoscaling) == set()


def test_unpatched_moto_keeps_the_last_metric_enabled_and_cannot_disable(
    moto: MotoServer,
) -> None:
    autoscaling = _collecting_group(moto)
    assert _collected(autoscaling) == {"GroupMaxSize"}
    with pytest.raises((ClientError, ResponseParserError)):  # moto's server answers 500
        autoscaling.disable_metrics_collection(AutoScalingGroupName="nodes")


def _grace_periods(moto: MotoServer) -> dict[str, int]:
    ec2, autoscaling = moto.client("ec2"), moto.client("autoscaling")
    data = {"ImageId": "ami-12c6146b", "InstanceType": "t3.micro"}
    ec2.create_launch_template(LaunchTemplateName="nodes", LaunchTemplateData=data)
    for name, given in (("none", None), ("zero", 0), ("ten", 10)):
        autoscaling.create_auto_scaling_group(
            AutoScalingGroupName=name, LaunchTemplate={"LaunchTemplateName": "nodes"},
            MinSize=0, MaxSize=1, AvailabilityZones=[f"{moto.region}a"],
            **({} if given is None else {"HealthCheckGracePeriod": given}),
        )  # fmt: skip
    groups = autoscaling.describe_auto_scaling_groups()["AutoScalingGroups"]
    return {g["AutoScalingGroupName"]: g["HealthCheckGracePeriod"] for g in groups}


def test_a_groups_grace_period_is_as_given_and_none_is_zero(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.autoscaling.models import AutoScalingBackend

    create = AutoScalingBackend.create_auto_scaling_group
    monkeypatch.setattr(AutoScalingBackend, "create_auto_scaling_group", create)  # undone after
    grace_period_as_given()
    grace_period_as_given()  # idempotent
    assert _grace_periods(moto) == {"none": 0, "zero": 0, "ten": 10}


def test_unpatched_moto_makes_no_grace_period_and_zero_300(moto: MotoServer) -> None:
    assert _grace_periods(moto) == {"none": 300, "zero": 300, "ten": 10}


def _mixed_over_spot_template(moto: MotoServer) -> list[str]:
    """Create a mixing group over an on-demand template (taken), then over a spot one,
    then update the first onto the spot one: the error codes, "" where taken."""
    ec2, autoscaling = moto.client("ec2"), moto.client("autoscaling")
    data = {"ImageId": "ami-12c6146b", "InstanceType": "t3.micro"}
    ec2.create_launch_template(LaunchTemplateName="plain", LaunchTemplateData=data)
    spot = {**data, "InstanceMarketOptions": {"MarketType": "spot"}}
    ec2.create_launch_template(LaunchTemplateName="spot", LaunchTemplateData=spot)

    def policy(template: str) -> dict[str, Any]:
        return {
            "LaunchTemplate": {
                "LaunchTemplateSpecification": {"LaunchTemplateName": template},
                "Overrides": [{"InstanceType": "t3.micro"}, {"InstanceType": "t3a.micro"}],
            },
            "InstancesDistribution": {"OnDemandPercentageAboveBaseCapacity": 0},
        }

    codes = []
    calls = (
        (autoscaling.create_auto_scaling_group, "plain", "mixed"),
        (autoscaling.create_auto_scaling_group, "spot", "spotted"),
        (autoscaling.update_auto_scaling_group, "spot", "mixed"),
    )
    for call, template, name in calls:
        size = {"MinSize": 0, "MaxSize": 1} if call == calls[0][0] else {}
        try:
            call(
                AutoScalingGroupName=name, MixedInstancesPolicy=policy(template),
                AvailabilityZones=[f"{moto.region}a"], **size,
            )  # fmt: skip
            codes.append("")
        except ClientError as error:
            codes.append(error.response["Error"]["Code"])
    return codes


def test_a_mixing_group_takes_no_template_that_asks_for_spot(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.autoscaling.models import FakeAutoScalingGroup

    for method in ("_set_launch_configuration", "update"):  # undone after
        monkeypatch.setattr(FakeAutoScalingGroup, method, getattr(FakeAutoScalingGroup, method))
    spot_templates_refused_under_mixed_policies()
    spot_templates_refused_under_mixed_policies()  # idempotent
    assert _mixed_over_spot_template(moto) == ["", "InvalidQueryParameter", "InvalidQueryParameter"]
    groups = moto.client("autoscaling").describe_auto_scaling_groups()["AutoScalingGroups"]
    (mixed,) = groups  # the refused create made nothing; the refused update kept its template
    spec = mixed["MixedInstancesPolicy"]["LaunchTemplate"]["LaunchTemplateSpecification"]
    assert spec["LaunchTemplateName"] == "plain"


def test_unpatched_moto_takes_a_spot_template_under_a_mixing_group(moto: MotoServer) -> None:
    assert _mixed_over_spot_template(moto) == ["", "", ""]


def _launched_groups(moto: MotoServer) -> tuple[set[str], str]:
    ec2, autoscaling = moto.client("ec2"), moto.client("autoscaling")
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.9.1.0/24")["Subnet"]["SubnetId"]
    group = ec2.create_security_group(GroupName="nodes", Description="nodes", VpcId=vpc)
    interface = {"DeviceIndex": 0, "Groups": [group["GroupId"]], "AssociatePublicIpAddress": False}
    data = {"ImageId": "ami-12c6146b", "InstanceType": "t3.micro", "NetworkInterfaces": [interface]}
    ec2.create_launch_template(LaunchTemplateName="nodes", LaunchTemplateData=data)
    autoscaling.create_auto_scaling_group(
        AutoScalingGroupName="nodes", LaunchTemplate={"LaunchTemplateName": "nodes"},
        MinSize=1, MaxSize=1, DesiredCapacity=1, VPCZoneIdentifier=subnet,
    )  # fmt: skip
    (instance,) = [i for r in ec2.describe_instances()["Reservations"] for i in r["Instances"]]
    return {g["GroupId"] for g in instance["SecurityGroups"]}, group["GroupId"]


def test_an_instance_runs_in_its_templates_interface_groups(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.models.instances import InstanceBackend

    run = InstanceBackend.run_instances
    monkeypatch.setattr(InstanceBackend, "run_instances", run)  # undone after
    interface_groups_reach_instances()
    interface_groups_reach_instances()  # idempotent
    groups, nodes = _launched_groups(moto)
    assert groups == {nodes}


def test_unpatched_moto_runs_it_in_no_group(moto: MotoServer) -> None:
    groups, _ = _launched_groups(moto)
    assert groups == set()


def _peer(moto: MotoServer) -> None:
    ec2 = moto.client("ec2")
    a, b = (ec2.create_vpc(CidrBlock=c)["Vpc"]["VpcId"] for c in ("10.8.0.0/16", "10.9.0.0/16"))
    ec2.create_vpc_peering_connection(VpcId=a, PeerVpcId=b)


def test_a_peering_leaves_ec2s_shared_transformer_table_its_size(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.responses._base_response import EC2BaseResponse

    table = dict(EC2BaseResponse.RESPONSE_KEY_PATH_TO_TRANSFORMER)
    table.pop(PEERING_STATUS, None)
    monkeypatch.setattr(EC2BaseResponse, "RESPONSE_KEY_PATH_TO_TRANSFORMER", table)
    peering_status_in_place()
    peering_status_in_place()  # idempotent
    size = len(table)
    _peer(moto)
    assert len(table) == size  # nothing iterating it meanwhile can fail


def test_unpatched_moto_grows_the_table_on_its_first_peering(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.responses._base_response import EC2BaseResponse

    table = dict(EC2BaseResponse.RESPONSE_KEY_PATH_TO_TRANSFORMER)
    table.pop(PEERING_STATUS, None)
    monkeypatch.setattr(EC2BaseResponse, "RESPONSE_KEY_PATH_TO_TRANSFORMER", table)
    size = len(table)
    _peer(moto)
    assert len(table) == size + 1


def _code(refused: pytest.ExceptionInfo[ClientError]) -> str:
    return str(refused.value.response["Error"]["Code"])


def _subnet(moto: MotoServer, cidr: str) -> tuple[Any, str, list[str]]:
    """EC2, a subnet of a fresh VPC and two groups in it."""
    ec2 = moto.client("ec2")
    vpc = ec2.create_vpc(CidrBlock=cidr)["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock=cidr.replace("/16", "/24"))["Subnet"]
    groups = [
        ec2.create_security_group(GroupName=f"g{i}", Description="g", VpcId=vpc)["GroupId"]
        for i in range(2)
    ]
    return ec2, subnet["SubnetId"], groups


def _patched(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, patch: Any) -> None:
    """Apply ``patch`` twice (idempotent: one wrapper), undone after the test."""
    monkeypatch.setattr(owner, name, getattr(owner, name))
    patch()
    patch()


def test_a_group_an_interface_or_a_running_instance_carries_stays(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.models.security_groups import SecurityGroupBackend

    _patched(monkeypatch, SecurityGroupBackend, "delete_security_group", groups_in_use_stay)
    ec2, subnet, (member, node) = _subnet(moto, "10.7.0.0/16")
    interface = ec2.create_network_interface(SubnetId=subnet, Groups=[member])
    instance = ec2.run_instances(
        ImageId="ami-12c6146b", MinCount=1, MaxCount=1, SubnetId=subnet, SecurityGroupIds=[node]
    )["Instances"][0]["InstanceId"]
    for group in (member, node):
        with pytest.raises(ClientError) as refused:
            ec2.delete_security_group(GroupId=group)
        assert _code(refused) == "DependencyViolation"
    ec2.delete_network_interface(
        NetworkInterfaceId=interface["NetworkInterface"]["NetworkInterfaceId"]
    )
    ec2.terminate_instances(InstanceIds=[instance])  # its primary interface goes with it
    ec2.delete_security_group(GroupId=member)
    ec2.delete_security_group(GroupId=node)


def test_unpatched_moto_deletes_a_group_a_running_instance_carries(moto: MotoServer) -> None:
    ec2, subnet, (_, node) = _subnet(moto, "10.7.0.0/16")
    ec2.run_instances(
        ImageId="ami-12c6146b", MinCount=1, MaxCount=1, SubnetId=subnet, SecurityGroupIds=[node]
    )
    ec2.delete_security_group(GroupId=node)
    assert (
        ec2.describe_security_groups(Filters=[{"Name": "group-id", "Values": [node]}])[
            "SecurityGroups"
        ]
        == []
    )


def _terminated_interfaces(moto: MotoServer) -> tuple[Any, str, list[str]]:
    """EC2, a subnet, and the interfaces left in it after three instances ended: one
    launched plainly, one from a template whose interface leaves DeleteOnTermination
    unset, one whose template says false (each terminated twice)."""
    ec2, subnet, (group, _) = _subnet(moto, "10.8.0.0/16")
    for name, spec in (("unset", {}), ("kept", {"DeleteOnTermination": False})):
        interface = {"DeviceIndex": 0, "SubnetId": subnet, "Groups": [group], **spec}
        ec2.create_launch_template(
            LaunchTemplateName=name,
            LaunchTemplateData={"ImageId": "ami-12c6146b", "NetworkInterfaces": [interface]},
        )
    launched = [
        ec2.run_instances(ImageId="ami-12c6146b", MinCount=1, MaxCount=1, SubnetId=subnet),
        *(
            ec2.run_instances(
                MinCount=1, MaxCount=1, SubnetId=subnet, LaunchTemplate={"LaunchTemplateName": n}
            )
            for n in ("unset", "kept")
        ),
    ]
    ids = [r["Instances"][0]["InstanceId"] for r in launched]
    ec2.terminate_instances(InstanceIds=ids)
    ec2.terminate_instances(InstanceIds=ids)
    left = ec2.describe_network_interfaces(Filters=[{"Name": "subnet-id", "Values": [subnet]}])
    return ec2, subnet, [i["NetworkInterfaceId"] for i in left["NetworkInterfaces"]]


def test_an_instances_own_interfaces_go_with_it_unless_its_launch_kept_them(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.models.instances import Instance

    monkeypatch.setattr(Instance, "terminate", Instance.terminate)
    _patched(monkeypatch, Instance, "prep_nics", instance_interfaces_go_with_it)
    _, _, left = _terminated_interfaces(moto)
    assert len(left) == 1  # the one whose launch said DeleteOnTermination false


def test_unpatched_moto_keeps_every_terminated_instances_interface(moto: MotoServer) -> None:
    _, _, left = _terminated_interfaces(moto)
    assert len(left) == 3


def _active_peerings_of(moto: MotoServer) -> list[str]:
    """A VPC peered twice, the first peering deleted: the active peerings of the VPC,
    as vpc-move's preflight asks for them."""
    ec2 = moto.client("ec2")
    home = ec2.create_vpc(CidrBlock="10.11.0.0/16")["Vpc"]["VpcId"]
    peerings = []
    for cidr in ("10.12.0.0/16", "10.13.0.0/16"):
        other = ec2.create_vpc(CidrBlock=cidr)["Vpc"]["VpcId"]
        made = ec2.create_vpc_peering_connection(VpcId=home, PeerVpcId=other)
        peerings.append(made["VpcPeeringConnection"]["VpcPeeringConnectionId"])
        ec2.accept_vpc_peering_connection(VpcPeeringConnectionId=peerings[-1])
    ec2.delete_vpc_peering_connection(VpcPeeringConnectionId=peerings[0])
    found = ec2.describe_vpc_peering_connections(
        Filters=[
            {"Name": "requester-vpc-info.vpc-id", "Values": [home]},
            {"Name": "status-code", "Values": ["active"]},
        ]
    )["VpcPeeringConnections"]
    assert peerings[1] in [p["VpcPeeringConnectionId"] for p in found]
    return [p["Status"]["Code"] for p in found]


def test_a_peering_description_is_filtered_and_an_unknown_filter_refused(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.responses.vpc_peering_connections import VPCPeeringConnections

    _patched(
        monkeypatch, VPCPeeringConnections, "describe_vpc_peering_connections",
        peering_filters_applied,
    )  # fmt: skip
    assert _active_peerings_of(moto) == ["active"]
    with pytest.raises(ClientError) as refused:
        moto.client("ec2").describe_vpc_peering_connections(
            Filters=[{"Name": "expiration-time", "Values": ["2026-12-02"]}]
        )
    assert _code(refused) == "InvalidParameterValue"


def test_unpatched_moto_answers_a_deleted_peering_for_active_ones(moto: MotoServer) -> None:
    assert sorted(_active_peerings_of(moto)) == ["active", "deleted"]


def _deleted_nat_gateway(moto: MotoServer) -> tuple[Any, str, str]:
    """EC2, a VPC whose only subnet had a NAT gateway (deleted), and its Elastic IP."""
    ec2, subnet, _ = _subnet(moto, "10.9.0.0/16")
    vpc = ec2.describe_subnets(SubnetIds=[subnet])["Subnets"][0]["VpcId"]
    eip = ec2.allocate_address(Domain="vpc")["AllocationId"]
    gateway = ec2.create_nat_gateway(SubnetId=subnet, AllocationId=eip)["NatGateway"]
    ec2.delete_nat_gateway(NatGatewayId=gateway["NatGatewayId"])
    return ec2, vpc, eip


def _empty(ec2: Any, vpc: str) -> None:
    """Delete ``vpc``'s subnets and its groups but the default one."""
    in_vpc = [{"Name": "vpc-id", "Values": [vpc]}]
    for subnet in ec2.describe_subnets(Filters=in_vpc)["Subnets"]:
        ec2.delete_subnet(SubnetId=subnet["SubnetId"])
    for group in ec2.describe_security_groups(Filters=in_vpc)["SecurityGroups"]:
        if group["GroupName"] != "default":
            ec2.delete_security_group(GroupId=group["GroupId"])


def _interfaces_in(ec2: Any, vpc: str) -> list[str]:
    found = ec2.describe_network_interfaces(Filters=[{"Name": "vpc-id", "Values": [vpc]}])
    return [i["NetworkInterfaceId"] for i in found["NetworkInterfaces"]]


def test_a_nat_gateways_interface_goes_with_it_and_its_vpc_can_go(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.models.nat_gateways import NatGatewayBackend
    from moto.ec2.models.security_groups import SecurityGroupBackend

    _patched(monkeypatch, SecurityGroupBackend, "delete_security_group", groups_in_use_stay)
    _patched(monkeypatch, NatGatewayBackend, "delete_nat_gateway", nat_interfaces_go_with_them)
    ec2, vpc, eip = _deleted_nat_gateway(moto)
    assert _interfaces_in(ec2, vpc) == []
    address = ec2.describe_addresses(AllocationIds=[eip])["Addresses"][0]
    assert not address.get("AssociationId") and not address.get("NetworkInterfaceId")
    _empty(ec2, vpc)
    ec2.delete_vpc(VpcId=vpc)


def test_unpatched_moto_keeps_a_deleted_nat_gateways_interface(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.models.security_groups import SecurityGroupBackend

    _patched(monkeypatch, SecurityGroupBackend, "delete_security_group", groups_in_use_stay)
    ec2, vpc, _ = _deleted_nat_gateway(moto)
    assert len(_interfaces_in(ec2, vpc)) == 1
    _empty(ec2, vpc)
    with pytest.raises(ClientError) as refused:
        ec2.delete_vpc(VpcId=vpc)  # the interface holds the default group
    assert _code(refused) == "DependencyViolation"


def test_an_address_an_interface_holds_is_not_given_twice(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.models.elastic_network_interfaces import NetworkInterfaceBackend

    _patched(monkeypatch, NetworkInterfaceBackend, "create_network_interface", addresses_taken_once)
    ec2, subnet, _ = _subnet(moto, "10.6.0.0/16")
    first = ec2.create_network_interface(SubnetId=subnet, PrivateIpAddress="10.6.0.10")
    with pytest.raises(ClientError) as refused:
        ec2.create_network_interface(SubnetId=subnet, PrivateIpAddress="10.6.0.10")
    assert _code(refused) == "InvalidIPAddress.InUse"
    ec2.delete_network_interface(NetworkInterfaceId=first["NetworkInterface"]["NetworkInterfaceId"])
    again = ec2.create_network_interface(SubnetId=subnet, PrivateIpAddress="10.6.0.10")
    assert again["NetworkInterface"]["PrivateIpAddress"] == "10.6.0.10"


def test_unpatched_moto_gives_one_address_to_two_interfaces(moto: MotoServer) -> None:
    ec2, subnet, _ = _subnet(moto, "10.6.0.0/16")
    for _ in range(2):
        ec2.create_network_interface(SubnetId=subnet, PrivateIpAddress="10.6.0.10")
    held = ec2.describe_network_interfaces(
        Filters=[{"Name": "addresses.private-ip-address", "Values": ["10.6.0.10"]}]
    )["NetworkInterfaces"]
    assert len(held) == 2


def test_a_volume_is_not_shrunk_nor_modified_a_fifth_time_in_a_day(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.models.elastic_block_store import EBSBackend

    _patched(monkeypatch, EBSBackend, "modify_volume", volume_modifications_as_aws)
    ec2 = moto.client("ec2")
    volume = ec2.create_volume(Size=20, AvailabilityZone="us-west-2a")["VolumeId"]
    with pytest.raises(ClientError) as shrunk:
        ec2.modify_volume(VolumeId=volume, Size=10)
    assert _code(shrunk) == "InvalidParameterValue"
    for step in range(VOLUME_MODIFICATIONS_PER_DAY):
        ec2.modify_volume(VolumeId=volume, Size=21 + step)
    with pytest.raises(ClientError) as fifth:
        ec2.modify_volume(VolumeId=volume, Size=30)
    assert _code(fifth) == "VolumeModificationRateExceeded"
    [described] = ec2.describe_volumes(VolumeIds=[volume])["Volumes"]
    assert described["Size"] == 20 + VOLUME_MODIFICATIONS_PER_DAY


def test_unpatched_moto_shrinks_a_volume(moto: MotoServer) -> None:
    ec2 = moto.client("ec2")
    volume = ec2.create_volume(Size=20, AvailabilityZone="us-west-2a")["VolumeId"]
    ec2.modify_volume(VolumeId=volume, Size=10)
    assert ec2.describe_volumes(VolumeIds=[volume])["Volumes"][0]["Size"] == 10


def _template_naming_groups_twice(moto: MotoServer) -> tuple[Any, str]:
    ec2, subnet, (top, interface) = _subnet(moto, "10.5.0.0/16")
    ec2.create_launch_template(
        LaunchTemplateName="twice",
        LaunchTemplateData={
            "ImageId": "ami-12c6146b",
            "SecurityGroupIds": [top],
            "NetworkInterfaces": [{"DeviceIndex": 0, "SubnetId": subnet, "Groups": [interface]}],
        },
    )
    ec2.create_launch_template(
        LaunchTemplateName="kops",
        LaunchTemplateData={
            "ImageId": "ami-12c6146b",
            "NetworkInterfaces": [{"DeviceIndex": 0, "SubnetId": subnet, "Groups": [interface]}],
        },
    )
    return ec2, subnet


def test_a_launch_naming_groups_for_the_instance_and_an_interface_is_refused(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.models.instances import InstanceBackend

    monkeypatch.setattr(InstanceBackend, "run_instances", InstanceBackend.run_instances)
    interface_groups_reach_instances()
    _patched(monkeypatch, InstanceBackend, "run_instances", launch_groups_in_one_place)
    ec2, _ = _template_naming_groups_twice(moto)
    with pytest.raises(ClientError) as refused:
        ec2.run_instances(LaunchTemplate={"LaunchTemplateName": "twice"}, MinCount=1, MaxCount=1)
    assert _code(refused) == "InvalidParameterCombination"
    # kops's templates give their groups on the interface only: they launch
    [kops] = ec2.run_instances(
        LaunchTemplate={"LaunchTemplateName": "kops"}, MinCount=1, MaxCount=1
    )["Instances"]
    assert kops["SecurityGroups"]


def test_unpatched_moto_launches_from_a_template_naming_groups_twice(moto: MotoServer) -> None:
    ec2, _ = _template_naming_groups_twice(moto)
    launched = ec2.run_instances(
        LaunchTemplate={"LaunchTemplateName": "twice"}, MinCount=1, MaxCount=1
    )["Instances"]
    assert len(launched) == 1


def _reservation_description(moto: MotoServer) -> str | None:
    ec2, subnet, _ = _subnet(moto, "10.3.0.0/16")
    ec2.create_subnet_cidr_reservation(
        SubnetId=subnet, Cidr="10.3.0.10/32", ReservationType="explicit",
        Description="etcd member 1",
    )  # fmt: skip
    [found] = ec2.get_subnet_cidr_reservations(SubnetId=subnet)["SubnetIpv4CidrReservations"]
    return found.get("Description")


def test_a_reservation_answers_its_description(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.responses.subnets import Subnets

    _patched(monkeypatch, Subnets, "create_subnet_cidr_reservation", reservation_descriptions_kept)
    assert _reservation_description(moto) == "etcd member 1"


def test_unpatched_moto_drops_a_reservations_description(moto: MotoServer) -> None:
    assert _reservation_description(moto) is None


def _description_after_clearing(moto: MotoServer) -> str:
    ec2, subnet, _ = _subnet(moto, "10.4.0.0/16")
    interface = ec2.create_network_interface(SubnetId=subnet, Description="etcd member 0")
    id_ = interface["NetworkInterface"]["NetworkInterfaceId"]
    ec2.modify_network_interface_attribute(NetworkInterfaceId=id_, Description={"Value": ""})
    [found] = ec2.describe_network_interfaces(NetworkInterfaceIds=[id_])["NetworkInterfaces"]
    return str(found.get("Description"))


def test_an_interfaces_description_given_empty_is_cleared(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.models.elastic_network_interfaces import NetworkInterfaceBackend

    name = "modify_network_interface_attribute"
    _patched(monkeypatch, NetworkInterfaceBackend, name, interface_descriptions_cleared)
    assert _description_after_clearing(moto) == ""


def test_unpatched_moto_keeps_a_description_given_empty(moto: MotoServer) -> None:
    assert _description_after_clearing(moto) == "etcd member 0"
