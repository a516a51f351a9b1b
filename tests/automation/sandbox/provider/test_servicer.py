"""The stand-in's gRPC answers where a preview leaves a value unknown."""

from __future__ import annotations

from typing import Any

from pulumi.runtime import rpc
from pulumi.runtime.proto import provider_pb2

from automation.core.bridge_defaults import without_defaults
from automation.sandbox.provider.diffing import contains_unknown
from automation.sandbox.provider.servicer import AwsProvider, props_of, struct_of

LB = "urn:pulumi:s::kubeshift::aws:lb/loadBalancer:LoadBalancer::api"
DECLARED: dict[str, Any] = {
    "name": "api",
    "internal": True,
    "loadBalancerType": "network",
    "subnets": ["subnet-1", "subnet-2"],
    "securityGroups": ["sg-1"],
}


def test_an_unknown_off_the_wire_is_the_sentinel_the_stand_in_tests_for() -> None:
    props = props_of(struct_of({"securityGroups": [rpc.UNKNOWN, "sg-2"], "id": rpc.UNKNOWN}))
    assert props == {"securityGroups": [rpc.UNKNOWN, "sg-2"], "id": rpc.UNKNOWN}
    assert contains_unknown(props["securityGroups"])


def test_a_set_whose_members_are_unknown_until_the_update_differs_in_place() -> None:
    """A group the preview would replace leaves the balancer's ``securityGroups``
    unknown: the answer is an in-place change of that set, not a failed call."""
    olds = struct_of(DECLARED)
    news = struct_of({**DECLARED, "securityGroups": [rpc.UNKNOWN]})
    request = provider_pb2.DiffRequest(urn=LB, id="arn", olds=olds, news=news, old_inputs=olds)
    answer = AwsProvider().Diff(request, context=None)
    assert answer.changes == provider_pb2.DiffResponse.DIFF_SOME
    assert list(answer.diffs) == ["securityGroups"] and list(answer.replaces) == []


SG = "urn:pulumi:s::kubeshift::aws:ec2/securityGroup:SecurityGroup::nodes"
ROLE = "urn:pulumi:s::kubeshift::aws:iam/role:Role::nodes"
ATTACHMENT = "urn:pulumi:s::kubeshift::aws:iam/rolePolicyAttachment:RolePolicyAttachment::ssm"
VPC = "urn:pulumi:s::kubeshift::aws:ec2/vpc:Vpc::net"


def _checked(urn: str, declared: dict[str, Any]) -> dict[str, Any]:
    request = provider_pb2.CheckRequest(urn=urn, news=struct_of(declared))
    return props_of(AwsProvider().Check(request, context=None).inputs)


def _deletes_first(urn: str, olds: dict[str, Any], news: dict[str, Any]) -> bool:
    """Whether the stand-in answers the replacement from ``olds`` to ``news`` (as Check
    returns them) delete-before-replace."""
    request = provider_pb2.DiffRequest(
        urn=urn, id="id", olds=struct_of(olds), news=struct_of(news), old_inputs=struct_of(olds)
    )
    answer = AwsProvider().Diff(request, context=None)
    assert list(answer.replaces), "the change must replace"
    return bool(answer.deleteBeforeReplace)


def test_check_lists_what_it_filled_in_as_the_bridge_does() -> None:
    named = _checked(SG, {"name": "nodes", "vpcId": "vpc-1"})
    assert named["__defaults"] == ["description", "revokeRulesOnDelete"]
    autonamed = _checked(ROLE, {"assumeRolePolicy": "{}"})
    assert "name" in autonamed["__defaults"] and autonamed["name"].startswith("nodes-")


TG = "urn:pulumi:s::kubeshift::aws:lb/targetGroup:TargetGroup::ingress-443"
HEALTH = {"protocol": "TCP", "port": "traffic-port", "interval": 10}


def test_check_lists_what_it_filled_in_at_every_depth_as_the_bridge_does() -> None:
    """pulumi-terraform-bridge's ``applyDefaults`` runs for each object it converts,
    nested ones included, and keeps the list in each (``pkg/tfbridge/schema.go``)."""
    checked = _checked(
        TG,
        {"name": "ingress-443", "port": 443, "protocol": "TCP", "vpcId": "vpc-1",
         "healthCheck": HEALTH, "tags": {"Name": "ingress-443"}},
    )  # fmt: skip
    health = checked["healthCheck"]
    filled = {k for k in health if k not in HEALTH and k != "__defaults"}
    assert filled and sorted(filled) == health["__defaults"]
    assert checked["tags"] == {"Name": "ingress-443", "__defaults": []}
    assert "healthCheck" not in checked["__defaults"]


def test_no_defaults_list_reaches_a_type() -> None:
    """What Check recorded travels back in the olds of the next Diff: no AWS attribute."""
    olds = _checked(TG, {"name": "tg", "port": 443, "protocol": "TCP", "vpcId": "vpc-1",
                         "healthCheck": HEALTH, "tags": {"Name": "tg"}})  # fmt: skip
    news = _checked(TG, {"name": "tg", "port": 443, "protocol": "TCP", "vpcId": "vpc-1",
                         "healthCheck": HEALTH, "tags": {"Name": "tg"}})  # fmt: skip
    assert without_defaults(olds)["tags"] == {"Name": "tg"}
    assert "__defaults" not in without_defaults(olds)["healthCheck"]
    request = provider_pb2.DiffRequest(
        urn=TG, id="arn", olds=struct_of(olds), news=struct_of(news), old_inputs=struct_of(olds)
    )
    assert AwsProvider().Diff(request, context=None).changes == provider_pb2.DiffResponse.DIFF_NONE


def test_a_replacement_deletes_first_when_the_program_named_the_resource() -> None:
    """pulumi-terraform-bridge: a set autonameable ``name`` makes every replacement
    delete-before-replace, whether or not the name itself changes."""
    olds = _checked(SG, {"name": "nodes", "vpcId": "vpc-1"})
    assert _deletes_first(SG, olds, _checked(SG, {"name": "nodes", "vpcId": "vpc-2"}))
    assert _deletes_first(SG, olds, _checked(SG, {"name": "nodes-2", "vpcId": "vpc-1"}))
    role = _checked(ROLE, {"name": "nodes", "assumeRolePolicy": "{}"})
    assert _deletes_first(ROLE, role, {**role, "path": "/other/"})


def test_an_autonamed_or_unnamed_resource_is_replaced_create_first() -> None:
    role = _checked(ROLE, {"assumeRolePolicy": "{}"})
    assert not _deletes_first(ROLE, role, {**role, "path": "/other/"})
    vpc = _checked(VPC, {"cidrBlock": "10.0.0.0/16"})
    assert not _deletes_first(VPC, vpc, _checked(VPC, {"cidrBlock": "10.1.0.0/16"}))
    sg = {"name": "nodes", "vpcId": "vpc-1"}  # inputs checked before the bridge listed
    assert not _deletes_first(SG, sg, {**sg, "vpcId": "vpc-2"})  # defaults: autonamed


def test_a_type_pulumi_aws_marks_so_always_deletes_first() -> None:
    olds = _checked(ATTACHMENT, {"role": "nodes", "policyArn": "arn:aws:iam::aws:policy/a"})
    news = _checked(ATTACHMENT, {"role": "nodes", "policyArn": "arn:aws:iam::aws:policy/b"})
    assert _deletes_first(ATTACHMENT, olds, news)
