"""``aws:ec2`` routing: route tables, their routes and their subnet associations.

``force_new`` is, per type, the properties the Terraform AWS provider's schema marks
``ForceNew`` (hashicorp/terraform-provider-aws ``internal/service/ec2/``), which is what
pulumi-aws replaces on; a new target is a ReplaceRoute and a new route table a
ReplaceRouteTableAssociation. Creates and deletes wait the way the Terraform provider
does (eventual consistency, a table's associations going first), so the calls are right
for AWS too; against moto every wait ends at its first poll.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from botocore.exceptions import ClientError

from automation.sandbox.provider.model import (
    COMPUTED_ONLY,
    OPTIONAL_COMPUTED,
    REGION,
    Aws,
    ForceNew,
    NotFound,
    Props,
    Request,
    ResourceType,
    register,
)
from automation.sandbox.provider.types.ec2_calls import (
    PROPAGATION,
    SRC,
    Raw,
    ec2_arn,
    filters,
    find_one,
    ignore_not_found,
    is_not_found,
    retag,
    retry,
    some,
    tag_outputs,
    tag_spec,
    until,
)


@register
class RouteTable(ResourceType):
    """``aws:ec2/routeTable:RouteTable`` — ``vpc_route_table.go``: ``vpc_id`` ForceNew;
    tags update. Delete first disassociates the table (as the Terraform provider does)."""

    token = "aws:ec2/routeTable:RouteTable"
    not_read = {
        **dict.fromkeys(
            ("routes", "propagatingVgws"),
            "inline routes and propagations: the program declares routes as Route "
            f"resources; {OPTIONAL_COMPUTED}",
        ),
        "region": REGION,
    }
    force_new = (ForceNew("vpcId", SRC + "vpc_route_table.go: vpc_id ForceNew"),)
    computed = ("arn", "ownerId", "tagsAll")

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        table = aws.ec2.create_route_table(
            VpcId=inputs["vpcId"], **tag_spec("route-table", inputs.get("tags"))
        )
        id_ = table["RouteTable"]["RouteTableId"]
        return id_, until(lambda: self.read(aws, req, id_, inputs))

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        table = _route_table(aws, id_)
        return some(
            {
                "arn": ec2_arn(aws, table["OwnerId"], f"route-table/{id_}"),
                "ownerId": table["OwnerId"],
                "vpcId": table["VpcId"],
                **tag_outputs(table.get("Tags")),
            }
        )

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        retag(aws, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        try:
            table = _route_table(aws, id_)
        except NotFound:
            return
        for association in table.get("Associations", []):
            if not association.get("Main"):
                _disassociate(aws, association["RouteTableAssociationId"])
        ignore_not_found(lambda: aws.ec2.delete_route_table(RouteTableId=id_))


def _route_table(aws: Aws, id_: str) -> Raw:
    return find_one(lambda: aws.ec2.describe_route_tables(RouteTableIds=[id_])["RouteTables"])


def _disassociate(aws: Aws, association_id: str) -> None:
    ignore_not_found(lambda: aws.ec2.disassociate_route_table(AssociationId=association_id))


# Route destinations and targets: Pulumi property -> EC2 API field (CreateRoute,
# ReplaceRoute, DeleteRoute, and the Routes of DescribeRouteTables).
_DESTINATIONS = {
    "destinationCidrBlock": "DestinationCidrBlock",
    "destinationIpv6CidrBlock": "DestinationIpv6CidrBlock",
    "destinationPrefixListId": "DestinationPrefixListId",
}
_TARGETS = {
    "carrierGatewayId": "CarrierGatewayId",
    "coreNetworkArn": "CoreNetworkArn",
    "egressOnlyGatewayId": "EgressOnlyInternetGatewayId",
    "gatewayId": "GatewayId",
    "localGatewayId": "LocalGatewayId",
    "natGatewayId": "NatGatewayId",
    "networkInterfaceId": "NetworkInterfaceId",
    "transitGatewayId": "TransitGatewayId",
    "vpcEndpointId": "VpcEndpointId",
    "vpcPeeringConnectionId": "VpcPeeringConnectionId",
}


def _exactly_one(props: Props, names: Mapping[str, str], what: str) -> tuple[str, str]:
    """The single ``(api_field, value)`` among ``names`` that ``props`` sets."""
    found = [(names[k], str(props[k])) for k in names if props.get(k)]
    if len(found) != 1:
        raise ValueError(f"a route needs exactly one {what} of {sorted(names)}")
    return found[0]


@register
class Route(ResourceType):
    """``aws:ec2/route:Route`` — ``vpc_route.go``: ``route_table_id`` and the destination
    (``destination_cidr_block`` / ``_ipv6_cidr_block`` / ``_prefix_list_id``) ForceNew;
    a new target (``gateway_id``, ``nat_gateway_id``, ``vpc_peering_connection_id``, ...)
    is a ReplaceRoute. The id is the provider's ``RouteCreateID``:
    ``r-<route table id><crc32 of the destination>``."""

    token = "aws:ec2/route:Route"
    not_read = {
        **dict.fromkeys(
            ("carrierGatewayId", "coreNetworkArn", "egressOnlyGatewayId", "instanceId",
             "localGatewayId", "odbNetworkArn", "transitGatewayId", "vpcEndpointId",
             "destinationIpv6CidrBlock", "destinationPrefixListId"),
            "a target or destination the program never routes (IPv4 CIDRs to internet and "
            "NAT gateways, interfaces and peering connections): read as AWS answers it, "
            "untried on moto",
        ),
        "instanceOwnerId": COMPUTED_ONLY,
        "region": REGION,
    }  # fmt: skip
    force_new = (
        ForceNew("routeTableId", SRC + "vpc_route.go: route_table_id ForceNew"),
        ForceNew("destinationCidrBlock", SRC + "vpc_route.go: destination_cidr_block ForceNew"),
        ForceNew(
            "destinationIpv6CidrBlock",
            SRC + "vpc_route.go: destination_ipv6_cidr_block ForceNew",
        ),
        ForceNew(
            "destinationPrefixListId", SRC + "vpc_route.go: destination_prefix_list_id ForceNew"
        ),
    )
    computed = ("origin", "state")

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        table_id = inputs["routeTableId"]
        destination, value = _exactly_one(inputs, _DESTINATIONS, "destination")
        target, target_id = _exactly_one(inputs, _TARGETS, "target")
        retry(
            lambda: aws.ec2.create_route(
                RouteTableId=table_id, **{destination: value, target: target_id}
            ),
            ("InvalidParameterException", "InvalidTransitGatewayID.NotFound"),
            PROPAGATION,
        )
        id_ = f"r-{table_id}{zlib.crc32(value.encode())}"
        return id_, until(lambda: self.read(aws, req, id_, inputs))

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        table_id, destination, value = self._where(id_, state)
        table = _route_table(aws, table_id)
        route = next((r for r in table.get("Routes", []) if r.get(destination) == value), None)
        if route is None:
            raise NotFound(f"no route to {value} in {table_id}")
        outputs: Props = {"routeTableId": table_id}
        outputs |= {k: route[api] for k, api in _DESTINATIONS.items() if route.get(api)}
        outputs |= {k: route[api] for k, api in _TARGETS.items() if route.get(api)}
        if str(outputs.get("gatewayId", "")).startswith("vpce-"):  # endpoints come as gateways
            outputs["vpcEndpointId"] = outputs.pop("gatewayId")
        return outputs | some({"origin": route.get("Origin"), "state": route.get("State")})

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        table_id, destination, value = self._where(id_, news)
        target, target_id = _exactly_one(news, _TARGETS, "target")
        new_target: dict[str, Any] = {target: target_id}
        if target == "GatewayId" and target_id == "local":
            new_target = {"LocalTarget": True}
        aws.ec2.replace_route(RouteTableId=table_id, **{destination: value}, **new_target)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        table_id, destination, value = self._where(id_, state)
        try:
            aws.ec2.delete_route(RouteTableId=table_id, **{destination: value})
        except ClientError as err:
            local = "cannot remove local route" in str(err)  # imported local routes
            if not (is_not_found(err) or local):
                raise

    @staticmethod
    def _where(id_: str, props: Props) -> tuple[str, str, str]:
        """(route table id, destination API field, destination) from the properties, or
        from an import id in the provider's ``<route table id>_<destination>`` form."""
        if props.get("routeTableId") and any(props.get(k) for k in _DESTINATIONS):
            destination, value = _exactly_one(props, _DESTINATIONS, "destination")
            return props["routeTableId"], destination, value
        table_id, _, value = id_.partition("_")
        if not value:
            raise NotFound(f"route {id_}: no route table id and destination to look up")
        if ":" in value:
            return table_id, "DestinationIpv6CidrBlock", value
        if "." in value:
            return table_id, "DestinationCidrBlock", value
        return table_id, "DestinationPrefixListId", value


def _associates(association: Raw, field: str, target: str, table_id: str) -> bool:
    return association.get(field) == target and association.get("RouteTableId") == table_id


@register
class RouteTableAssociation(ResourceType):
    """``aws:ec2/routeTableAssociation:RouteTableAssociation`` —
    ``vpc_route_table_association.go``: ``subnet_id`` and ``gateway_id`` ForceNew; a new
    ``route_table_id`` is a ReplaceRouteTableAssociation.

    That call gives the association a new id, but an update cannot change a Pulumi
    resource's id; so read and delete find the association by id, else by its subnet
    (or gateway) and route table, which is the association the update made.
    """

    token = "aws:ec2/routeTableAssociation:RouteTableAssociation"
    not_read = {
        "gatewayId": "an edge association's: the program associates subnets only; read as "
        "AWS answers it, untried on moto",
        "region": REGION,
    }
    force_new = (
        ForceNew("gatewayId", SRC + "vpc_route_table_association.go: gateway_id ForceNew"),
        ForceNew("subnetId", SRC + "vpc_route_table_association.go: subnet_id ForceNew"),
    )
    computed = ()

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        args = some(
            {
                "RouteTableId": inputs["routeTableId"],
                "SubnetId": inputs.get("subnetId"),
                "GatewayId": inputs.get("gatewayId"),
            }
        )
        answer = retry(
            lambda: aws.ec2.associate_route_table(**args),
            ("InvalidRouteTableID.NotFound",),
            PROPAGATION,
        )
        id_ = answer["AssociationId"]
        return id_, until(lambda: self.read(aws, req, id_, inputs))

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        return self._outputs(self._find(aws, id_, state or self._import_key(id_)))

    def imported_id(self, aws: Aws, req: Request, id_: str, outputs: Props) -> str:
        """``vpc_route_table_association.go``'s importer sets the association's id."""
        return str(self._find(aws, id_, outputs)["RouteTableAssociationId"])

    @staticmethod
    def _import_key(id_: str) -> Props:
        """``<subnet or gateway id>/<route table id>``: the importer's id form."""
        target, sep, table_id = id_.partition("/")
        if not sep:
            return {}
        prop = "subnetId" if target.startswith("subnet-") else "gatewayId"
        return {prop: target, "routeTableId": table_id}

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        current = self._find(aws, id_, olds)["RouteTableAssociationId"]
        answer = aws.ec2.replace_route_table_association(
            AssociationId=current, RouteTableId=news["routeTableId"]
        )
        new_id = answer["NewAssociationId"]
        return self._outputs(until(lambda: self._find(aws, new_id, news)))

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        try:
            current = self._find(aws, id_, state)
        except NotFound:
            return
        _disassociate(aws, current["RouteTableAssociationId"])

    @staticmethod
    def _outputs(association: Raw) -> Props:
        return some(
            {
                "gatewayId": association.get("GatewayId"),
                "routeTableId": association["RouteTableId"],
                "subnetId": association.get("SubnetId"),
            }
        )

    @staticmethod
    def _find(aws: Aws, id_: str, props: Props) -> Raw:
        def live(filters: list[dict[str, Any]], match: Callable[[Raw], bool]) -> Raw | None:
            tables = aws.ec2.describe_route_tables(Filters=filters)["RouteTables"]
            return next(
                (
                    a
                    for t in tables
                    for a in t.get("Associations", [])
                    if match(a) and a.get("AssociationState", {}).get("State") != "disassociated"
                ),
                None,
            )

        found = live(
            filters(association__route_table_association_id=id_),
            lambda a: a.get("RouteTableAssociationId") == id_,
        )
        table_id = props.get("routeTableId")
        for prop, name, field in (
            ("subnetId", "association__subnet_id", "SubnetId"),
            ("gatewayId", "association__gateway_id", "GatewayId"),
        ):
            target = props.get(prop)
            if found is None and target and table_id:
                found = live(
                    filters(**{name: target}),
                    partial(_associates, field=field, target=target, table_id=table_id),
                )
        if found is None:
            raise NotFound(f"route table association {id_} not found")
        return found
