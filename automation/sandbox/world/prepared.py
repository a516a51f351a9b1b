"""What the user adds by hand to kops's cluster before adopting it, because kubeshift's
model needs it and kops has no counterpart ("What adoption cannot take yet" in
docs/adoption.md): a fixed network interface per member, at the member's address, which
the member attaches at boot (kubeshift finds an etcd member by its fixed peer address,
where kops's etcd-manager finds its peers by DNS names). The user names them in kops's
style and describes them in words of their own.

What else kubeshift's baseline has and kops lacks (its ingress load balancer, the rules
that admit the load balancers' clients) adoption adds beside what runs.
"""

from __future__ import annotations

from automation.sandbox.provider.model import Aws
from automation.sandbox.world.model import MASTER_ROLE_TAG, Built, KopsCluster, tag_spec


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
