"""EC2's gaps between the sandbox's moto and AWS: network interfaces and their
addresses, security groups and their rules, instance launches, volumes, tags and VPC
peering, each closed by patching moto's in-process model (applied by
``moto_gaps.close_every_gap``; each has a line in ``docs/sandbox-fidelity.md``).

- **An interface's fixed address stays free.** AWS takes a network interface's
  private address out of its subnet: no instance launched later is given it. moto
  keeps instance addresses in a per-subnet table that interfaces made with an explicit
  address never enter, and hands addresses out in order from the bottom of the subnet,
  so with seven instances in a subnet the eighth gets ``.10`` — a control-plane
  member's fixed address — and two interfaces answer for it.
- **One resource's tags are read from an index.** AWS answers ``DescribeInstances``
  for a few hundred instances in well under a second. moto reads each resource's tags
  by scanning every tag of every EC2 resource through its ``DescribeTags`` filter, so
  a description of N instances costs N times all tags: with the 72-ASG example's ~390
  instances one call took seconds, and the node bridge, describing every second, kept
  half a core busy and starved the control plane it stands beside.
- **A group another group's rule refers to can be deleted.** AWS refuses
  (``DependencyViolation``) until every such rule is revoked; moto deletes the group
  and leaves the rules pointing at nothing, so a migration that would stall on AWS
  passes here. kops's rules refer from the control-plane group to the nodes' group:
  retiring the old workers' group is where a real account says no.
- **A rule may name a protocol that has no ports.** AWS accepts a rule for any IP
  protocol number without a port range (kops admits Calico's IP-in-IP, protocol 4, to
  the control plane from the nodes) and reports its ports as -1, as for "all"; moto
  reads ports for every protocol but "all" and fails with a ``TypeError``.
- **A rule's description does not make it another rule.** AWS refuses a rule that
  differs from one the group has only in its description
  (``InvalidPermission.Duplicate``); moto keeps a referenced group's description in what
  it compares, so the same permission from a group is added twice, and adoption then
  finds two live rules for one it declares.
- **A template's interface carries its security groups.** AWS gives an instance
  launched from a template the groups of the template's first network interface
  (``NetworkInterfaces[0].Groups``, where kops puts them); moto reads groups only from
  the template's ``SecurityGroupIds``, so a kops node would run in no group.
- **EC2's answers are not broken by a VPC peering.** moto's first
  ``CreateVpcPeeringConnection`` adds a key to a response-transformer table every EC2
  answer iterates while it is serialized; an answer serialized on another thread at that
  moment fails ("dictionary changed size during iteration", HTTP 500), and the update
  that made the peering (vpc-move's ``target-network``) errored at random. The key is
  put in the table before any request, so the create only replaces its value.
- **A group in use cannot be deleted.** AWS refuses to delete a security group that a
  network interface (so a running instance) still carries (``DependencyViolation``;
  EC2 API reference, DeleteSecurityGroup); moto deletes it, so a clean-up that deletes
  a group before the instances in it are gone passes here. An instance's primary
  interface goes with it, as AWS deletes it on termination (moto keeps it).
- **An instance's own interfaces go with it.** AWS deletes, on termination, the
  interfaces a launch created unless the launch said ``DeleteOnTermination: false``
  (the default is to delete, for the primary interface and for a template's interface
  that leaves it unset; AWS support, quoted in terraform-provider-aws#6080); moto
  deletes only those whose launch said ``true``, so every terminated worker left an
  interface in its subnet and a VPC emptied of workers could not be compared with the
  one before them. Terminating a terminated instance changes nothing, as on AWS.
- **A peering description is filtered.** AWS's ``DescribeVpcPeeringConnections``
  applies its filters (``status-code``, ``requester-vpc-info.vpc-id``,
  ``accepter-vpc-info.vpc-id``, … ; EC2 API reference); moto ignores every one and
  answers all peerings, deleted ones included, so a check for active peerings of a
  VPC read a deleted peering's VPCs (gone: ``InvalidVpcID.NotFound``) once vpc-move
  went forward again after taking its target network back. A filter the sandbox does
  not apply is refused, not ignored.
- **A NAT gateway's interface goes with it.** AWS deletes the requester-managed
  network interface of a NAT gateway it deletes and disassociates its Elastic IP (VPC
  User Guide, "Delete a NAT gateway"); moto keeps the interface, in the VPC's default
  group, so the group — and with it the VPC — could never be deleted after it: taking
  vpc-move's ``target-network`` back retried the VPC's delete without end.
- **An address in use cannot be taken twice.** AWS refuses an interface at a private
  address another interface in the subnet holds (``InvalidIPAddress.InUse``), a member's
  fixed address included; moto gives both, so a replacement that creates the new member
  interface before deleting the old one passes here and fails on an account.
- **A volume is not shrunk, nor modified without end.** AWS refuses a smaller size
  (``InvalidParameterValue``) and, since 15 January 2026, more than four modifications
  of one volume in a rolling 24 hours (``VolumeModificationRateExceeded``; before, one
  per six hours; EBS User Guide, "Requirements for EBS volume modifications"); moto
  takes any.
- **A launch names its groups in one place.** AWS refuses a launch (a template's
  included) that gives security groups both for the instance and on a network
  interface (``InvalidParameterCombination``: "Network interfaces and an instance-level
  security groups may not be specified on the same request"); moto merges them.
- **An interface's description can be cleared.** AWS's
  ``ModifyNetworkInterfaceAttribute`` sets the description it is given, the empty one
  included (terraform-provider-aws sends ``""`` when a program drops ``description``);
  moto ignores an empty one, so neither that update nor a description cleared out of
  band would show.
"""

from __future__ import annotations

import copy
import functools
import time
from collections.abc import Callable
from typing import Any


def reserve_interface_addresses() -> None:
    """Record an interface's private addresses in its subnet's table, as AWS allocates
    them (an address an instance already holds stays the instance's). Idempotent."""
    from moto.ec2.models.elastic_network_interfaces import NetworkInterface

    if getattr(NetworkInterface.__init__, "_kubeshift_reserves", False):
        return
    original = NetworkInterface.__init__

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        taken = getattr(self.subnet, "_subnet_ips", None)
        if not isinstance(taken, dict):
            return
        addresses = [self.private_ip_address]
        addresses += [a.get("PrivateIpAddress") for a in self.private_ip_addresses or []]
        for address in filter(None, addresses):
            taken.setdefault(str(address), self)

    __init__._kubeshift_reserves = True  # type: ignore[attr-defined]
    NetworkInterface.__init__ = __init__  # type: ignore[method-assign]


def indexed_tag_lookups() -> None:
    """Read one EC2 resource's tags straight from moto's tag table (keyed by resource
    id), in the form and order its scan returned them. Idempotent."""
    from moto.ec2.models.core import TaggedEC2Resource
    from moto.ec2.utils import EC2_PREFIX_TO_RESOURCE, get_prefix

    if getattr(TaggedEC2Resource.get_tags, "_kubeshift_indexed", False):
        return

    def get_tags(self: Any) -> list[dict[str, str]]:
        resource_id = getattr(self, "id", None)
        if not resource_id:
            return []
        kind = EC2_PREFIX_TO_RESOURCE.get(get_prefix(resource_id), "")
        tags = self.ec2_backend.tags.get(resource_id, {})
        return [
            {"resource_id": resource_id, "key": key, "value": value, "resource_type": kind}
            for key, value in tags.items()
        ]

    get_tags._kubeshift_indexed = True  # type: ignore[attr-defined]
    TaggedEC2Resource.get_tags = get_tags  # type: ignore[method-assign]


def referenced_groups_stay() -> None:
    """Refuse to delete a security group another group's rule refers to, as AWS does
    (``DependencyViolation``). Idempotent."""
    _guard_group_deletes("_kubeshift_referenced", _referring_group)


def _referring_group(backend: Any, doomed: Any) -> str | None:
    for groups in backend.groups.values():
        for group in groups.values():
            rules = [*group.ingress_rules, *group.egress_rules]
            if group.id != doomed.id and any(
                r.source_group.get("GroupId") == doomed.id for r in rules
            ):
                return str(group.id)
    return None


def _guard_group_deletes(marker: str, dependent: Callable[[Any, Any], str | None]) -> None:
    """Wrap moto's group delete to refuse while ``dependent(backend, group)`` names
    something that holds the group (``DependencyViolation``), once per ``marker``."""
    from moto.ec2.exceptions import DependencyViolationError
    from moto.ec2.models.security_groups import SecurityGroupBackend

    original = SecurityGroupBackend.delete_security_group
    if getattr(original, marker, False):
        return

    @functools.wraps(original)
    def delete_security_group(
        self: Any, name: str | None = None, group_id: str | None = None
    ) -> None:
        doomed = self.get_security_group_by_name_or_id(group_id or name or "")
        held_by = dependent(self, doomed) if doomed is not None else None
        if held_by is not None:
            raise DependencyViolationError(
                f"resource {doomed.id} has a dependent object ({held_by})"
            )
        original(self, name=name, group_id=group_id)

    setattr(delete_security_group, marker, True)
    SecurityGroupBackend.delete_security_group = delete_security_group  # type: ignore[method-assign]


PORTED_PROTOCOLS = frozenset({"tcp", "6", "udp", "17", "icmp", "1", "icmpv6", "58", "-1", "all"})
"""Protocols whose rules carry a port range (or ICMP type and code); AWS ignores ports
for every other protocol."""


def portless_protocols() -> None:
    """Accept a rule for a protocol without ports and keep its ports unset, as moto does
    for "all". Idempotent."""
    from moto.ec2.models.security_groups import SecurityGroupRule

    if getattr(SecurityGroupRule.__init__, "_kubeshift_portless", False):
        return
    original = SecurityGroupRule.__init__

    @functools.wraps(original)
    def __init__(
        self: Any,
        ec2_backend: Any,
        ip_protocol: str,
        group_id: str,
        from_port: str | None,
        to_port: str | None,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        portless = bool(ip_protocol) and str(ip_protocol).lower() not in PORTED_PROTOCOLS
        if portless:
            from_port = to_port = "0"  # read and dropped below: AWS ignores them
        original(self, ec2_backend, ip_protocol, group_id, from_port, to_port, *args, **kwargs)
        if portless:
            self.from_port = self.to_port = None

    __init__._kubeshift_portless = True  # type: ignore[attr-defined]
    SecurityGroupRule.__init__ = __init__  # type: ignore[method-assign]


def rules_equal_whatever_their_descriptions() -> None:
    """Compare two rules of a group as AWS does: protocol, ports (none for "all"), and
    the peer — a CIDR, a prefix list, or a referenced group by its id, whatever its
    description. Idempotent."""
    from moto.ec2.models.security_groups import SecurityGroupRule

    if getattr(SecurityGroupRule.__eq__, "_kubeshift", False):
        return

    def permission(rule: Any) -> tuple[Any, ...]:
        ranges = rule.ip_range or {}
        ports = (None, None) if rule.ip_protocol == "-1" else (rule.from_port, rule.to_port)
        peer = (ranges.get("CidrIp"), ranges.get("CidrIpv6"), rule.prefix_list_id)
        return (rule.ip_protocol, *ports, *peer, (rule.source_group or {}).get("GroupId"))

    def __eq__(self: Any, other: object) -> bool:
        if not isinstance(other, SecurityGroupRule):
            return NotImplemented
        return permission(self) == permission(other)

    __eq__._kubeshift = True  # type: ignore[attr-defined]
    SecurityGroupRule.__eq__ = __eq__  # type: ignore[method-assign,assignment]


def interface_groups_reach_instances() -> None:
    """An instance launched from a template whose first network interface names
    security groups runs in them (unless the launch names its own). Idempotent."""
    from moto.ec2.models.instances import InstanceBackend

    original = InstanceBackend.run_instances
    if getattr(original, "_kubeshift", False):
        return

    @functools.wraps(original)
    def run_instances(self: Any, *args: Any, **kwargs: Any) -> Any:
        template = kwargs.get("launch_template")
        if template and not kwargs.get("security_group_ids"):
            data = self._get_template_from_args(template).data
            interfaces = data.get("NetworkInterfaces") or []
            first: dict[str, Any] = next(
                (i for i in interfaces if int(i.get("DeviceIndex", 0)) == 0), {}
            )
            if first.get("Groups") and not data.get("SecurityGroupIds"):
                kwargs["security_group_ids"] = list(first["Groups"])
        return original(self, *args, **kwargs)

    run_instances._kubeshift = True  # type: ignore[attr-defined]
    InstanceBackend.run_instances = run_instances  # type: ignore[method-assign]


def _gone_with_its_instance(eni: Any) -> bool:
    """An instance's primary interface, its instance terminated: AWS deleted it."""
    instance = getattr(eni, "instance", None)
    if instance is None or getattr(instance, "state", None) != "terminated":
        return False
    return any(nic is eni for index, nic in instance.nics.items() if int(index) == 0)


def _live_interfaces(backend: Any) -> list[Any]:
    return [eni for eni in backend.enis.values() if not _gone_with_its_instance(eni)]


def groups_in_use_stay() -> None:
    """Refuse to delete a security group a live interface or instance carries, as AWS
    does (``DependencyViolation``). Idempotent."""
    _guard_group_deletes("_kubeshift_in_use", _carrier)


def _carrier(backend: Any, doomed: Any) -> str | None:
    for eni in _live_interfaces(backend):
        if doomed.id in _own_groups(eni):
            return str(eni.id)
    for instance in backend.all_instances():
        if instance.state != "terminated" and any(
            g.id == doomed.id for g in instance.security_groups
        ):
            return str(instance.id)
    return None


def _own_groups(eni: Any) -> set[str]:
    return {getattr(g, "id", g) for g in getattr(eni, "_group_set", [])}


def addresses_taken_once() -> None:
    """Refuse an interface at a private address another live interface in its subnet
    holds (``InvalidIPAddress.InUse``), as AWS does. Idempotent."""
    from moto.ec2.exceptions import EC2ClientError
    from moto.ec2.models.elastic_network_interfaces import NetworkInterfaceBackend

    original = NetworkInterfaceBackend.create_network_interface
    if getattr(original, "_kubeshift", False):
        return

    @functools.wraps(original)
    def create_network_interface(
        self: Any,
        subnet: Any,
        private_ip_address: str | list[str] | None,
        private_ip_addresses: list[dict[str, Any]] | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        wanted: set[Any] = {private_ip_address} if isinstance(private_ip_address, str) else set()
        wanted |= {a.get("PrivateIpAddress") for a in private_ip_addresses or []}
        wanted.discard(None)
        subnet_id = getattr(subnet, "id", subnet)
        for eni in _live_interfaces(self):
            if getattr(eni.subnet, "id", None) != subnet_id:
                continue
            held = {eni.private_ip_address}
            held |= {a.get("PrivateIpAddress") for a in eni.private_ip_addresses or []}
            taken = sorted(str(a) for a in wanted & held)
            if taken:
                raise EC2ClientError("InvalidIPAddress.InUse", f"Address {taken[0]} is in use.")
        return original(self, subnet, private_ip_address, private_ip_addresses, *args, **kwargs)

    create_network_interface._kubeshift = True  # type: ignore[attr-defined]
    NetworkInterfaceBackend.create_network_interface = create_network_interface  # type: ignore[method-assign]


def reservation_descriptions_kept() -> None:
    """Keep a subnet CIDR reservation's description and answer it, as AWS does (moto
    drops it, so every read would show the reservation changed). Idempotent."""
    from moto.ec2.responses.subnets import Subnets

    original = Subnets.create_subnet_cidr_reservation
    if getattr(original, "_kubeshift", False):
        return

    @functools.wraps(original)
    def create_subnet_cidr_reservation(self: Any) -> Any:
        answer = original(self)
        answer.result["SubnetCidrReservation"].description = self._get_param("Description")
        return answer

    create_subnet_cidr_reservation._kubeshift = True  # type: ignore[attr-defined]
    Subnets.create_subnet_cidr_reservation = create_subnet_cidr_reservation  # type: ignore[method-assign]


def interface_descriptions_cleared() -> None:
    """Set an interface's description to the one given, the empty one included, as AWS
    does (moto keeps the old one when given ``""``). Idempotent."""
    from moto.ec2.models.elastic_network_interfaces import NetworkInterfaceBackend

    original = NetworkInterfaceBackend.modify_network_interface_attribute
    if getattr(original, "_kubeshift", False):
        return

    @functools.wraps(original)
    def modify_network_interface_attribute(
        self: Any, eni_id: str, group_ids: list[str], *args: Any, **kwargs: Any
    ) -> None:
        original(self, eni_id, group_ids, *args, **kwargs)
        description = kwargs.get("description", args[1] if len(args) > 1 else None)
        if description is not None:
            self.get_network_interface(eni_id).description = description

    modify_network_interface_attribute._kubeshift = True  # type: ignore[attr-defined]
    NetworkInterfaceBackend.modify_network_interface_attribute = (  # type: ignore[method-assign]
        modify_network_interface_attribute
    )


VOLUME_MODIFICATIONS_PER_DAY = 4
"""AWS's limit on one volume's modifications in a rolling 24 hours (since 15 January
2026; supabase/supabase#44071 quotes the announcement)."""


def volume_modifications_as_aws() -> None:
    """Refuse a smaller size and a fifth modification of a volume within 24 hours, as
    AWS does. Idempotent."""
    from moto.ec2.exceptions import EC2ClientError
    from moto.ec2.models.elastic_block_store import EBSBackend

    original = EBSBackend.modify_volume
    if getattr(original, "_kubeshift", False):
        return

    @functools.wraps(original)
    def modify_volume(
        self: Any, volume_id: str, target_size: int | None = None, *args: Any, **kw: Any
    ) -> Any:
        volume = self.get_volume(volume_id)
        if target_size is not None and int(target_size) < int(volume.size):
            raise EC2ClientError(
                "InvalidParameterValue",
                f"New size cannot be smaller than existing size ({volume.size} GiB).",
            )
        now = time.time()
        recent = [t for t in getattr(volume, "_kubeshift_modified", []) if now - t < 86400]
        if len(recent) >= VOLUME_MODIFICATIONS_PER_DAY:
            raise EC2ClientError(
                "VolumeModificationRateExceeded",
                "You've reached the maximum modification rate per volume limit. Wait "
                "before modifying this volume again.",
            )
        modified = original(self, volume_id, target_size, *args, **kw)
        volume._kubeshift_modified = [*recent, now]
        return modified

    modify_volume._kubeshift = True  # type: ignore[attr-defined]
    EBSBackend.modify_volume = modify_volume  # type: ignore[method-assign]


def launch_groups_in_one_place() -> None:
    """Refuse a launch that gives security groups both for the instance and on a
    network interface, its template's included, as AWS does. Idempotent."""
    from moto.ec2.exceptions import InvalidParameterCombination
    from moto.ec2.models.instances import InstanceBackend

    original = InstanceBackend.run_instances
    if getattr(original, "_kubeshift_one_place", False):
        return

    @functools.wraps(original)
    def run_instances(
        self: Any, image_id: str, count: int, user_data: Any, security_group_names: Any, **kw: Any
    ) -> Any:
        data: dict[str, Any] = {}
        if kw.get("launch_template"):
            data = self._get_template_from_args(kw["launch_template"]).data
        instance_level = bool(
            kw.get("security_group_ids")
            or security_group_names
            or data.get("SecurityGroupIds")
            or data.get("SecurityGroups")
        )
        interfaces = [*(kw.get("nics") or []), *(data.get("NetworkInterfaces") or [])]
        if instance_level and any(i.get("Groups") for i in interfaces if isinstance(i, dict)):
            raise InvalidParameterCombination(
                "Network interfaces and an instance-level security groups may not be "
                "specified on the same request"
            )
        return original(self, image_id, count, user_data, security_group_names, **kw)

    run_instances._kubeshift_one_place = True  # type: ignore[attr-defined]
    InstanceBackend.run_instances = run_instances  # type: ignore[method-assign]


PEERING_STATUS = "CreateVpcPeeringConnectionResult.VpcPeeringConnection.Status"
"""The key moto's peering create writes into EC2's shared transformer table."""


def peering_status_in_place() -> None:
    """Hold EC2's peering-status transformer key from the start (its value passes the
    status through until a create sets its own). Idempotent."""
    from moto.ec2.responses._base_response import EC2BaseResponse

    EC2BaseResponse.RESPONSE_KEY_PATH_TO_TRANSFORMER.setdefault(PEERING_STATUS, _unchanged)


def _unchanged(value: Any) -> Any:
    return value


def nat_interfaces_go_with_them() -> None:
    """Delete a NAT gateway's network interface (its Elastic IP disassociated) with the
    gateway, as AWS does. Idempotent."""
    from moto.ec2.models.nat_gateways import NatGatewayBackend

    original = NatGatewayBackend.delete_nat_gateway
    if getattr(original, "_kubeshift", False):
        return

    @functools.wraps(original)
    def delete_nat_gateway(self: Any, nat_gateway_id: str) -> Any:
        gateway = original(self, nat_gateway_id)
        eni = getattr(gateway, "_eni", None)
        if eni is not None and eni.id in self.enis:
            for address in list(self.addresses):
                if address.eni is eni:
                    self.disassociate_address(address=address.public_ip)
            self.enis.pop(eni.id, None)
        return gateway

    delete_nat_gateway._kubeshift = True  # type: ignore[attr-defined]
    NatGatewayBackend.delete_nat_gateway = delete_nat_gateway  # type: ignore[method-assign]


def instance_interfaces_go_with_it() -> None:
    """Mark the interfaces a launch creates delete-on-termination unless the launch
    says otherwise, and make a second termination a no-op, as AWS does. Idempotent."""
    from moto.ec2.models.instances import Instance

    prep_nics, terminate = Instance.prep_nics, Instance.terminate
    if getattr(prep_nics, "_kubeshift", False):
        return

    @functools.wraps(prep_nics)
    def prep_nics_deleted_with_it(self: Any, nic_spec: Any, *args: Any, **kwargs: Any) -> Any:
        kept = {
            int(n.get("DeviceIndex", 0))
            for n in [*_template_interfaces(self), *(nic_spec or [])]
            if n.get("NetworkInterfaceId")
            or str(n.get("DeleteOnTermination", "")).lower() == "false"
        }
        done = prep_nics(self, nic_spec, *args, **kwargs)
        for index, nic in self.nics.items():
            if int(index) not in kept:
                nic.delete_on_termination = True
        return done

    @functools.wraps(terminate)
    def terminate_once(self: Any) -> Any:
        if self.state == "terminated":
            return copy.copy(self._state)
        return terminate(self)

    prep_nics_deleted_with_it._kubeshift = True  # type: ignore[attr-defined]
    Instance.prep_nics = prep_nics_deleted_with_it  # type: ignore[method-assign]
    Instance.terminate = terminate_once  # type: ignore[method-assign]


def _template_interfaces(instance: Any) -> list[dict[str, Any]]:
    """The network interfaces of the template ``instance`` was launched from (moto
    tags the instance with the template's id and version before it makes its NICs)."""
    tags = instance.ec2_backend.tags.get(instance.id, {})
    template_id = tags.get("aws:ec2launchtemplate:id")
    if not template_id:
        return []
    version = instance.ec2_backend._get_template_from_args(
        {"LaunchTemplateId": template_id, "Version": tags.get("aws:ec2launchtemplate:version")}
    )
    return list(version.data.get("NetworkInterfaces") or [])


PEERING_FILTERS: dict[str, Callable[[Any], set[str]]] = {
    "status-code": lambda pcx: {pcx._status.code},
    "vpc-peering-connection-id": lambda pcx: {pcx.id},
    "requester-vpc-info.vpc-id": lambda pcx: {pcx.vpc.id},
    "accepter-vpc-info.vpc-id": lambda pcx: {pcx.peer_vpc.id},
    "requester-vpc-info.cidr-block": lambda pcx: {pcx.vpc.cidr_block},
    "accepter-vpc-info.cidr-block": lambda pcx: {pcx.peer_vpc.cidr_block},
    "requester-vpc-info.owner-id": lambda pcx: {pcx.vpc.owner_id},
    "accepter-vpc-info.owner-id": lambda pcx: {pcx.peer_vpc.owner_id},
}
"""The ``DescribeVpcPeeringConnections`` filters the sandbox applies: each value a
peering answers to."""


def peering_filters_applied() -> None:
    """Apply ``DescribeVpcPeeringConnections``' filters (and tags) as AWS does; refuse
    one the sandbox does not know. Idempotent."""
    from moto.ec2.exceptions import EC2ClientError
    from moto.ec2.responses.vpc_peering_connections import VPCPeeringConnections

    original = VPCPeeringConnections.describe_vpc_peering_connections
    if getattr(original, "_kubeshift", False):
        return

    @functools.wraps(original)
    def describe(self: Any) -> Any:
        from moto.core.responses import ActionResult

        filters = self._filters_from_querystring()
        unknown = [n for n in filters if n not in PEERING_FILTERS and not n.startswith("tag:")]
        if unknown:
            raise EC2ClientError(
                "InvalidParameterValue",
                f"The filter '{unknown[0]}' is one the sandbox's moto does not apply "
                "(automation/sandbox/moto_gaps/ec2.py PEERING_FILTERS)",
            )
        ids = self._get_param("VpcPeeringConnectionIds", [])
        found = self.ec2_backend.describe_vpc_peering_connections(vpc_peering_ids=ids)
        kept = [pcx for pcx in found if _answers(pcx, filters)]
        return ActionResult({"VpcPeeringConnections": kept})

    describe._kubeshift = True  # type: ignore[attr-defined]
    VPCPeeringConnections.describe_vpc_peering_connections = describe  # type: ignore[method-assign]


def _answers(pcx: Any, filters: dict[str, list[str]]) -> bool:
    for name, wanted in filters.items():
        if name.startswith("tag:"):
            values = {pcx.get_filter_value(name)} - {None}
        else:
            values = PEERING_FILTERS[name](pcx)
        if not values & set(wanted):
            return False
    return True
