"""``aws:ec2`` VPC peering: the connection, its acceptance and its options.

``force_new`` is, per type, the properties the Terraform AWS provider's schema marks
``ForceNew`` (hashicorp/terraform-provider-aws ``internal/service/ec2/``), which is what
pulumi-aws replaces on; acceptance (``autoAccept``), options and tags change in place.
The connection is read from this account's side, requester's or accepter's, as the
provider reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from botocore.exceptions import ClientError

from automation.sandbox.provider.model import (
    OPTIONAL_COMPUTED,
    REGION,
    Aws,
    ForceNew,
    NotFound,
    Props,
    Request,
    ResourceType,
    register,
    tags_list,
)
from automation.sandbox.provider.types.ec2_calls import (
    SRC,
    Raw,
    caller_account,
    error_code,
    find_one,
    is_not_found,
    retag,
    some,
    tag_outputs,
    tag_spec,
    until,
    until_gone,
)

# Statuses the provider reads as "gone" (findVPCPeeringConnectionByID).
_PEERING_GONE = frozenset({"deleted", "expired", "failed", "rejected"})


def _peering(aws: Aws, id_: str) -> Raw:
    pcx = find_one(
        lambda: aws.ec2.describe_vpc_peering_connections(VpcPeeringConnectionIds=[id_])[
            "VpcPeeringConnections"
        ]
    )
    if pcx["Status"]["Code"] in _PEERING_GONE:
        raise NotFound(f"{id_} is {pcx['Status']['Code']}")
    return pcx


def _status(pcx: Raw) -> str:
    return str(pcx["Status"]["Code"])


def _accept_if_pending(aws: Aws, id_: str, props: Props) -> None:
    """``autoAccept``: accept a connection still pending acceptance, wait for active."""
    if props.get("autoAccept") and _status(_peering(aws, id_)) == "pending-acceptance":
        aws.ec2.accept_vpc_peering_connection(VpcPeeringConnectionId=id_)
        until(lambda: _peering(aws, id_), lambda p: _status(p) == "active", 60.0)


def _peering_outputs(aws: Aws, pcx: Raw, state: Props) -> Props:
    """The connection seen from this account: the requester's side unless this account
    owns only the accepter's (the provider's resourceVPCPeeringConnectionRead)."""
    accepter, requester = pcx["AccepterVpcInfo"], pcx["RequesterVpcInfo"]
    if accepter.get("OwnerId") != requester.get("OwnerId") and accepter.get(
        "OwnerId"
    ) == caller_account(aws):
        mine, peer = accepter, requester
    else:
        mine, peer = requester, accepter
    return some(
        {
            "acceptStatus": _status(pcx),
            "autoAccept": state.get("autoAccept"),  # write-only: AWS never says
            "peerOwnerId": peer.get("OwnerId"),
            "peerRegion": accepter.get("Region"),
            "peerVpcId": peer.get("VpcId"),
            "vpcId": mine.get("VpcId"),
            **tag_outputs(pcx.get("Tags")),
        }
    )


@register
class VpcPeeringConnection(ResourceType):
    """``aws:ec2/vpcPeeringConnection:VpcPeeringConnection`` —
    ``vpc_peering_connection.go``: ``peer_owner_id``, ``peer_region``, ``peer_vpc_id``,
    ``vpc_id`` ForceNew; ``auto_accept`` (accept when pending) and tags update."""

    token = "aws:ec2/vpcPeeringConnection:VpcPeeringConnection"
    not_read = {
        **dict.fromkeys(
            ("accepter", "requester"),
            "peering options: the program declares them as PeeringConnectionOptions; "
            + OPTIONAL_COMPUTED,
        ),
        "region": REGION,
    }
    force_new = (
        ForceNew("peerOwnerId", SRC + "vpc_peering_connection.go: peer_owner_id ForceNew"),
        ForceNew("peerRegion", SRC + "vpc_peering_connection.go: peer_region ForceNew"),
        ForceNew("peerVpcId", SRC + "vpc_peering_connection.go: peer_vpc_id ForceNew"),
        ForceNew("vpcId", SRC + "vpc_peering_connection.go: vpc_id ForceNew"),
    )
    computed = ("acceptStatus", "peerOwnerId", "peerRegion", "tagsAll")
    write_only = ("autoAccept",)

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        if inputs.get("peerRegion") and inputs.get("autoAccept"):
            raise ValueError("peerRegion cannot be set whilst autoAccept is true")
        args = some(
            {
                "VpcId": inputs["vpcId"],
                "PeerVpcId": inputs["peerVpcId"],
                "PeerOwnerId": inputs.get("peerOwnerId"),
                "PeerRegion": inputs.get("peerRegion"),
            }
        )
        pcx = aws.ec2.create_vpc_peering_connection(
            **args, **tag_spec("vpc-peering-connection", inputs.get("tags"))
        )
        id_ = pcx["VpcPeeringConnection"]["VpcPeeringConnectionId"]
        until(
            lambda: _peering(aws, id_),
            lambda p: _status(p) in ("pending-acceptance", "active"),
            60.0,
        )
        _accept_if_pending(aws, id_, inputs)
        return id_, self.read(aws, req, id_, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        return _peering_outputs(aws, _peering(aws, id_), state)

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        _accept_if_pending(aws, id_, news)
        retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        try:
            aws.ec2.delete_vpc_peering_connection(VpcPeeringConnectionId=id_)
        except ClientError as err:
            # "InvalidStateTransition: ... attempted to transition from failed to deleting"
            if not (is_not_found(err) or error_code(err) == "InvalidStateTransition"):
                raise
        until_gone(lambda: _peering(aws, id_), 60.0)


@register
class VpcPeeringConnectionAccepter(ResourceType):
    """``aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter`` —
    ``vpc_peering_connection_accepter.go``: ``vpc_peering_connection_id`` ForceNew.
    Creating adopts the existing connection (id = its id), accepts it if
    ``autoAccept`` and tags it; delete only forgets it, as the provider does."""

    token = "aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter"
    not_read = {
        **dict.fromkeys(
            ("accepter", "requester"),
            "peering options: the program declares them as PeeringConnectionOptions; "
            + OPTIONAL_COMPUTED,
        ),
        "region": REGION,
    }
    force_new = (
        ForceNew(
            "vpcPeeringConnectionId",
            SRC + "vpc_peering_connection_accepter.go: vpc_peering_connection_id ForceNew",
        ),
    )
    computed = ("acceptStatus", "peerOwnerId", "peerRegion", "peerVpcId", "tagsAll", "vpcId")
    write_only = ("autoAccept",)

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        id_ = inputs["vpcPeeringConnectionId"]
        try:
            _peering(aws, id_)
        except NotFound as err:
            raise ValueError(f"VPC peering connection {id_} not found: {err}") from err
        _accept_if_pending(aws, id_, inputs)
        if inputs.get("tags"):
            aws.ec2.create_tags(Resources=[id_], Tags=tags_list(inputs["tags"]))
        return id_, self.read(aws, req, id_, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        outputs = _peering_outputs(aws, _peering(aws, id_), state)
        return {**outputs, "vpcPeeringConnectionId": id_}

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        _accept_if_pending(aws, id_, news)
        retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        """Nothing to do: the connection belongs to its requester."""


# Peering option sides: Pulumi property -> (ModifyVpcPeeringConnectionOptions argument,
# the side's DescribeVpcPeeringConnections field).
_SIDES = {
    "accepter": ("AccepterPeeringConnectionOptions", "AccepterVpcInfo"),
    "requester": ("RequesterPeeringConnectionOptions", "RequesterVpcInfo"),
}


_DNS = "AllowDnsResolutionFromRemoteVpc"


def _dns(side: Mapping[str, Any] | None) -> bool:
    return bool((side or {}).get("allowRemoteVpcDnsResolution"))


@register
class PeeringConnectionOptions(ResourceType):
    """``aws:ec2/peeringConnectionOptions:PeeringConnectionOptions`` —
    ``vpc_peering_connection_options.go``: ``vpc_peering_connection_id`` ForceNew;
    ``accepter`` / ``requester`` (``allowRemoteVpcDnsResolution``) change with
    ModifyVpcPeeringConnectionOptions. Delete leaves the options as they are, as the
    provider does."""

    token = "aws:ec2/peeringConnectionOptions:PeeringConnectionOptions"
    not_read = {"region": REGION}
    force_new = (
        ForceNew(
            "vpcPeeringConnectionId",
            SRC + "vpc_peering_connection_options.go: vpc_peering_connection_id ForceNew",
        ),
    )
    computed = ()

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        id_ = inputs["vpcPeeringConnectionId"]
        self._modify(aws, id_, {}, inputs)
        return id_, self.read(aws, req, id_, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        pcx = _peering(aws, id_)
        outputs: Props = {"vpcPeeringConnectionId": id_}
        for side, (_, info) in _SIDES.items():
            if (options := pcx[info].get("PeeringOptions")) is not None:
                outputs[side] = {"allowRemoteVpcDnsResolution": bool(options.get(_DNS))}
        return outputs

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        self._modify(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        """Nothing to do: the options live on the connection."""

    @staticmethod
    def _modify(aws: Aws, id_: str, olds: Props, news: Props) -> None:
        sides = [
            side
            for side in _SIDES
            if news.get(side) is not None
            and (side not in olds or _dns(olds[side]) != _dns(news[side]))
        ]
        if not sides:
            return
        aws.ec2.modify_vpc_peering_connection_options(
            VpcPeeringConnectionId=id_,
            **{_SIDES[s][0]: {_DNS: _dns(news[s])} for s in sides},
        )

        def settled(pcx: Raw) -> bool:  # read back until AWS shows the new options
            return all(
                bool(pcx[_SIDES[s][1]].get("PeeringOptions", {}).get(_DNS)) == _dns(news[s])
                for s in sides
            )

        until(lambda: _peering(aws, id_), settled)
