"""Security-group grants on dependencies, added and removed idempotently, against moto."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from automation.aws import grants as grants_module
from automation.aws.clients import AwsClients
from automation.aws.grants import SgGrant, add_grant, add_grants, grant_present, remove_grant
from automation.core.errors import UserError
from tests.support.moto_world import make_network


@pytest.fixture
def groups(aws: AwsClients) -> tuple[str, str]:
    """A database SG and the mirror cluster's node SG."""
    net = make_network(aws.ec2)
    db = aws.ec2.create_security_group(GroupName="db", Description="db", VpcId=net.vpc_id)
    nodes = aws.ec2.create_security_group(GroupName="nodes", Description="n", VpcId=net.vpc_id)
    return db["GroupId"], nodes["GroupId"]


SHAPES = {
    "one-port": {"protocol": "tcp", "from_port": 5432},
    "port-range": {"protocol": "tcp", "from_port": 6379, "to_port": 6380},
    "all-traffic": {"protocol": "-1"},
}


@pytest.mark.moto
@pytest.mark.parametrize("shape", list(SHAPES.values()), ids=list(SHAPES))
def test_add_and_remove_are_idempotent(
    aws: AwsClients, groups: tuple[str, str], shape: dict[str, Any]
) -> None:
    db, nodes = groups
    grant = SgGrant(group_id=db, source_group_id=nodes, **shape)
    assert [add_grant(aws.ec2, grant).action for _ in range(2)] == ["added", "present"]
    assert grant_present(aws.ec2, grant)
    assert [remove_grant(aws.ec2, grant).action for _ in range(2)] == ["removed", "absent"]
    assert not grant_present(aws.ec2, grant)


@pytest.mark.moto
def test_dry_run_asks_ec2_and_changes_nothing(aws: AwsClients, groups: tuple[str, str]) -> None:
    """moto honours EC2's ``DryRun`` flag with ``DryRunOperation``."""
    db, nodes = groups
    grant = SgGrant(group_id=db, source_group_id=nodes, from_port=5432)
    assert add_grant(aws.ec2, grant, dry_run=True).action == "would-add"
    assert not grant_present(aws.ec2, grant)
    add_grant(aws.ec2, grant)
    result = remove_grant(aws.ec2, grant, dry_run=True)
    assert (result.action, result.changed) == ("would-remove", False)
    assert grant_present(aws.ec2, grant)


@pytest.mark.moto
def test_other_ports_are_a_different_grant(aws: AwsClients, groups: tuple[str, str]) -> None:
    db, nodes = groups
    add_grant(aws.ec2, SgGrant(group_id=db, source_group_id=nodes, from_port=5432))
    other = SgGrant(group_id=db, source_group_id=nodes, from_port=5433)
    assert not grant_present(aws.ec2, other)
    results = add_grants(
        aws.ec2, [other, SgGrant(group_id=db, source_group_id=nodes, from_port=5432)]
    )
    assert [r.message for r in results] == [
        f"added: {db} <- {nodes} tcp/5433",
        f"present: {db} <- {nodes} tcp/5432",
    ]


@pytest.mark.moto
@pytest.mark.parametrize(
    ("seen_present", "call", "expected"),
    [(False, add_grant, "present"), (True, remove_grant, "absent")],
    ids=["duplicate-on-add", "not-found-on-remove"],
)
def test_races_are_answered_by_aws_error_codes(
    aws: AwsClients,
    groups: tuple[str, str],
    monkeypatch: pytest.MonkeyPatch,
    seen_present: bool,
    call: Any,
    expected: str,
) -> None:
    """The check is made to see the opposite of the truth; moto answers
    ``InvalidPermission.Duplicate`` / ``InvalidPermission.NotFound`` like EC2."""
    db, nodes = groups
    grant = SgGrant(group_id=db, source_group_id=nodes, from_port=5432)
    if not seen_present:
        add_grant(aws.ec2, grant)  # someone else added it
    pair = {"GroupId": nodes, "Description": grant.description} if seen_present else None
    monkeypatch.setattr(grants_module, "existing_pair", lambda *_: pair)
    assert call(aws.ec2, grant).action == expected


def test_dry_run_without_permission_is_a_user_error() -> None:
    """moto grants every permission: Stubber plays EC2's ``UnauthorizedOperation``."""
    ec2 = boto3.client(
        "ec2", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    grant = SgGrant(group_id="sg-db", source_group_id="sg-nodes", from_port=5432)
    with Stubber(ec2) as stub:
        stub.add_response("describe_security_groups", {"SecurityGroups": [{"GroupId": "sg-db"}]})
        stub.add_client_error(
            "authorize_security_group_ingress",
            service_error_code="UnauthorizedOperation",
            service_message="You are not authorized to perform this operation.",
        )
        with pytest.raises(UserError, match="Check the IAM permissions"):
            add_grant(ec2, grant, dry_run=True)


def test_ports_are_required_unless_all_traffic() -> None:
    with pytest.raises(ValueError, match="needs from_port"):
        SgGrant(group_id="sg-a", source_group_id="sg-b")
