"""What the user adds by hand to kops's cluster before adopting it, because kubeshift's
baseline has it and kops has no counterpart ("What adoption cannot take yet" in
docs/adoption.md lists each: without it, adoption refuses it as missing):

- a fixed network interface per member, at the member's address, which the member
  attaches at boot (kubeshift finds an etcd member by its fixed peer address);
- the ingress load balancer (kops's ingress is a ``LoadBalancer`` Service instead):
  its ``ingress-lb`` group, its target groups on the node ports and its records;
- the rules that open each load balancer to the cluster's clients (the VPC and the
  ranges the stack allows) and the nodes' ports to the ingress load balancer.

The user names them in kops's style and describes them in words of their own.
"""

from __future__ import annotations

from automation.sandbox.provider.model import Aws
from automation.sandbox.world.firewall import authorize, create_group, permission
from automation.sandbox.world.model import MASTER_ROLE_TAG, Built, KopsCluster, tag_spec

ANYWHERE = "0.0.0.0/0"
INGRESS_GROUP = "ingress-lb"


def member_interfaces(
    aws: Aws, cluster: KopsCluster, group_id: str, subnets: dict[str, str]
) -> list[Built]:
    made = []
    for member in cluster.members:
        name = f"etcd-{member.number}.{cluster.domain}"
        eni = aws.ec2.create_network_interface(
            SubnetId=subnets[member.zone], Groups=[group_id],
            Description=f"etcd member {member.number} of {cluster.name}",
            PrivateIpAddresses=[{"PrivateIpAddress": member.address, "Primary": True}],
            TagSpecifications=tag_spec(
                "network-interface", cluster.tags(name, **{MASTER_ROLE_TAG: "1"})
            ),
        )["NetworkInterface"]  # fmt: skip
        made.append(Built("ec2:network-interface", name, eni["NetworkInterfaceId"]))
    return made


def ingress_group(aws: Aws, cluster: KopsCluster, vpc_id: str) -> Built:
    made = create_group(aws, cluster, vpc_id, INGRESS_GROUP, f"Ingress NLB of {cluster.domain}")
    everything = permission("-1", None, ANYWHERE, {})
    name = f"from-{INGRESS_GROUP}.{cluster.domain}-egress-all-0to0-{ANYWHERE}"
    authorize(aws, made.id, everything, cluster.tags(name), egress=True)
    return made


def open_balancers(aws: Aws, cluster: KopsCluster, group_ids: dict[str, str]) -> list[Built]:
    """The load balancers' clients: the VPC and the ranges the stack allows (anyone, for
    an internet-facing one); the API port from the API's group to the members; each
    node port from the ingress group to the nodes."""
    spec = cluster.spec
    ranges = list(
        dict.fromkeys(
            [str(spec.network.cidr)]
            + [str(c) for c in spec.ingress.allowed_cidrs + spec.api.allowed_cidrs]
        )
    )
    api_port = spec.control_plane.api_port
    wanted: list[tuple[str, int, str]] = [
        ("api-elb", api_port, peer) for peer in ([ANYWHERE] if not spec.api.internal else ranges)
    ]
    wanted.append(("masters", api_port, "api-elb"))
    if INGRESS_GROUP in group_ids:
        clients = [ANYWHERE] if not spec.ingress.internal else ranges
        for listener in spec.ingress.listeners:
            wanted += [(INGRESS_GROUP, listener.port, peer) for peer in clients]
            wanted.append(("nodes", listener.node_port, INGRESS_GROUP))
    made = []
    for group, port, peer in wanted:
        source = f"{peer}.{cluster.domain}" if peer in group_ids else peer
        name = f"from-{source}-ingress-tcp-{port}to{port}-{group}.{cluster.domain}"
        allowed = permission("tcp", (port, port), peer, group_ids)
        for id_ in authorize(aws, group_ids[group], allowed, cluster.tags(name), egress=False):
            made.append(Built("ec2:security-group-rule", name, id_))
    return made
