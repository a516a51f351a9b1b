"""The stack file's network rules: a VPC AWS would create (its CIDR, AZs and subnets),
members whose fixed addresses fit their AZs' private subnets on every side of a
migration (and a mirror's beside the primary's), DNS names and hosted-zone ids Route53
takes, and ingress listeners that do not collide. Run by
:func:`components.contract.checks.check` (and a scenario's own rules, for the networks it
adds); each broken rule is one :class:`ConfigError` sentence naming its key."""

from __future__ import annotations

import ipaddress
import re

from components.contract.cluster_models import (
    ControlPlaneConfig,
    DnsConfig,
    IngressConfig,
    NetworkConfig,
)
from components.contract.keys import CLUSTER_KEY, MIGRATION_KEY
from components.contract.model_base import ConfigError
from components.contract.models import StackConfig
from components.contract.placement import member_az
from components.contract.validation import show

VPC_PREFIXES = (16, 28)  # what CreateVpc accepts
_DNS_NAME = re.compile(r"^(\*\.)?([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)+[a-z0-9-]+\.?$")
# As AWS hands them out (Z1D633PJN98FT9, Z0123456789ABCDEFGHIJ; at most 32 characters);
# the sandbox's moto is patched to issue such ids too (automation/sandbox/moto_route53.py).
_ZONE_ID = re.compile(r"^(/hostedzone/)?Z[A-Z0-9]{1,31}$")


def _fail(key: str, message: str) -> None:
    raise ConfigError(key, message)


def check_network(net: NetworkConfig, key: str, region: str) -> None:
    """A VPC AWS would create: its CIDR, subnets and AZs (in ``region``)."""
    low, high = VPC_PREFIXES
    if not low <= net.cidr.prefixlen <= high:
        _fail(
            f"{key}.cidr",
            f"{key}.cidr {net.cidr} is not allowed by AWS: a VPC is a /{low} to /{high}.",
        )
    if len(set(net.azs)) != len(net.azs):
        _fail(f"{key}.azs", f"{key}.azs lists an AZ twice.")
    in_region = re.compile(rf"^{re.escape(region)}(-[a-z]+-\d+)?[a-z]$")
    for az in net.azs:
        if not in_region.fullmatch(az):
            _fail(f"{key}.azs", f"{key}.azs {az!r} is not an availability zone of {region}.")
    for tier in ("public_subnets", "private_subnets"):
        subnets: list[ipaddress.IPv4Network] = getattr(net, tier)
        if len(subnets) != len(net.azs):
            _fail(
                f"{key}.{tier}",
                f"{key}.{tier} has {len(subnets)} subnets for {len(net.azs)} AZs; "
                "give exactly one per AZ, in the order of azs.",
            )
        for i, subnet in enumerate(subnets):
            if not subnet.subnet_of(net.cidr):
                _fail(
                    f"{key}.{tier}[{i}]",
                    f"{key}.{tier}[{i}] {subnet} is outside its VPC {net.cidr}.",
                )
            if subnet.prefixlen > 28:
                _fail(f"{key}.{tier}[{i}]", f"{key}.{tier}[{i}] {subnet} is smaller than /28.")
    everything = [
        (t, i, s)
        for t in ("public_subnets", "private_subnets")
        for i, s in enumerate(getattr(net, t))
    ]
    for n, (tier, i, subnet) in enumerate(everything):
        for other_tier, j, other in everything[n + 1 :]:
            if subnet.overlaps(other):
                _fail(
                    f"{key}.{other_tier}[{j}]",
                    f"{key}.{other_tier}[{j}] {other} overlaps {key}.{tier}[{i}] {subnet}.",
                )


def check_member_azs(
    cp: ControlPlaneConfig, networks: list[tuple[str, NetworkConfig]], copies: int = 1
) -> None:
    key = f"{CLUSTER_KEY}.control_plane"
    source = networks[0][1]
    azs = cp.azs or source.azs
    for net_key, net in networks:
        for az in azs:
            if az not in net.azs:
                _fail(
                    f"{key}.azs",
                    f"{key}.azs {az} is not an AZ of {net_key}; a member's etcd volume "
                    "cannot leave its AZ.",
                )
        for member in range(1, cp.members + 1):
            subnet = net.private_subnet_in(member_az(cp, source, member))
            index = cp.host_index + cp.members * (copies - 1) + member - 1
            if index >= subnet.num_addresses - 1:
                _fail(
                    f"{key}.host_index",
                    f"{key}.host_index {cp.host_index} puts member {member} outside "
                    f"{net_key} subnet {subnet}.",
                )


def check_mirror_addresses(config: StackConfig) -> None:
    cp, mirror = config.cluster.control_plane, config.migration.mirror
    if mirror is None or mirror.host_index is None:
        return
    key = f"{MIGRATION_KEY}.mirror.host_index"
    if abs(mirror.host_index - cp.host_index) < cp.members:
        _fail(
            key,
            f"{key} {mirror.host_index} gives the mirror's members addresses of the "
            f"primary's (control_plane.host_index {cp.host_index}, {cp.members} members).",
        )
    net = config.cluster.network
    for member in range(1, cp.members + 1):
        subnet = net.private_subnet_in(member_az(cp, net, member))
        if mirror.host_index + member - 1 >= subnet.num_addresses - 1:
            _fail(key, f"{key} {mirror.host_index} puts mirror member {member} outside {subnet}.")


def check_dns(dns: DnsConfig) -> None:
    key = f"{CLUSTER_KEY}.dns"
    if not _ZONE_ID.fullmatch(dns.zone_id):
        _fail(
            f"{key}.zone_id",
            f"{key}.zone_id {dns.zone_id!r} is not a Route53 hosted zone id ('Z' then "
            "upper-case letters and digits, e.g. Z0123456789ABCDEFGHIJ).",
        )
    fields = (("api_record", [dns.api_record]), ("ingress_records", dns.ingress_records))
    for field, names in fields:
        for name in names:
            labels = name.rstrip(".").split(".")
            if (
                not _DNS_NAME.fullmatch(name)
                or len(name.rstrip(".")) > 253
                or any(len(label) > 63 for label in labels)
            ):
                _fail(
                    f"{key}.{field}",
                    f"{key}.{field} {show(name)} is not a DNS name (at most 253 characters, "
                    "labels at most 63).",
                )
    if len(set(dns.ingress_records)) != len(dns.ingress_records):
        _fail(f"{key}.ingress_records", f"{key}.ingress_records lists a name twice.")


def check_ingress(ingress: IngressConfig) -> None:
    key = f"{CLUSTER_KEY}.ingress.listeners"
    for attribute in ("port", "node_port"):
        values = [getattr(listener, attribute) for listener in ingress.listeners]
        twice = sorted({v for v in values if values.count(v) > 1})
        if twice:
            _fail(key, f"{key} uses {attribute} {twice[0]} twice.")
