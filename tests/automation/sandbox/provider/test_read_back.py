"""A refresh through the stand-in reads what the account holds: drift made out of band
is drift (``kubeshift recover`` and ``pulumi refresh`` must see it), and only what moto
genuinely leaves out keeps the state's value."""

from __future__ import annotations

from typing import Any

import pytest
from pulumi.runtime.proto import provider_pb2

from automation.sandbox.moto_gaps.ec2 import interface_descriptions_cleared
from automation.sandbox.provider.diffing import (
    Schema,
    decide,
    in_prior_order,
    read_back,
    shaped_like,
)
from automation.sandbox.provider.model import REGISTRY, Aws, Props, Request, ResourceType
from automation.sandbox.provider.servicer import AwsProvider, props_of, struct_of
from automation.sandbox.provider.types.network_interfaces import NetworkInterface
from automation.sandbox.provider.types.route53_records import Record
from automation.sandbox.provider.types.routes import Route
from automation.sandbox.provider.types.vpc import Vpc
from tests.support.moto_fixtures import MotoServer

STATE = {
    "name": "ingress-80",
    "healthCheck": {"interval": 10, "protocol": "TCP", "timeout": 10},
    "defaultActions": [{"type": "forward", "order": 1, "targetGroupArn": "arn:old"}],
    "tags": {"Name": "ingress", "team": "infra"},
}


def test_only_the_paths_moto_omits_keep_the_state() -> None:
    live = {
        "name": "ingress-80",
        "healthCheck": {"interval": 30, "protocol": "TCP"},
        "defaultActions": [{"type": "forward", "targetGroupArn": "arn:new"}],
        "tags": {"Name": "ingress"},
    }
    assert read_back(STATE, live, ()) == live  # a removed tag stays removed
    kept = read_back(STATE, live, ("healthCheck.timeout", "defaultActions[].order"))
    assert kept == {
        "name": "ingress-80",
        "healthCheck": {"interval": 30, "protocol": "TCP", "timeout": 10},
        "defaultActions": [{"type": "forward", "order": 1, "targetGroupArn": "arn:new"}],
        "tags": {"Name": "ingress"},
    }


def test_a_value_moto_reports_wins_over_the_state_even_on_an_omitted_path() -> None:
    live = {"healthCheck": {"timeout": 5}}
    assert read_back(STATE, live, ("healthCheck.timeout",)) == live


def test_read_inputs_keep_only_what_the_program_declared() -> None:
    declared = {"healthCheck": {"interval": 10}, "defaultActions": [{"type": "forward"}]}
    live = {
        "healthCheck": {"interval": 30, "timeout": 10},
        "defaultActions": [{"type": "forward", "order": 1}],
        "arn": "arn:x",
    }
    assert shaped_like(live, declared) == {
        "healthCheck": {"interval": 30},
        "defaultActions": [{"type": "forward"}],
    }


def test_a_set_reads_back_in_the_order_declared_and_a_reorder_is_no_change() -> None:
    """AWS lists an interface's security groups in its own order; Terraform's TypeSet
    has none, so neither a refresh nor the next preview may see a change."""
    declared = {"securityGroups": ["sg-b", "sg-a"], "subnetId": "subnet-1"}
    live = {"securityGroups": ["sg-a", "sg-b"], "subnetId": "subnet-1"}
    in_prior_order(NetworkInterface.sets, declared, live)
    assert live["securityGroups"] == ["sg-b", "sg-a"]
    reordered = {**declared, "securityGroups": ["sg-a", "sg-b"]}
    sets, force_new = NetworkInterface.sets, NetworkInterface.replace_props()
    assert decide(force_new, declared, reordered, Schema(sets=sets)).changed == ()
    assert decide(force_new, declared, reordered).changed == ("securityGroups",)  # as a list
    grown = {**declared, "securityGroups": ["sg-a", "sg-b", "sg-c"]}
    assert decide(force_new, declared, grown, Schema(sets=sets)).changed == ("securityGroups",)
    changed = {"securityGroups": ["sg-a", "sg-c"]}
    in_prior_order(NetworkInterface.sets, declared, changed)
    assert changed["securityGroups"] == ["sg-a", "sg-c"]  # other members: as AWS says


# -- drift made out of band, refreshed through the provider's Read over moto ----------


@pytest.fixture
def aws(moto: MotoServer) -> Aws:
    return Aws(region=moto.region, endpoint_url=moto.endpoint_url)


@pytest.fixture
def provider(moto: MotoServer) -> AwsProvider:
    served = AwsProvider()
    served.Configure(provider_pb2.ConfigureRequest(args=struct_of({"region": moto.region})), None)
    return served


def created(aws: Aws, kind: type[ResourceType], declared: Props) -> tuple[str, Props, Props]:
    """(id, checked inputs, outputs) of a resource made through the registered type."""
    resource = REGISTRY[kind.token]
    req = Request(name="drift", token=kind.token)
    inputs = resource.check(req, declared)
    id_, outputs = resource.create(aws, req, inputs)
    return id_, inputs, outputs


def refreshed(
    provider: AwsProvider, kind: type[ResourceType], id_: str, state: Props, inputs: Props
) -> tuple[Props, Props]:
    """What ``pulumi refresh`` stores for the resource: (outputs, inputs)."""
    urn = f"urn:pulumi:s::kubeshift::{kind.token}::drift"
    request = provider_pb2.ReadRequest(
        id=id_, urn=urn, properties=struct_of(state), inputs=struct_of(inputs)
    )
    answer = provider.Read(request, None)
    return props_of(answer.properties), props_of(answer.inputs)


def test_a_tag_removed_out_of_band_reads_as_removed(
    aws: Aws, provider: AwsProvider, moto: MotoServer
) -> None:
    tags = {"Name": "net", "team": "infra"}
    id_, inputs, state = created(aws, Vpc, {"cidrBlock": "10.0.0.0/16", "tags": tags})
    moto.client("ec2").delete_tags(Resources=[id_], Tags=[{"Key": "team"}])
    outputs, read_inputs = refreshed(provider, Vpc, id_, state, inputs)
    assert state["tags"] == tags  # what the state held
    assert outputs["tags"] == outputs["tagsAll"] == {"Name": "net"}
    assert read_inputs["tags"] == {"Name": "net"}


def test_a_description_cleared_out_of_band_reads_as_cleared(
    aws: Aws, provider: AwsProvider, moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.ec2.models.elastic_network_interfaces import NetworkInterfaceBackend

    name = "modify_network_interface_attribute"  # the sandbox's moto clears it, as AWS
    monkeypatch.setattr(NetworkInterfaceBackend, name, getattr(NetworkInterfaceBackend, name))
    interface_descriptions_cleared()
    ec2 = moto.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24")["Subnet"]["SubnetId"]
    declared = {"subnetId": subnet, "description": "etcd member 0"}
    id_, inputs, state = created(aws, NetworkInterface, declared)
    ec2.modify_network_interface_attribute(NetworkInterfaceId=id_, Description={"Value": ""})
    outputs, read_inputs = refreshed(provider, NetworkInterface, id_, state, inputs)
    assert state["description"] == "etcd member 0"
    assert not outputs.get("description") and not read_inputs.get("description")


def test_a_route_switched_from_a_nat_to_an_internet_gateway_reads_as_switched(
    aws: Aws, provider: AwsProvider, moto: MotoServer
) -> None:
    ec2 = moto.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24")["Subnet"]["SubnetId"]
    gateway = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=gateway, VpcId=vpc)
    allocation = ec2.allocate_address(Domain="vpc")["AllocationId"]
    nat = ec2.create_nat_gateway(SubnetId=subnet, AllocationId=allocation)
    nat_id = nat["NatGateway"]["NatGatewayId"]
    table = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    declared = {"routeTableId": table, "destinationCidrBlock": "0.0.0.0/0", "natGatewayId": nat_id}
    id_, inputs, state = created(aws, Route, declared)
    ec2.replace_route(RouteTableId=table, DestinationCidrBlock="0.0.0.0/0", GatewayId=gateway)
    outputs, read_inputs = refreshed(provider, Route, id_, state, inputs)
    assert state["natGatewayId"] == nat_id
    assert outputs["gatewayId"] == gateway and "natGatewayId" not in outputs
    assert "natGatewayId" not in read_inputs


def test_a_record_switched_to_an_alias_reads_as_an_alias(
    aws: Aws, provider: AwsProvider, moto: MotoServer
) -> None:
    r53 = moto.client("route53")
    zone = r53.create_hosted_zone(Name="example.com", CallerReference="drift")
    zone_id = zone["HostedZone"]["Id"].rsplit("/", 1)[-1]
    declared = {
        "zoneId": zone_id, "name": "api.example.com", "type": "A",
        "ttl": 60, "records": ["10.0.1.10"],
    }  # fmt: skip
    id_, inputs, state = created(aws, Record, declared)
    alias = {"HostedZoneId": "Z32O12XQLNTSW2", "DNSName": "lb-1.elb.amazonaws.com.",
             "EvaluateTargetHealth": False}  # fmt: skip
    change = {"Action": "UPSERT", "ResourceRecordSet": {
        "Name": "api.example.com.", "Type": "A", "AliasTarget": alias}}  # fmt: skip
    r53.change_resource_record_sets(HostedZoneId=zone_id, ChangeBatch={"Changes": [change]})
    outputs, read_inputs = refreshed(provider, Record, id_, state, inputs)
    assert state["records"] == ["10.0.1.10"]
    assert [a["name"] for a in outputs["aliases"]] == ["lb-1.elb.amazonaws.com"]
    assert "records" not in outputs and "ttl" not in outputs
    assert "records" not in read_inputs and "ttl" not in read_inputs


def test_nothing_else_is_kept(provider: AwsProvider, aws: Aws, moto: MotoServer) -> None:
    """A property the state holds that the account no longer has is gone after a
    refresh, whatever it is called — the rule is the list, not the name."""
    id_, inputs, state = created(aws, Vpc, {"cidrBlock": "10.0.0.0/16"})
    invented: dict[str, Any] = {**state, "somethingMotoNeverSaid": "x"}
    outputs, _ = refreshed(provider, Vpc, id_, invented, inputs)
    assert "somethingMotoNeverSaid" not in outputs
