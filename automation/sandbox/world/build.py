"""Build the sandbox's live cluster as kops would have: boto3 calls, no engine, no program.

A user's cluster was built by kops, Terraform or by hand; no Pulumi state knows it and
its resources carry that tool's names. The sandbox's world is built the same way, from
the stack file read as kops's cluster spec (:mod:`.model`), resource by resource with
boto3 against moto, as kops builds a private-topology cluster on AWS: its VPC
(:mod:`.network`), its three security groups and their rules (:mod:`.firewall`), its
two roles with kops's inline grants (:mod:`.identity`), an instance group per member and
per pool and capacity type, every template booting nodeup, each group's nodeup
configuration in kops's state store (:mod:`.state_store`), each member's main and events
etcd volumes (:mod:`.compute`), and its API load balancer and record
(:mod:`.balancers`). Nothing is added by hand: the members have no fixed interface
(etcd-manager names them by DNS; kubeshift's ``control_plane.membership: etcd-manager``),
and kops builds no ingress load balancer and opens its API's to anyone, so adoption adds
kubeshift's ingress load balancer and the rules its stack file asks for beside what runs
(``automation.adoption.additions``). Nothing of kubeshift's program runs, and nothing is
recorded anywhere but in moto:
``kubeshift adopt`` has to find it all, as on a real account.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from automation.core.errors import KubeshiftError
from automation.sandbox.provider.model import Aws
from automation.sandbox.world.balancers import Balanced, build_balancer, write_records
from automation.sandbox.world.compute import (
    EVENTS_VOLUME,
    Compute,
    build_members,
    build_workers,
    launch,
)
from automation.sandbox.world.firewall import KOPS_RULE, build_kops_groups, open_as_kops
from automation.sandbox.world.identity import KOPS_POLICY, build_identities
from automation.sandbox.world.kops import load_balancer_name
from automation.sandbox.world.model import Built, KopsCluster, kops_cluster
from automation.sandbox.world.network import build_network
from automation.sandbox.world.state_store import StateStore
from components.contract import loading as stack_loading

KOPS_OWN = (KOPS_RULE, KOPS_POLICY, EVENTS_VOLUME)
"""What kops makes of its own beyond kubeshift's model: adoption lists it and leaves it
alone, but for the few of kops's rules kubeshift declares too (each group's IPv4 egress,
the API's port from its group to the members), which it takes."""

__all__ = ["EVENTS_VOLUME", "KOPS_OWN", "KOPS_POLICY", "KOPS_RULE", "Built", "WorldError", "build"]


class WorldError(KubeshiftError):
    """The sandbox could not build its live cluster."""


def build(values: Mapping[str, Any], aws: Aws) -> list[Built]:
    """Create the live cluster the stack ``values`` describes in moto, as kops made it;
    return what was created, in order."""
    cluster = kops_cluster(stack_loading.load_config(values))
    built: list[Built] = []
    try:
        _build(aws, cluster, built)
    except (ClientError, BotoCoreError, TimeoutError) as exc:
        raise WorldError(
            f"Building the live cluster stopped after {len(built)} resources: {exc}"
        ) from exc
    return built


def _build(aws: Aws, cluster: KopsCluster, built: list[Built]) -> None:
    network = build_network(aws, cluster)
    built += network.built
    groups = build_kops_groups(aws, cluster, network.vpc_id)
    built += groups
    group_ids = {g.name.split(".", 1)[0]: g.id for g in groups}
    built += open_as_kops(aws, cluster, group_ids)
    built += build_identities(aws, cluster)

    compute = Compute()
    store = StateStore(aws, cluster)
    build_members(aws, cluster, compute, group_ids["masters"], network.private, store)
    build_workers(aws, cluster, compute, group_ids["nodes"], network.private, store)
    built += compute.built

    spec, zones = cluster.spec, cluster.zones

    def subnets(internal: bool) -> list[str]:
        side = network.private if internal else network.public
        return [side[zone] for zone in zones]

    port, domain = spec.control_plane.api_port, cluster.domain
    api = build_balancer(aws, cluster, network.vpc_id, Balanced(
        load_balancer_name("api", cluster.name, f"api.{domain}"),
        {port: load_balancer_name("tcp", cluster.name, f"api-{port}.{domain}")},
        spec.api.internal, subnets(spec.api.internal), group_ids["api-elb"],
        {port: port}, [g.name for g in compute.members],
    ))  # fmt: skip
    built += api.built
    built += write_records(aws, cluster, api)
    # instances launch last, once their groups' load balancers are in place
    launch(aws, compute.members + compute.workers)
