"""The primary's new worker generation, known by its Auto Scaling groups and labelled so.

cni-swap's hooks find the new generation by a label (``new_nodes_selector``, by default
``kubeshift.io/generation=cni``). kubeshift's own boot script sets that label; the
nodes of an adopted cluster boot their first tool's script (kops's nodeup registers the
labels of the instance group, read from kops's state store) and do not carry it. So
before anything selects them, every node whose instance is in the new generation's
groups is labelled by kubeshift once its kubelet registered it, as kops-controller
labels a kops node after its instance group.
"""

from __future__ import annotations

from typing import Any

from automation.core.errors import PreconditionFailed
from automation.core.waiting import Pending, wait_until
from automation.model.context import HookContext
from automation.model.phase import HookResult
from components.cni_swap import NEW_GENERATION
from components.contract.scenarios.cni_swap import CniSwapOutputs
from components.contract.userdata import GENERATION_LABEL

PRIMARY = "primary"
TIMEOUT = 1800.0
INTERVAL = 10.0


def label_new_generation(ctx: HookContext) -> HookResult:
    """Label the new generation's nodes ``kubeshift.io/generation=cni``, waiting (with a
    deadline) until every instance its groups start has registered a node."""
    from automation.aws.nodes import instance_id_from_provider_id
    from automation.aws.replacement import in_service_of
    from automation.kube.clients import list_all
    from automation.kube.nodes import NodeSelection, label_nodes
    from automation.steps.mirror import expected_workers

    out = ctx.read_outputs(CniSwapOutputs)
    groups = out.primary.worker_asg_names.get(NEW_GENERATION) or []
    if not groups:
        raise PreconditionFailed(
            f"Phase '{ctx.phase}' labels the primary's new worker generation, and the stack "
            f"exports no Auto Scaling group of generation '{NEW_GENERATION}'."
        )
    autoscaling = ctx.clients.aws().autoscaling
    core = ctx.clients.kube(PRIMARY).core
    expected = expected_workers(ctx)
    label = {GENERATION_LABEL: NEW_GENERATION}
    labelled: set[str] = set()
    changed: list[str] = []

    def check() -> Pending:
        instances = in_service_of(autoscaling, groups)
        nodes: list[dict[str, Any]] = list_all(core.list_node, action="list nodes")["items"]
        by_instance = {
            instance_id_from_provider_id((n.get("spec") or {}).get("providerID")): n for n in nodes
        }
        names = [by_instance[i]["metadata"]["name"] for i in instances if i in by_instance]
        fresh = sorted(set(names) - labelled)
        if fresh:
            change = label_nodes(core, NodeSelection(names=fresh), label, dry_run=ctx.dry_run)
            changed.extend(change.changed)
            labelled.update(fresh)
        missing = [f"instance {i}: no node yet" for i in instances if i not in by_instance]
        if len(instances) < expected:
            missing.append(f"{expected - len(instances)} more instance(s) in service")
        return Pending.of(missing, f"{len(names)}/{expected} nodes of the new generation")

    if ctx.dry_run:
        status = check()
        return HookResult(False, f"would label {len(changed)} node(s); {status.detail}")
    wait_until(
        "the new generation's nodes", check, timeout=TIMEOUT, interval=INTERVAL,
        on_progress=ctx.progress.on_wait,
    )  # fmt: skip
    shown = f"{GENERATION_LABEL}={NEW_GENERATION}"
    return HookResult(bool(changed), f"labelled {len(changed)} of {len(labelled)} node(s) {shown}")
