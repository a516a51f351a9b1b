"""The ``Name`` tags another tool gave the parts of the cluster's VPC.

kubeshift finds a route table and an Elastic IP by its ``Name`` tag (nothing else tells
a VPC's route tables apart before their associations are read), and derives those names
from the cluster's (``<cluster>-source-private-<zone>``). A VPC another tool built names
them its own way: kops calls a zone's private table ``private-<zone>.<cluster domain>``,
its subnet ``<zone>.<…>`` and its NAT gateway's address ``<zone>.<…>``. Each part is
told apart here by what it is: the VPC, its subnets by CIDR, the internet gateway
attached to it, a NAT gateway by its subnet and its address through it, a route table by
a subnet associated with it. Where the live ``Name`` differs from kubeshift's, it is
proposed as a kept tag (``kept_tags: {<logical name>: {Name: <live>}}``), which the
program declares in place of its own (:mod:`components.kept_tags`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi

from automation.adoption.live import Raw, tags_of
from automation.aws.clients import AwsClients
from automation.review.render import render_program
from components.contract import loading as stack_loading
from components.kept_tags import NAME

VPC = "aws:ec2/vpc:Vpc"
SUBNET = "aws:ec2/subnet:Subnet"
GATEWAY = "aws:ec2/internetGateway:InternetGateway"
NAT = "aws:ec2/natGateway:NatGateway"
ADDRESS = "aws:ec2/eip:Eip"
TABLE = "aws:ec2/routeTable:RouteTable"
ASSOCIATION = "aws:ec2/routeTableAssociation:RouteTableAssociation"
_LIVE_NAT = ("pending", "available")


class _ByLogicalName(pulumi.runtime.Mocks):
    """Records what the program declares; each resource's id is its logical name, so an
    input that refers to another resource names it."""

    def __init__(self) -> None:
        self.declared: list[tuple[str, str, dict[str, Any]]] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        inputs = dict(args.inputs)
        if args.custom:
            self.declared.append((args.typ, args.name, inputs))
        return args.name, {**inputs, "allocationId": args.name}

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[Any]]:
        return {}, []


def _name(resource: Raw | None) -> str | None:
    return tags_of(resource).get(NAME) if resource else None


def network_names(
    values: Mapping[str, Any], clients: AwsClients, vpc: Raw
) -> dict[str, dict[str, str]]:
    """Logical name -> ``{"Name": <live>}`` for each part of the VPC ``vpc`` whose live
    ``Name`` differs from the one the stack ``values`` declare."""
    config = stack_loading.load_config(values)
    mocks = _ByLogicalName()
    render_program(values, config.phase_ids[0], mocks=mocks)
    ec2, vpc_id = clients.ec2, vpc["VpcId"]
    in_vpc: list[Any] = [{"Name": "vpc-id", "Values": [vpc_id]}]
    subnets = {s["CidrBlock"]: s for s in ec2.describe_subnets(Filters=in_vpc)["Subnets"]}
    nats = ec2.describe_nat_gateways(
        Filters=[*in_vpc, {"Name": "state", "Values": list(_LIVE_NAT)}]
    )["NatGateways"]
    tables = ec2.describe_route_tables(Filters=in_vpc)["RouteTables"]
    gateways = ec2.describe_internet_gateways(
        Filters=[{"Name": "attachment.vpc-id", "Values": [vpc_id]}]
    )["InternetGateways"]
    allocations = [a["AllocationId"] for n in nats for a in n.get("NatGatewayAddresses", [])]
    addresses = {
        a["AllocationId"]: a
        for a in (
            ec2.describe_addresses(AllocationIds=allocations)["Addresses"] if allocations else []
        )
    }

    declared = {name: (token, inputs) for token, name, inputs in mocks.declared}
    subnet_of: dict[str, Any] = {  # logical name -> live subnet
        name: subnets[inputs["cidrBlock"]]
        for name, (token, inputs) in declared.items()
        if token == SUBNET and inputs.get("cidrBlock") in subnets
    }
    live: dict[str, Any] = {}
    for name, (token, inputs) in declared.items():
        if token == VPC and inputs.get("cidrBlock") == vpc.get("CidrBlock"):
            live[name] = vpc
        elif token == GATEWAY and inputs.get("vpcId") in live and len(gateways) == 1:
            live[name] = gateways[0]
        elif token == NAT and inputs.get("subnetId") in subnet_of:
            subnet_id = subnet_of[inputs["subnetId"]]["SubnetId"]
            nat = next((n for n in nats if n["SubnetId"] == subnet_id), None)
            live[name] = nat
            held = [a["AllocationId"] for a in (nat or {}).get("NatGatewayAddresses", [])]
            if nat and inputs.get("allocationId") and held:
                live[str(inputs["allocationId"])] = addresses.get(held[0])
        elif token == ASSOCIATION and inputs.get("subnetId") in subnet_of:
            subnet_id = subnet_of[inputs["subnetId"]]["SubnetId"]
            live[str(inputs["routeTableId"])] = next(
                (
                    t
                    for t in tables
                    if any(a.get("SubnetId") == subnet_id for a in t.get("Associations", []))
                ),
                None,
            )
    live.update(subnet_of)
    kept = {}
    for name, resource in sorted(live.items()):
        token, inputs = declared.get(name, ("", {}))
        if token not in (VPC, SUBNET, GATEWAY, NAT, ADDRESS, TABLE):
            continue
        live_name, own = _name(resource), dict(inputs.get("tags") or {}).get(NAME)
        if live_name and live_name != own:
            kept[name] = {NAME: live_name}
    return kept
