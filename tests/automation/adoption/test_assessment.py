"""Sorting the engine's preview of the imports into imports, differences and refusals."""

from __future__ import annotations

from automation.adoption.assessment import assess
from automation.adoption.models import Addition, AdoptedResource, Discovery
from automation.engine.adapter import PropertyChange, ResourceChange
from automation.engine.property_paths import UNKNOWN_SHOWN

VPC = "aws:ec2/vpc:Vpc"
ATTACH = "aws:autoscaling/attachment:Attachment"


def _change(op: str, type_: str, name: str, *detail: PropertyChange) -> ResourceChange:
    urn = f"urn:pulumi:s::kubeshift::kubeshift:network:Network${type_}::{name}"
    return ResourceChange(op, urn, type_, name, tuple(p.path for p in detail), detail)


def _discovery(*resources: AdoptedResource) -> Discovery:
    return Discovery(stack="s", cluster="c", phase="baseline", resources=list(resources),
                     problems=[], skipped=[], unmodelled=[])  # fmt: skip


FOUND = _discovery(
    AdoptedResource(type=VPC, name="vpc", id="vpc-1", import_id="vpc-1"),
    AdoptedResource(type=ATTACH, name="attach", id="a", import_id=None),
)


def test_clean_imports_and_no_op_creates_of_components_and_attachments() -> None:
    result = assess(
        [
            _change("create", "kubeshift:network:Network", "net"),
            _change("create", "pulumi:providers:aws", "default"),
            _change("import", VPC, "vpc"),
            _change("create", ATTACH, "attach"),
        ],
        FOUND,
    )
    assert result.clean
    assert (result.imports, result.recorded) == (("vpc",), ("attach",))


def test_each_differing_attribute_is_one_line_and_a_replace_says_so() -> None:
    result = assess(
        [
            _change(
                "import", VPC, "vpc",
                PropertyChange('tags["team"]', "update", "payments", "platform"),
                PropertyChange("cidrBlock", "update-replace", "10.1.0.0/16", "10.0.0.0/16"),
            )
        ],
        FOUND,
    )  # fmt: skip
    assert not result.clean
    assert [d.line() for d in result.differences] == [
        'vpc (aws:ec2/vpc:Vpc): tags["team"] is payments live, platform declared',
        "vpc (aws:ec2/vpc:Vpc): cidrBlock is 10.1.0.0/16 live, 10.0.0.0/16 declared (a replace)",
    ]


def test_creating_a_cloud_resource_or_deleting_one_is_refused() -> None:
    result = assess(
        [
            _change("create", "aws:ec2/subnet:Subnet", "extra"),
            _change("delete", "aws:ec2/subnet:Subnet", "old"),
        ],
        FOUND,
    )
    assert result.refusals == (
        "The first phase would create extra (aws:ec2/subnet:Subnet): nothing live matched it.",
        "The first phase would delete old (aws:ec2/subnet:Subnet).",
    )


def test_creating_kubeshifts_grants_says_what_calls_for_them() -> None:
    policy = "aws:iam/rolePolicy:RolePolicy"
    result = assess([_change("create", policy, "control-plane-identity-inline")], FOUND)
    (refusal,) = result.refusals
    assert refusal.startswith(
        f"The first phase would create control-plane-identity-inline ({policy}): kubeshift's "
        "grants for its own boot script"
    )
    assert "kubeshift:cluster.user_data keeps the live script" in refusal


def test_resources_already_in_the_state_are_adopted_before() -> None:
    result = assess([_change("same", VPC, "vpc"), _change("same", ATTACH, "attach")], FOUND)
    assert result.clean
    assert result.adopted == ("vpc", "attach") and not result.imports


def test_a_replacement_is_one_refusal_naming_what_forces_it_and_its_lines() -> None:
    """The engine plans a replacement as several steps (create-replacement, replace,
    delete-replaced); the attributes come from the one that details them."""
    sg = "aws:ec2/securityGroup:SecurityGroup"
    forcing = PropertyChange("description", "update-replace", "Security group for nodes", "x")
    tags = PropertyChange('tags["team"]', "update", "payments", "platform")
    steps = [
        _change("create-replacement", sg, "node", forcing, tags),
        _change("replace", sg, "node", forcing, tags),
        _change("delete-replaced", sg, "node"),
    ]
    delete_first = [steps[2], steps[1], steps[0]]  # a named group: pulumi-aws deletes first
    for order in (steps, delete_first):
        result = assess(order, FOUND)
        assert result.refusals == (
            "The first phase would replace node (aws:ec2/securityGroup:SecurityGroup): "
            "description cannot change in place.",
        )
        assert [(d.attribute, d.replaces) for d in result.differences] == [
            ("description", True), ('tags["team"]', False),
        ]  # fmt: skip


def test_replacements_that_only_follow_another_are_named_together_after_it() -> None:
    """A group's rules are replaced with the group (their group id is not known before
    the update): the group's sentence says why, one more sentence names the rules."""
    sg = "aws:ec2/securityGroup:SecurityGroup"
    rule = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
    forcing = PropertyChange("description", "update-replace", "Security group for nodes", "x")

    def follower(name: str) -> list[ResourceChange]:
        new_id = PropertyChange("securityGroupId", "update-replace", "sg-1", UNKNOWN_SHOWN)
        return [_change("replace", rule, name, new_id), _change("delete-replaced", rule, name)]

    rules = [f"node-ingress-{i}" for i in range(7)]
    result = assess(
        [_change("replace", sg, "node", forcing), *(c for r in rules for c in follower(r))],
        FOUND,
    )
    assert result.refusals == (
        "The first phase would replace node (aws:ec2/securityGroup:SecurityGroup): "
        "description cannot change in place.",
        "The first phase would also replace 7 resource(s) that take the new id of a "
        "resource replaced above, known only after the update: "
        + ", ".join(f"{r} ({rule})" for r in rules[:5])
        + " and 2 more.",
    )
    # each follower's own line stays, for the record
    assert [d.name for d in result.differences] == ["node", *rules]


def test_creating_what_discovery_would_add_is_an_addition_not_a_refusal() -> None:
    rule = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
    adding = FOUND.model_copy(
        update={"additions": [Addition(type=rule, name="api-443", why="no live ingress rule")]}
    )
    result = assess([_change("import", VPC, "vpc"), _change("create", rule, "api-443")], adding)
    assert result.clean and result.added == ("api-443",) and result.imports == ("vpc",)
    # the same create, not listed by discovery, is refused as ever
    (refusal,) = assess([_change("create", rule, "api-443")], FOUND).refusals
    assert refusal.startswith("The first phase would create api-443")
