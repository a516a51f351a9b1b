"""Recovery after a killed engine: a pending create that had in fact completed is taken
into the state with its live id, the others are cleared and named to check."""

from __future__ import annotations

from pathlib import Path

from automation.aws.clients import AwsAccess, AwsClients
from automation.aws.lookup import Lookup
from automation.engine.adapter import PendingCreate
from automation.run.journal import Journal
from automation.session.recovery import aws_finder, recover_engine
from tests.automation.fakes import FakeEngine
from tests.support.moto_fixtures import MotoServer

RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"


def _rule(group_id: str, port: int) -> PendingCreate:
    inputs = {
        "securityGroupId": group_id, "ipProtocol": "tcp", "fromPort": port, "toPort": port,
        "cidrIpv4": "10.20.0.0/16",
    }  # fmt: skip
    return PendingCreate(f"urn:pulumi:s::p::{RULE}::api-lb-{port}", RULE, inputs)


def test_a_completed_create_is_found_in_the_cloud_and_a_missing_one_is_not(
    moto: MotoServer,
) -> None:
    ec2 = moto.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    group = ec2.create_security_group(GroupName="api-lb", Description="api", VpcId=vpc)["GroupId"]
    made = ec2.authorize_security_group_ingress(
        GroupId=group,
        IpPermissions=[{"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443,
                        "IpRanges": [{"CidrIp": "10.20.0.0/16"}]}],
    )["SecurityGroupRules"][0]["SecurityGroupRuleId"]  # fmt: skip
    live = aws_finder(Lookup(AwsClients(AwsAccess(region=moto.region)), cluster="demo"))

    assert live(_rule(group, 443)) == made
    assert live(_rule(group, 6443)) is None  # its create never reached AWS
    peering = "aws:ec2/vpcPeeringConnection:VpcPeeringConnection"
    assert live(PendingCreate(f"urn:pulumi:s::p::{peering}::p", peering, {})) is None


def test_recovery_takes_what_completed_and_names_the_rest(tmp_path: Path) -> None:
    taken, missing = "urn:pulumi:s::p::t::rule", "urn:pulumi:s::p::t::vpc"
    engine = FakeEngine(pending=[f"creating {taken}", f"creating {missing}", "updating urn:x"])
    journal = Journal(tmp_path / "s.journal.json", "s")

    recovery = recover_engine(
        engine, journal, "s", confirm=lambda _q: True,
        find_live=lambda c: "sgr-1" if c.urn == taken else None,
    )  # fmt: skip

    assert recovery.taken == {taken: "sgr-1"}
    assert recovery.pending_creates == [f"creating {missing}"]
    # taken into the state before the refresh that drops the other create
    assert [c for c in engine.calls if c[0] in ("take", "refresh")] == [
        ("take", ((taken, "sgr-1"),)), ("refresh", True),
    ]  # fmt: skip
    record = journal.get("recover", "recovery-1")
    assert record is not None and record.details["taken"] == {taken: "sgr-1"}
    assert "took 1 resource(s) whose create had completed into the state: rule (sgr-1)" in (
        record.message
    )
