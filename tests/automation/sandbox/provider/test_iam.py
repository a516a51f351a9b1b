"""The stand-in provider's ``aws:iam`` types against a real moto server.

Each type is created, checked against what boto3 sees, updated in place where AWS can,
read back (also from the declared inputs alone, as an import does), deleted twice and
then read as gone. Replacement is judged from ``replace_props()`` the way the servicer
judges it: a change to any listed property replaces, any other change updates.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError

from automation.sandbox.provider.model import (
    REGISTRY,
    Aws,
    NotFound,
    Props,
    Request,
    ResourceType,
)
from automation.sandbox.provider.types.iam import (
    InstanceProfile,
    Role,
    RolePolicy,
    RolePolicyAttachment,
)
from tests.support.moto_fixtures import MotoServer

pytestmark = pytest.mark.moto

ASSUME_EC2 = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "ec2.amazonaws.com"},
                "Action": "sts:AssumeRole",
            }
        ],
    },
    indent=2,
)
ASSUME_ECS = ASSUME_EC2.replace("ec2.amazonaws", "ecs.amazonaws")
DESCRIBE = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": ["ec2:DescribeInstances"], "Resource": "*"}],
    }
)
SSM_CORE = "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"


def requires_replace(kind: type[ResourceType], olds: Props, news: Props) -> bool:
    """Whether going from ``olds`` to ``news`` replaces a resource of ``kind``."""
    return any(olds.get(prop) != news.get(prop) for prop in kind.replace_props())


def request(kind: type[ResourceType], name: str = "test") -> Request:
    return Request(name=name, token=kind.token)


def create(aws: Aws, kind: type[ResourceType], declared: Props) -> tuple[str, Props]:
    """Create through the registered type; reading it back, from its outputs or from the
    declared inputs alone (an import), gives the same outputs."""
    resource = REGISTRY[kind.token]
    assert isinstance(resource, kind)
    inputs = resource.check(request(kind), declared)
    id_, outputs = resource.create(aws, request(kind), inputs)
    assert resource.read(aws, request(kind), id_, outputs) == outputs
    assert resource.read(aws, request(kind), id_, inputs) == outputs
    return id_, outputs


def update(aws: Aws, kind: type[ResourceType], id_: str, olds: Props, changes: Props) -> Props:
    """Update in place (only legal when nothing replace-worthy changed)."""
    news = {**olds, **changes}
    assert not requires_replace(kind, olds, news)
    outputs = REGISTRY[kind.token].update(aws, request(kind), id_, olds, news)
    assert REGISTRY[kind.token].read(aws, request(kind), id_, outputs) == outputs
    return outputs


def delete(aws: Aws, kind: type[ResourceType], id_: str, state: Props) -> None:
    """Delete twice (the second finds it gone and succeeds), then read it as gone."""
    resource = REGISTRY[kind.token]
    resource.delete(aws, request(kind), id_, state)
    resource.delete(aws, request(kind), id_, state)
    with pytest.raises(NotFound):
        resource.read(aws, request(kind), id_, state)


@pytest.fixture
def aws(moto: MotoServer) -> Aws:
    return Aws(region=moto.region, endpoint_url=moto.endpoint_url)


@pytest.fixture
def iam(moto: MotoServer) -> Any:
    return moto.client("iam")


@pytest.fixture
def managed_policies(moto: MotoServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """AWS-managed policies (``arn:aws:iam::aws:policy/...``) exist in moto only when
    it loads them; the server runs in this process, so the variable reaches it."""
    monkeypatch.setenv("MOTO_IAM_LOAD_MANAGED_POLICIES", "true")
    moto.reset()


def make_role(iam: Any, name: str) -> str:
    iam.create_role(RoleName=name, AssumeRolePolicyDocument=ASSUME_EC2)
    return name


def test_role(aws: Aws, iam: Any) -> None:
    id_, outputs = create(
        aws, Role, {"name": "node-role", "assumeRolePolicy": ASSUME_EC2, "tags": {"a": "1"}}
    )
    assert id_ == "node-role"
    live = iam.get_role(RoleName=id_)["Role"]
    assert live["AssumeRolePolicyDocument"] == json.loads(ASSUME_EC2)
    assert outputs["arn"] == live["Arn"] == "arn:aws:iam::123456789012:role/node-role"
    assert outputs["uniqueId"] == live["RoleId"]
    assert outputs["createDate"].endswith("Z")
    assert outputs["assumeRolePolicy"] == ASSUME_EC2  # the declared text, not AWS's
    assert outputs["tags"] == outputs["tagsAll"] == {"a": "1"}
    assert outputs["managedPolicyArns"] == outputs["inlinePolicies"] == []

    assert requires_replace(Role, outputs, {**outputs, "name": "other-role"})
    assert requires_replace(Role, outputs, {**outputs, "path": "/nodes/"})
    assert not requires_replace(Role, outputs, {**outputs, "assumeRolePolicy": ASSUME_ECS})

    outputs = update(aws, Role, id_, outputs, {"assumeRolePolicy": ASSUME_ECS, "tags": {"b": "2"}})
    live = iam.get_role(RoleName=id_)["Role"]
    assert live["AssumeRolePolicyDocument"] == json.loads(ASSUME_ECS)
    assert iam.list_role_tags(RoleName=id_)["Tags"] == [{"Key": "b", "Value": "2"}]
    assert outputs["tagsAll"] == {"b": "2"}

    delete(aws, Role, id_, outputs)
    with pytest.raises(ClientError):
        iam.get_role(RoleName=id_)


def test_role_reports_policies_attached_elsewhere(aws: Aws, iam: Any) -> None:
    id_, outputs = create(aws, Role, {"name": "r", "assumeRolePolicy": ASSUME_EC2})
    arn = iam.create_policy(PolicyName="p", PolicyDocument=DESCRIBE)["Policy"]["Arn"]
    iam.attach_role_policy(RoleName=id_, PolicyArn=arn)
    iam.put_role_policy(RoleName=id_, PolicyName="inline", PolicyDocument=DESCRIBE)
    state = REGISTRY[Role.token].read(aws, request(Role), id_, outputs)
    assert state["managedPolicyArns"] == [arn]
    assert [p["name"] for p in state["inlinePolicies"]] == ["inline"]
    assert json.loads(state["inlinePolicies"][0]["policy"]) == json.loads(DESCRIBE)


def test_role_delete_mirrors_terraform(aws: Aws, iam: Any) -> None:
    """Instance profiles are always left; attached policies only with forceDetachPolicies
    or when the last read saw them; otherwise IAM refuses with DeleteConflict."""
    id_, outputs = create(aws, Role, {"name": "r", "assumeRolePolicy": ASSUME_EC2})
    iam.create_instance_profile(InstanceProfileName="p")
    iam.add_role_to_instance_profile(InstanceProfileName="p", RoleName=id_)
    arn = iam.create_policy(PolicyName="p", PolicyDocument=DESCRIBE)["Policy"]["Arn"]
    iam.attach_role_policy(RoleName=id_, PolicyArn=arn)

    with pytest.raises(ClientError, match="DeleteConflict"):
        REGISTRY[Role.token].delete(aws, request(Role), id_, outputs)
    assert iam.get_instance_profile(InstanceProfileName="p")["InstanceProfile"]["Roles"] == []

    refreshed = REGISTRY[Role.token].read(aws, request(Role), id_, outputs)
    delete(aws, Role, id_, refreshed)
    assert iam.list_entities_for_policy(PolicyArn=arn)["PolicyRoles"] == []


def test_role_force_detach_policies(aws: Aws, iam: Any) -> None:
    id_, outputs = create(
        aws, Role, {"name": "r", "assumeRolePolicy": ASSUME_EC2, "forceDetachPolicies": True}
    )
    assert outputs["forceDetachPolicies"] is True
    arn = iam.create_policy(PolicyName="p", PolicyDocument=DESCRIBE)["Policy"]["Arn"]
    iam.attach_role_policy(RoleName=id_, PolicyArn=arn)
    iam.put_role_policy(RoleName=id_, PolicyName="inline", PolicyDocument=DESCRIBE)
    delete(aws, Role, id_, outputs)


def test_role_check(aws: Aws) -> None:
    role = REGISTRY[Role.token]
    with pytest.raises(ValueError, match="1-64"):
        role.check(request(Role), {"name": "x" * 65, "assumeRolePolicy": ASSUME_EC2})
    with pytest.raises(ValueError, match="JSON"):
        role.check(request(Role), {"name": "r", "assumeRolePolicy": "{not json"})
    named = role.check(request(Role, "cluster-node"), {"assumeRolePolicy": ASSUME_EC2})
    assert named["name"].startswith("cluster-node-")
    assert named == role.check(request(Role, "cluster-node"), {"assumeRolePolicy": ASSUME_EC2})


def test_instance_profile(aws: Aws, iam: Any) -> None:
    first, second = make_role(iam, "first"), make_role(iam, "second")
    id_, outputs = create(
        aws, InstanceProfile, {"name": "node-profile", "role": first, "tags": {"a": "1"}}
    )
    assert id_ == "node-profile"
    live = iam.get_instance_profile(InstanceProfileName=id_)["InstanceProfile"]
    assert [r["RoleName"] for r in live["Roles"]] == [first]
    assert outputs["arn"] == live["Arn"]
    assert outputs["uniqueId"] == live["InstanceProfileId"]
    assert outputs["role"] == first

    assert requires_replace(InstanceProfile, outputs, {**outputs, "name": "other"})
    assert requires_replace(InstanceProfile, outputs, {**outputs, "path": "/x/"})
    assert not requires_replace(InstanceProfile, outputs, {**outputs, "role": second})

    outputs = update(aws, InstanceProfile, id_, outputs, {"role": second, "tags": {"b": "2"}})
    live = iam.get_instance_profile(InstanceProfileName=id_)["InstanceProfile"]
    assert [r["RoleName"] for r in live["Roles"]] == [second]
    assert live["Tags"] == [{"Key": "b", "Value": "2"}]
    assert outputs["role"] == second

    delete(aws, InstanceProfile, id_, outputs)
    assert iam.get_role(RoleName=second)["Role"]["RoleName"] == second  # the role stays


def test_role_policy(aws: Aws, iam: Any) -> None:
    role = make_role(iam, "node")
    id_, outputs = create(
        aws, RolePolicy, {"name": "node-inline", "role": role, "policy": DESCRIBE}
    )
    assert id_ == "node:node-inline"
    live = iam.get_role_policy(RoleName=role, PolicyName="node-inline")["PolicyDocument"]
    assert live == json.loads(DESCRIBE)
    assert outputs == {"name": "node-inline", "role": role, "policy": DESCRIBE}

    assert requires_replace(RolePolicy, outputs, {**outputs, "name": "other"})
    assert requires_replace(RolePolicy, outputs, {**outputs, "role": "other"})
    wider = DESCRIBE.replace("ec2:DescribeInstances", "ec2:Describe*")
    assert not requires_replace(RolePolicy, outputs, {**outputs, "policy": wider})

    outputs = update(aws, RolePolicy, id_, outputs, {"policy": wider})
    live = iam.get_role_policy(RoleName=role, PolicyName="node-inline")["PolicyDocument"]
    assert live == json.loads(wider)
    assert outputs["policy"] == wider

    delete(aws, RolePolicy, id_, outputs)
    assert iam.list_role_policies(RoleName=role)["PolicyNames"] == []


@pytest.mark.usefixtures("managed_policies")
def test_role_policy_attachment(aws: Aws, iam: Any) -> None:
    role = make_role(iam, "node")
    id_, outputs = create(aws, RolePolicyAttachment, {"role": role, "policyArn": SSM_CORE})
    assert id_.startswith("node-") and len(id_) == len("node-") + 26
    attached = iam.list_attached_role_policies(RoleName=role)["AttachedPolicies"]
    assert [p["PolicyArn"] for p in attached] == [SSM_CORE]
    assert outputs == {"role": role, "policyArn": SSM_CORE}

    other = "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly"
    assert requires_replace(RolePolicyAttachment, outputs, {**outputs, "policyArn": other})
    assert requires_replace(RolePolicyAttachment, outputs, {**outputs, "role": "other"})

    attachments = REGISTRY[RolePolicyAttachment.token]
    imported = attachments.read(aws, request(RolePolicyAttachment), f"{role}/{SSM_CORE}", {})
    assert imported == outputs

    delete(aws, RolePolicyAttachment, id_, outputs)
    assert iam.list_attached_role_policies(RoleName=role)["AttachedPolicies"] == []


@pytest.mark.usefixtures("managed_policies")
def test_node_identity_comes_up_and_goes_down(aws: Aws, iam: Any) -> None:
    """The shape components/identity.py declares, deleted in reverse dependency order."""
    role_id, role = create(aws, Role, {"name": "n-role", "assumeRolePolicy": ASSUME_EC2})
    attach_id, attachment = create(
        aws, RolePolicyAttachment, {"role": role_id, "policyArn": SSM_CORE}
    )
    inline_id, inline = create(
        aws, RolePolicy, {"name": "node-inline", "role": role_id, "policy": DESCRIBE}
    )
    profile_id, profile = create(aws, InstanceProfile, {"name": "n-profile", "role": role_id})
    delete(aws, InstanceProfile, profile_id, profile)
    delete(aws, RolePolicy, inline_id, inline)
    delete(aws, RolePolicyAttachment, attach_id, attachment)
    delete(aws, Role, role_id, role)
    assert iam.list_roles()["Roles"] == []
