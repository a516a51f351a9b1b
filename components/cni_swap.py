"""The cni-swap scenario (seed 000): a mirror cluster takes the traffic while the primary
swaps its CNI, then traffic comes back and the mirror goes.

Infrastructure per phase (hooks do the copying, the per-service DNS moves and the
CNI work):

================  ==============================================================
baseline          the primary cluster (VPC, common, workers, control plane, LBs,
                  records in the primary zone)
certificates      + an ACM certificate per ``mirror.certificate_domains`` entry whose
                  SANs also cover the mirror's zone
mirror-cluster    + the mirror: same VPC, every name suffixed, its own private hosted
                  zone and records, its own IAM identities and security groups, its
                  members' addresses reserved before its workers launch
copy              (no change)
dns-to-mirror     (no change: hooks move each service's record, validated)
cni-swap          + a second worker generation on the primary (nodes doubled: the
                  new nodes come up with the new CNI, the old are drained)
dns-to-primary    (no change: hooks move the records back)
teardown-mirror   - the mirror, its zone, and the primary's old worker generation
================  ==============================================================
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_aws as aws

from components import baseline
from components.contract.models import MirrorConfig, StackConfig
from components.contract.naming import Namer
from components.contract.placement import mirror_host_offset
from components.contract.scenarios import cni_swap as ids
from components.worker_pools import ORIGINAL_GENERATION

TYPE = "kubeshift:scenario:CniSwap"
NEW_GENERATION = "cni"


def mirror_api_record(mirror: MirrorConfig) -> str:
    """The mirror's API record, in its own zone (its nodes' kubelets point at it)."""
    return f"api.{mirror.zone_name}"


class CniSwap(pulumi.ComponentResource):
    """Top component of a cni-swap stack; ``outputs`` are the stack outputs."""

    outputs: dict[str, Any]

    def __init__(
        self, name: str, config: StackConfig, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        cursor = config.cursor
        mirror_cfg = config.migration.mirror
        assert mirror_cfg is not None  # guaranteed by config validation
        suffix = config.migration.suffix
        child = pulumi.ResourceOptions(parent=self)
        tags = baseline.tags_of(config)

        net = baseline.network(f"{name}-network", config, config.cluster.network, self)
        mirror_alive = cursor.reached(ids.MIRROR_CLUSTER) and cursor.before(ids.TEARDOWN_MIRROR)
        generations = [ORIGINAL_GENERATION]
        if cursor.reached(ids.CNI_SWAP):
            generations = (
                [NEW_GENERATION]
                if cursor.reached(ids.TEARDOWN_MIRROR)
                else [ORIGINAL_GENERATION, NEW_GENERATION]
            )
        primary = baseline.cluster(f"{name}-primary", config, net, self, generations=generations)

        certificates: dict[str, Any] = {}
        if cursor.reached(ids.CERTIFICATES):
            for domain in mirror_cfg.certificate_domains:
                key = domain.replace("*.", "wildcard-").replace(".", "-")
                cert = aws.acm.Certificate(
                    f"{name}-cert-{key}",
                    domain_name=domain,
                    subject_alternative_names=sorted(
                        {
                            f"*.{domain.removeprefix('*.')}",
                            mirror_cfg.zone_name,
                            f"*.{mirror_cfg.zone_name}",
                        }
                        - {domain}
                    ),
                    validation_method="DNS",
                    tags=tags,
                    opts=child,
                )
                certificates[domain] = cert.arn

        outputs = baseline.common_outputs(config, net, primary)
        outputs["certificate_arns"] = certificates
        outputs["mirror_node_security_group_ids"] = []
        outputs["mirror"] = None
        if mirror_alive:
            zone = aws.route53.Zone(
                f"{name}-mirror-zone",
                name=mirror_cfg.zone_name,
                comment=f"Mirror of {config.cluster.name} during its CNI swap",
                vpcs=[{"vpc_id": net.vpc_id}],
                force_destroy=True,
                tags=tags,
                opts=child,
            )
            mirror = baseline.cluster(
                f"{name}-mirror",
                config,
                net,
                self,
                namer=Namer(config.cluster.name, suffix, cluster_id=config.cluster.tag_id),
                zone_id=zone.zone_id,
                api_record=mirror_api_record(mirror_cfg),
                ingress_records=[f"*.{mirror_cfg.zone_name}"],
                host_offset=mirror_host_offset(config),
                image_id=mirror_cfg.image_id,
                disposable=True,
                keep_member_addresses=True,
            )
            outputs["mirror_node_security_group_ids"] = [mirror.node_security_group_id]
            outputs["mirror"] = {**mirror.outputs, "zone_id": zone.zone_id}
        outputs["worker_generations"] = generations
        self.outputs = outputs
        self.register_outputs(outputs)


def build(config: StackConfig) -> dict[str, Any]:
    """Declare the cni-swap infrastructure of ``config``'s phase; return stack outputs."""
    return CniSwap(config.cluster.name, config).outputs
