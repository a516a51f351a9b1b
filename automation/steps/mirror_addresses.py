"""cni-swap step: the fixed addresses the mirror's members will take are free.

The mirror's control-plane members take fixed addresses in the subnets it shares with
the primary (from ``kubeshift:migration.mirror.host_index``), where the primary's nodes
hold addresses too. The check is read-only, so a dry run makes it too, and a taken
address is refused up front rather than by AWS half-way through the phase.
"""

from __future__ import annotations

from automation.model.context import HookContext
from automation.model.phase import HookResult
from automation.steps import outputs
from components.contract.scenarios.cni_swap import CniSwapOutputs


def mirror_addresses_free(ctx: HookContext) -> HookResult:
    """Every fixed address the mirror's members will take is free in the primary's VPC:
    the primary's nodes hold addresses anywhere in the subnets the mirror shares, and
    AWS refuses an interface at a taken one half-way through the phase. Read-only, so a
    dry run runs it too; a taken address names ``migration.mirror.host_index``."""
    from automation.steps.preflight import require_free
    from components.baseline import members
    from components.contract.placement import mirror_host_offset

    config = ctx.stack_config
    out = ctx.read_outputs(CniSwapOutputs)
    vpc = outputs.need(out.source_vpc_id, "source_vpc_id", ctx.phase)
    planned = {
        m.address: f"etcd member {m.index} of {config.cluster.name}"
        for m in members(config, mirror_host_offset(config))
    }
    require_free(
        ctx,
        vpc,
        planned,
        "set kubeshift:migration.mirror.host_index to a free range of the private subnets "
        "(the mirror's members take it from there)",
    )
    free = sorted(planned)
    message = f"{len(free)} mirror member address(es) free: {', '.join(free)}"
    return HookResult(False, message, {"addresses": free})
