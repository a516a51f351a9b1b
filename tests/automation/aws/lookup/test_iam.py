"""Roles, profiles, inline and attached policies found by name, on moto."""

from __future__ import annotations

import json

import pytest

from automation.aws.lookup import Lookup, Missing, OwnAddition, find
from automation.aws.lookup.iam import role_policies_besides
from tests.support.moto_fixtures import MotoServer

TRUST = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {
    "Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]})  # fmt: skip
DESCRIBE = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
    "Action": "ec2:Describe*", "Resource": "*"}]})  # fmt: skip
READ_ONLY = "arn:aws:iam::123456789012:policy/shop-registry-read-only"


def test_a_role_its_profile_and_policies_with_the_importers_ids(
    moto: MotoServer, lookup: Lookup
) -> None:
    iam = moto.client("iam")
    iam.create_role(RoleName="shop-node-role", AssumeRolePolicyDocument=TRUST)
    iam.create_instance_profile(InstanceProfileName="shop-node-profile")
    iam.add_role_to_instance_profile(InstanceProfileName="shop-node-profile",
                                     RoleName="shop-node-role")  # fmt: skip
    iam.put_role_policy(RoleName="shop-node-role", PolicyName="inline", PolicyDocument=DESCRIBE)
    iam.create_policy(PolicyName="shop-registry-read-only", PolicyDocument=DESCRIBE)
    iam.attach_role_policy(RoleName="shop-node-role", PolicyArn=READ_ONLY)

    role = find(lookup, "aws:iam/role:Role", "role", {"name": "shop-node-role"})
    assert role.id == "shop-node-role"
    profile = find(lookup, "aws:iam/instanceProfile:InstanceProfile", "p",
                   {"name": "shop-node-profile"})  # fmt: skip
    assert profile.outputs["arn"].endswith(":instance-profile/shop-node-profile")
    inline = find(lookup, "aws:iam/rolePolicy:RolePolicy", "inline",
                  {"role": "shop-node-role", "name": "inline"})  # fmt: skip
    assert inline.import_id == "shop-node-role:inline"
    attached = find(lookup, "aws:iam/rolePolicyAttachment:RolePolicyAttachment", "ecr",
                    {"role": "shop-node-role", "policyArn": READ_ONLY})  # fmt: skip
    assert attached.import_id == f"shop-node-role/{READ_ONLY}"


def test_a_policy_the_role_lacks_is_missing(moto: MotoServer, lookup: Lookup) -> None:
    moto.client("iam").create_role(RoleName="shop-node-role", AssumeRolePolicyDocument=TRUST)

    with pytest.raises(Missing, match=rf"ecr: {READ_ONLY} is not attached to role shop-node-role"):
        find(lookup, "aws:iam/rolePolicyAttachment:RolePolicyAttachment", "ecr",
             {"role": "shop-node-role", "policyArn": READ_ONLY})  # fmt: skip
    with pytest.raises(Missing, match=r"no live IAM role shop-gone"):
        find(lookup, "aws:iam/role:Role", "role", {"name": "shop-gone"})
    with pytest.raises(Missing, match=r"no live IAM role shop-gone"):
        find(lookup, "aws:iam/rolePolicy:RolePolicy", "inline",
             {"role": "shop-gone", "name": "inline"})  # fmt: skip


def test_kubeshifts_grants_missing_on_a_live_role_are_its_own_addition(
    moto: MotoServer, lookup: Lookup
) -> None:
    """The program declares only kubeshift's grants: a role another tool made lacks them
    by nature, and whatever that tool granted is its own, never these."""
    iam = moto.client("iam")
    iam.create_role(RoleName="masters.shop.k8s.local", AssumeRolePolicyDocument=TRUST)
    iam.put_role_policy(RoleName="masters.shop.k8s.local", PolicyName="masters.shop.k8s.local",
                        PolicyDocument=DESCRIBE)  # fmt: skip
    listings: list[str] = []
    lookup.clients.session.events.register(
        "before-call.iam.ListRolePolicies", lambda **_: listings.append("listed")
    )
    with pytest.raises(OwnAddition, match=r"has no inline policy control-plane-inline"):
        find(lookup, "aws:iam/rolePolicy:RolePolicy", "grants",
             {"role": "masters.shop.k8s.local", "name": "control-plane-inline"})  # fmt: skip
    listed = role_policies_besides(lookup, ["masters.shop.k8s.local"], set())
    assert listed == ["masters.shop.k8s.local:masters.shop.k8s.local"]
    taken = role_policies_besides(lookup, ["masters.shop.k8s.local"], set(listed))
    assert taken == []
    assert len(listings) == 1  # the finder and both listings share one call per role
