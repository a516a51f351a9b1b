"""Where control-plane members sit: their zones and fixed addresses, in either network,
and a mirror's offset from the primary's."""

from __future__ import annotations

from components.contract.cluster_models import ControlPlaneConfig, NetworkConfig
from components.contract.models import StackConfig


def mirror_host_offset(config: StackConfig) -> int:
    """How far the mirror's member addresses sit from the primary's."""
    cp, mirror = config.cluster.control_plane, config.migration.mirror
    if mirror is None or mirror.host_index is None:
        return cp.members
    return mirror.host_index - cp.host_index


def member_az(cp: ControlPlaneConfig, source: NetworkConfig, member: int) -> str:
    """AZ of control-plane member ``member`` (1-based), the same in both networks.

    Members rotate over ``cp.azs`` (default: the source network's AZs).
    """
    azs = cp.azs or source.azs
    return azs[(member - 1) % len(azs)]


def member_address(
    cp: ControlPlaneConfig, source: NetworkConfig, placement: NetworkConfig, member: int
) -> str:
    """Fixed private address of member ``member`` when it lives in ``placement``."""
    subnet = placement.private_subnet_in(member_az(cp, source, member))
    return str(subnet.network_address + cp.host_index + member - 1)


def etcd_manager_name(cp: ControlPlaneConfig, member: int) -> str:
    """etcd-manager's name of control-plane member ``member`` (its etcd members are
    ``etcd-<name>`` and ``etcd-events-<name>``): the stack's ``etcd_names``, else its number."""
    return cp.etcd_names[member - 1] if cp.etcd_names else str(member)
