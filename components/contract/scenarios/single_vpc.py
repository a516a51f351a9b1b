"""Outputs shared by the scenarios that keep the cluster in its own VPC (no ``SPEC``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from components.contract.registry import StackOutputs


class ClusterOutputs(BaseModel):
    """What one whole cluster (``components.cluster.Cluster``) exports."""

    model_config = ConfigDict(frozen=True, extra="allow")

    node_security_group_id: str | None = None
    shared_security_group_id: str | None = None
    ingress_dns_name: str | None = None
    api_dns_name: str | None = None
    target_group_arns: dict[str, dict[str, str]] = {}
    """``ingress`` | ``api`` -> listener port -> target group ARN."""
    worker_asg_names: dict[str, list[str]] = {}
    """Worker generation -> its ASG names."""
    control_plane_asg_names: dict[str, str] = {}
    """Member index -> its ASG name."""


class SingleVpcOutputs(StackOutputs):
    """The outputs every single-VPC scenario exports."""

    route_table_ids: dict[str, str] = {}
    """Route table key (``public``, ``private-<az>``) -> its id."""
    primary: ClusterOutputs = ClusterOutputs()
