"""vpc-move's traffic gates on moto's Route53 and ELBv2 (real HTTP, real botocore)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from automation.aws.clients import AwsAccess, AwsClients
from automation.config.clients import StaticClients
from automation.config.settings import RuntimeSettings
from automation.core.errors import PreconditionFailed
from automation.model.context import HookContext
from automation.steps import traffic
from components.contract.loading import load_config, load_stack_file

REPO = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.moto


def _upsert(route53, zone: str, name: str, type_: str, value: str) -> None:  # type: ignore[no-untyped-def]
    route53.change_resource_record_sets(
        HostedZoneId=zone,
        ChangeBatch={
            "Changes": [
                {
                    "Action": "UPSERT",
                    "ResourceRecordSet": {
                        "Name": name,
                        "Type": type_,
                        "TTL": 30,
                        "ResourceRecords": [{"Value": value}],
                    },
                }
            ]
        },
    )


@pytest.fixture
def context(moto) -> HookContext:  # type: ignore[no-untyped-def]
    route53 = moto.client("route53")
    zone = route53.create_hosted_zone(Name="demo.example.internal", CallerReference="t")[
        "HostedZone"
    ]["Id"].split("/")[-1]
    values = load_stack_file(REPO / "stacks" / "Pulumi.vpc-move-small.yaml")
    values["kubeshift:cluster"]["dns"]["zone_id"] = zone
    return HookContext(
        stack="test",
        scenario="vpc-move",
        phase="dns-cutover",
        clients=StaticClients(
            aws=AwsClients(AwsAccess(region=moto.region, endpoint_url=moto.endpoint_url))
        ),
        config=load_config(values),
        settings=RuntimeSettings(),
        outputs={
            "records": {
                "api": {
                    "name": "api.demo.example.internal",
                    "type": "A",
                    "values": ["10.20.64.10"],
                },
                "ingress-0": {
                    "name": "app.demo.example.internal",
                    "type": "CNAME",
                    "values": ["new-lb.elb.us-west-2.amazonaws.com"],
                },
            }
        },
    )


def test_records_gate_waits_for_route53_to_match_the_declared_records(
    context: HookContext,
    moto,  # type: ignore[no-untyped-def]
) -> None:
    route53 = moto.client("route53")
    zone = context.config.cluster.dns.zone_id
    _upsert(
        route53, zone, "app.demo.example.internal", "CNAME", "old-lb.elb.us-west-2.amazonaws.com"
    )
    _upsert(route53, zone, "api.demo.example.internal", "CNAME", "old-api.elb.amazonaws.com")

    pending = traffic.records_as_declared(context)
    assert pending.items == (
        "api.demo.example.internal. not yet A 10.20.64.10",
        "app.demo.example.internal. not yet CNAME new-lb.elb.us-west-2.amazonaws.com",
    )

    _upsert(
        route53, zone, "app.demo.example.internal", "CNAME", "new-lb.elb.us-west-2.amazonaws.com"
    )
    assert traffic.api_record_as_declared(context).items == (
        "api.demo.example.internal. not yet A 10.20.64.10",
    )
    route53.change_resource_record_sets(
        HostedZoneId=zone,
        ChangeBatch={
            "Changes": [
                {
                    "Action": "DELETE",
                    "ResourceRecordSet": {
                        "Name": "api.demo.example.internal",
                        "Type": "CNAME",
                        "TTL": 30,
                        "ResourceRecords": [{"Value": "old-api.elb.amazonaws.com"}],
                    },
                }
            ]
        },
    )
    _upsert(route53, zone, "api.demo.example.internal", "A", "10.20.64.10")
    assert traffic.records_as_declared(context).done


def test_target_gate_needs_the_new_target_groups(context: HookContext) -> None:
    context = dataclasses.replace(
        context, outputs={"target_group_arns": {"ingress-source": {"80": "arn:x"}}}
    )
    with pytest.raises(PreconditionFailed, match="load balancer 'ingress-target'"):
        traffic.new_ingress_targets_healthy(context)


def test_an_api_record_aliased_to_its_balancer_is_as_declared_once_route53_aliases_it(
    context: HookContext,
    moto,  # type: ignore[no-untyped-def]
) -> None:
    """kops's API record: an A record aliased to the new API load balancer."""
    lb = "new-api.elb.us-west-2.amazonaws.com"
    context = dataclasses.replace(
        context,
        outputs={
            "records": {
                "api": {
                    "name": "api.demo.example.internal", "type": "A", "values": [lb],
                    "alias_zone_id": "Z2LB",
                }
            }
        },
    )  # fmt: skip
    route53 = moto.client("route53")
    zone = context.config.cluster.dns.zone_id
    _upsert(route53, zone, "api.demo.example.internal", "A", "10.20.64.10")
    assert traffic.api_record_as_declared(context).items == (
        f"api.demo.example.internal. not yet A {lb}",
    )
    alias = {"DNSName": lb, "HostedZoneId": "Z2LB", "EvaluateTargetHealth": False}
    route53.change_resource_record_sets(
        HostedZoneId=zone,
        ChangeBatch={"Changes": [{
            "Action": "UPSERT",
            "ResourceRecordSet": {
                "Name": "api.demo.example.internal", "Type": "A", "AliasTarget": alias
            },
        }]},
    )  # fmt: skip
    assert traffic.api_record_as_declared(context).done
