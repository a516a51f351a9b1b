"""The stand-in provider's security groups and security group rules against a real moto.

Each type is created and checked against what boto3 sees, read back (also from the
declared inputs alone, as an import does), updated in place where AWS can, deleted
twice and then read as gone. Replacement is judged from ``replace_props()`` the way the
servicer judges it: a change to a listed property replaces, any other change updates.
Numbers are declared as floats, as the engine sends them.
"""

from __future__ import annotations

from typing import Any

import pytest

from automation.sandbox.provider.model import REGISTRY, Aws, NotFound, Props, Request, ResourceType
from automation.sandbox.provider.types.security_group_rules import (
    SecurityGroupEgressRule,
    SecurityGroupIngressRule,
)
from automation.sandbox.provider.types.security_groups import SecurityGroup
from tests.support.moto_fixtures import MotoServer

pytestmark = pytest.mark.moto

ACCOUNT = "123456789012"  # moto's


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
def vpc(aws: Aws) -> str:
    return str(aws.ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"])


def group(aws: Aws, vpc: str, name: str, **extra: Any) -> tuple[str, Props]:
    id_, _, outputs = create(
        aws, SecurityGroup, {"name": name, "description": f"{name} group", "vpcId": vpc, **extra}
    )
    return id_, outputs


def live_rule(aws: Aws, id_: str) -> dict[str, Any]:
    rules = aws.ec2.describe_security_group_rules(SecurityGroupRuleIds=[id_])
    return dict(rules["SecurityGroupRules"][0])


# --- security group -------------------------------------------------------------------


def test_security_group_lifecycle(aws: Aws, vpc: str) -> None:
    id_, inputs, outputs = create(
        aws,
        SecurityGroup,
        {
            "name": "demo-node",
            "description": "Kubernetes worker nodes",
            "vpcId": vpc,
            "revokeRulesOnDelete": True,
            "tags": {"Name": "demo-node", "kubeshift.io/role": "node"},
        },
    )
    live = aws.ec2.describe_security_groups(GroupIds=[id_])["SecurityGroups"][0]
    assert (live["GroupName"], live["Description"], live["VpcId"]) == (
        "demo-node",
        "Kubernetes worker nodes",
        vpc,
    )
    assert live["IpPermissionsEgress"] == []  # the default allow-all egress was revoked
    assert outputs["arn"] == f"arn:aws:ec2:eu-west-1:{ACCOUNT}:security-group/{id_}"
    assert outputs["ownerId"] == ACCOUNT
    assert (outputs["egress"], outputs["ingress"]) == ([], [])
    assert (
        outputs["tagsAll"] == outputs["tags"] == {"Name": "demo-node", "kubeshift.io/role": "node"}
    )
    assert outputs["revokeRulesOnDelete"] is True

    for prop, value in {"name": "other", "description": "other", "vpcId": "vpc-1"}.items():
        assert replaces(SecurityGroup, inputs, {prop: value}), prop
    assert not replaces(
        SecurityGroup, inputs, {"tags": {"Name": "x"}, "revokeRulesOnDelete": False}
    )

    outputs = update(aws, SecurityGroup, id_, outputs, {"tags": {"Name": "renamed"}})
    live = aws.ec2.describe_security_groups(GroupIds=[id_])["SecurityGroups"][0]
    assert live["Tags"] == [{"Key": "Name", "Value": "renamed"}]
    assert outputs["tagsAll"] == {"Name": "renamed"}

    delete_twice(aws, SecurityGroup, id_, outputs)
    assert not aws.ec2.describe_security_groups(Filters=[{"Name": "group-id", "Values": [id_]}])[
        "SecurityGroups"
    ]


def test_security_group_defaults_and_autoname(aws: Aws) -> None:
    checked = REGISTRY[SecurityGroup.token].check(req(SecurityGroup), {})
    assert checked == {"description": "Managed by Pulumi", "revokeRulesOnDelete": False}
    id_, _, outputs = create(aws, SecurityGroup, {})  # in the default VPC
    assert outputs["name"].startswith("test-") and len(outputs["name"]) == len("test-") + 7
    assert outputs["description"] == "Managed by Pulumi"
    with pytest.raises(ValueError, match="sg-"):
        REGISTRY[SecurityGroup.token].check(req(SecurityGroup), {"name": "sg-bad"})
    delete_twice(aws, SecurityGroup, id_, outputs)


def test_security_group_outputs_rules_of_separate_rule_resources(aws: Aws, vpc: str) -> None:
    a, _ = group(aws, vpc, "a")
    b, _ = group(aws, vpc, "b")
    create(
        aws,
        SecurityGroupIngressRule,
        {
            "securityGroupId": a,
            "ipProtocol": "tcp",
            "fromPort": 443.0,
            "toPort": 443.0,
            "cidrIpv4": "10.1.0.0/16",
            "description": "lst",
        },
    )
    create(
        aws,
        SecurityGroupIngressRule,
        {"securityGroupId": a, "ipProtocol": "-1", "referencedSecurityGroupId": b},
    )
    outputs = REGISTRY[SecurityGroup.token].read(aws, req(SecurityGroup), a, {})
    blank = {
        "cidrBlocks": [],
        "description": "",
        "ipv6CidrBlocks": [],
        "prefixListIds": [],
        "securityGroups": [],
        "self": False,
    }
    assert sorted(outputs["ingress"], key=lambda r: r["protocol"]) == [
        {**blank, "protocol": "-1", "fromPort": 0, "toPort": 0, "securityGroups": [b]},
        {
            **blank,
            "protocol": "tcp",
            "fromPort": 443,
            "toPort": 443,
            "cidrBlocks": ["10.1.0.0/16"],
            "description": "lst",
        },
    ]


def test_delete_revokes_rules_that_reference_the_group(aws: Aws, vpc: str) -> None:
    """revokeRulesOnDelete: the group's own rules and other groups' rules naming it go."""
    doomed, doomed_state = group(aws, vpc, "doomed", revokeRulesOnDelete=True)
    other, _ = group(aws, vpc, "other")
    kept, _ = group(aws, vpc, "kept")
    inbound, _, _ = create(
        aws,
        SecurityGroupIngressRule,
        {"securityGroupId": other, "ipProtocol": "-1", "referencedSecurityGroupId": doomed},
    )
    outbound, _, _ = create(
        aws,
        SecurityGroupIngressRule,
        {"securityGroupId": doomed, "ipProtocol": "-1", "referencedSecurityGroupId": other},
    )
    unrelated, _, _ = create(
        aws,
        SecurityGroupIngressRule,
        {"securityGroupId": other, "ipProtocol": "-1", "referencedSecurityGroupId": kept},
    )

    delete_twice(aws, SecurityGroup, doomed, doomed_state)
    remaining = aws.ec2.describe_security_group_rules(
        Filters=[{"Name": "group-id", "Values": [other]}]
    )["SecurityGroupRules"]
    assert [r["SecurityGroupRuleId"] for r in remaining] == [unrelated]
    for gone in (inbound, outbound):
        with pytest.raises(NotFound):
            REGISTRY[SecurityGroupIngressRule.token].read(
                aws, req(SecurityGroupIngressRule), gone, {}
            )


def test_a_group_refused_while_referenced_goes_once_the_references_are_revoked(
    aws: Aws, vpc: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under AWS's refusal (the sandbox's moto): kops's nodes and masters groups refer to
    each other, and a rule kubeshift never declared (masters admitting the nodes) is
    revoked with the nodes' group rather than holding its delete."""
    from moto.ec2.models.security_groups import SecurityGroupBackend

    from automation.sandbox.moto_gaps.ec2 import referenced_groups_stay

    original = SecurityGroupBackend.delete_security_group
    monkeypatch.setattr(SecurityGroupBackend, "delete_security_group", original)  # undone
    referenced_groups_stay()
    nodes, nodes_state = group(aws, vpc, "nodes", revokeRulesOnDelete=True)
    masters, _ = group(aws, vpc, "masters")
    for admitting, admitted in ((masters, nodes), (nodes, masters)):
        aws.ec2.authorize_security_group_ingress(
            GroupId=admitting,
            IpPermissions=[{"IpProtocol": "-1", "UserIdGroupPairs": [{"GroupId": admitted}]}],
        )
    delete_twice(aws, SecurityGroup, nodes, nodes_state)
    left = aws.ec2.describe_security_group_rules(
        Filters=[{"Name": "group-id", "Values": [masters]}]
    )["SecurityGroupRules"]
    assert not [r for r in left if r.get("ReferencedGroupInfo")]


def test_delete_without_revoke_leaves_referencing_rules(aws: Aws, vpc: str) -> None:
    doomed, doomed_state = group(aws, vpc, "doomed")
    other, _ = group(aws, vpc, "other")
    inbound, _, _ = create(
        aws,
        SecurityGroupIngressRule,
        {"securityGroupId": other, "ipProtocol": "-1", "referencedSecurityGroupId": doomed},
    )
    delete_twice(aws, SecurityGroup, doomed, doomed_state)  # moto never refuses (AWS would)
    assert live_rule(aws, inbound)["ReferencedGroupInfo"]["GroupId"] == doomed


# --- rules ----------------------------------------------------------------------------


def test_ingress_rule_from_a_cidr(aws: Aws, vpc: str) -> None:
    sg, _ = group(aws, vpc, "lb")
    id_, inputs, outputs = create(
        aws,
        SecurityGroupIngressRule,
        {
            "securityGroupId": sg,
            "cidrIpv4": "10.1.0.0/16",
            "ipProtocol": "tcp",
            "fromPort": 443.0,
            "toPort": 443.0,
            "description": "Listener 443 from 10.1.0.0/16",
            "tags": {"team": "net"},
        },
    )
    assert id_.startswith("sgr-")
    live = live_rule(aws, id_)
    assert (live["GroupId"], live["IsEgress"], live["CidrIpv4"], live["FromPort"]) == (
        sg,
        False,
        "10.1.0.0/16",
        443,
    )
    assert live["Description"] == "Listener 443 from 10.1.0.0/16"
    assert outputs["securityGroupRuleId"] == id_
    assert outputs["arn"] == f"arn:aws:ec2:eu-west-1:{ACCOUNT}:security-group-rule/{id_}"
    assert (outputs["fromPort"], outputs["toPort"], outputs["tagsAll"]) == (
        443,
        443,
        {"team": "net"},
    )

    assert replaces(SecurityGroupIngressRule, inputs, {"securityGroupId": "sg-other"})
    changes = {
        "cidrIpv4": "10.2.0.0/16",
        "fromPort": 8443.0,
        "toPort": 8443.0,
        "description": "moved",
        "tags": {"team": "edge"},
    }
    assert not replaces(SecurityGroupIngressRule, inputs, changes)
    # Another *kind* of source replaces the rule (upstream's ModifyPlan), known or not.
    from_group = {"cidrIpv4": None, "referencedSecurityGroupId": sg}
    assert replaces(SecurityGroupIngressRule, inputs, from_group)
    verdict = REGISTRY[SecurityGroupIngressRule.token].diff(inputs, {**inputs, **from_group})
    assert set(verdict.replaces) == {"cidrIpv4", "referencedSecurityGroupId"}
    outputs = update(aws, SecurityGroupIngressRule, id_, outputs, changes)
    live = live_rule(aws, id_)  # the same rule, changed in place
    assert (live["CidrIpv4"], live["FromPort"], live["ToPort"], live["Description"]) == (
        "10.2.0.0/16",
        8443,
        8443,
        "moved",
    )
    assert outputs["tags"] == {"team": "edge"}

    delete_twice(aws, SecurityGroupIngressRule, id_, outputs)
    assert (
        aws.ec2.describe_security_group_rules(Filters=[{"Name": "group-id", "Values": [sg]}])[
            "SecurityGroupRules"
        ]
        == []
    )


def test_ingress_rule_from_a_group_for_all_traffic(aws: Aws, vpc: str) -> None:
    shared, _ = group(aws, vpc, "shared")
    node, _ = group(aws, vpc, "node")
    id_, _, outputs = create(
        aws,
        SecurityGroupIngressRule,
        {
            "securityGroupId": shared,
            "referencedSecurityGroupId": node,
            "ipProtocol": "-1",
            "description": "From node",
        },
    )
    assert live_rule(aws, id_)["ReferencedGroupInfo"]["GroupId"] == node
    assert outputs["referencedSecurityGroupId"] == node
    assert outputs["description"] == "From node"
    assert "fromPort" not in outputs and "toPort" not in outputs  # unset stays unset

    outputs = update(aws, SecurityGroupIngressRule, id_, outputs, {"description": "From nodes"})
    assert live_rule(aws, id_)["Description"] == "From nodes"
    assert outputs["description"] == "From nodes"
    delete_twice(aws, SecurityGroupIngressRule, id_, outputs)


def test_egress_rule(aws: Aws, vpc: str) -> None:
    sg, _ = group(aws, vpc, "node")
    id_, inputs, outputs = create(
        aws,
        SecurityGroupEgressRule,
        {
            "securityGroupId": sg,
            "ipProtocol": "-1",
            "cidrIpv4": "0.0.0.0/0",
            "description": "All outbound traffic",
        },
    )
    live = live_rule(aws, id_)
    assert (live["IsEgress"], live["CidrIpv4"], live["IpProtocol"]) == (True, "0.0.0.0/0", "-1")
    egress = aws.ec2.describe_security_groups(GroupIds=[sg])["SecurityGroups"][0]
    assert egress["IpPermissionsEgress"][0]["IpRanges"] == [
        {"CidrIp": "0.0.0.0/0", "Description": "All outbound traffic"}
    ]
    with pytest.raises(NotFound):  # an egress rule is no ingress rule
        REGISTRY[SecurityGroupIngressRule.token].read(aws, req(SecurityGroupIngressRule), id_, {})

    assert replaces(SecurityGroupEgressRule, inputs, {"securityGroupId": "sg-other"})
    outputs = update(
        aws, SecurityGroupEgressRule, id_, outputs, {"description": "out", "tags": {"a": "b"}}
    )
    assert live_rule(aws, id_)["Description"] == "out"
    assert live_rule(aws, id_)["Tags"] == [{"Key": "a", "Value": "b"}]
    delete_twice(aws, SecurityGroupEgressRule, id_, outputs)


def test_rule_protocol_spelling_survives_a_read(aws: Aws, vpc: str) -> None:
    sg, _ = group(aws, vpc, "x")
    _, _, outputs = create(
        aws,
        SecurityGroupIngressRule,
        {
            "securityGroupId": sg,
            "ipProtocol": "6",
            "fromPort": 22.0,
            "toPort": 22.0,
            "cidrIpv4": "10.0.0.0/8",
        },
    )
    assert outputs["ipProtocol"] == "6"


def test_rule_checks(aws: Aws, vpc: str) -> None:
    check = REGISTRY[SecurityGroupIngressRule.token].check
    base = {"securityGroupId": "sg-1", "ipProtocol": "tcp", "fromPort": 1.0, "toPort": 2.0}
    with pytest.raises(ValueError, match="exactly one"):
        check(req(SecurityGroupIngressRule), base)
    with pytest.raises(ValueError, match="exactly one"):
        check(
            req(SecurityGroupIngressRule),
            {**base, "cidrIpv4": "10.0.0.0/8", "referencedSecurityGroupId": "sg-2"},
        )
    with pytest.raises(ValueError, match="fromPort"):
        check(
            req(SecurityGroupIngressRule), {**base, "cidrIpv4": "10.0.0.0/8", "fromPort": 70000.0}
        )


def test_changing_the_kind_of_source_replaces_the_rule(aws: Aws, vpc: str) -> None:
    """Upstream's ModifyPlan ("you cannot change the rule's source type") makes it a
    replacement; the servicer's Diff says so on the wire."""
    from pulumi.runtime.proto import provider_pb2

    from automation.sandbox.provider.servicer import AwsProvider, struct_of

    sg, _ = group(aws, vpc, "x")
    other, _ = group(aws, vpc, "y")
    _, inputs, outputs = create(
        aws,
        SecurityGroupIngressRule,
        {"securityGroupId": sg, "ipProtocol": "-1", "cidrIpv4": "10.0.0.0/8"},
    )
    news = {**inputs, "cidrIpv4": None, "referencedSecurityGroupId": other}
    urn = f"urn:pulumi:s::kubeshift::{SecurityGroupIngressRule.token}::rule"
    request = provider_pb2.DiffRequest(
        urn=urn, id="sgr-1", olds=struct_of(outputs), news=struct_of(news),
        old_inputs=struct_of(inputs),
    )  # fmt: skip
    answer = AwsProvider().Diff(request, context=None)
    assert set(answer.replaces) == {"cidrIpv4", "referencedSecurityGroupId"}
    same_kind = {**inputs, "cidrIpv4": "10.1.0.0/16"}
    request = provider_pb2.DiffRequest(
        urn=urn, id="sgr-1", olds=struct_of(outputs), news=struct_of(same_kind),
        old_inputs=struct_of(inputs),
    )  # fmt: skip
    assert list(AwsProvider().Diff(request, context=None).replaces) == []
