"""One writer per DNS name: before kubeshift moves a record, no controller may own it.

Before the first record moves (cni-swap's ``dns-to-mirror``, vpc-move's
``dns-cutover``), the external-dns Deployments of every cluster of the scenario and
the zone's TXT ownership records are read. A record a running controller would write
back — its TXT owner runs, or it lies in a running controller's domain filter — or
one owned by a controller kubeshift cannot see, stops the run, naming each record and
its owner, unless ``runtime.dns_writers`` says ``pause``: those controllers are scaled
to zero for the window (recorded on each Deployment) and given their replicas back at
the end, also after a crash.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from automation.core.errors import PreconditionFailed
from automation.kube.dns_writers import DnsWriter, find_writers, pause, resume
from automation.model.context import HookContext
from automation.model.phase import HookResult

POLICY_KEY = "kubeshift:runtime.dns_writers"


def conflicts(
    names: Iterable[str], writers: Sequence[DnsWriter], owners: Mapping[str, str]
) -> list[str]:
    """One line per record a running controller would write back, naming its owner."""
    lines = []
    running = [w for w in writers if w.running]
    for raw_name in sorted(set(names)):
        name = raw_name.rstrip(".").lower()
        owner = owners.get(name)
        by_owner = [w for w in running if owner is not None and w.owner_id == owner]
        by_filter = [w for w in running if w.covers(name) and w not in by_owner]
        if by_owner or by_filter:
            who = "; ".join(w.label for w in (*by_owner, *by_filter))
            lines.append(f"{name}: written by {who}")
        elif owner is not None and not any(w.owner_id == owner for w in writers):
            lines.append(
                f"{name}: owned by external-dns owner {owner} (TXT record), whose controller "
                "runs on no cluster kubeshift sees"
            )
    return lines


def writers(ctx: HookContext, clusters: Sequence[str]) -> list[DnsWriter]:
    return [w for role in clusters for w in find_writers(ctx.clients.kube(role), role)]


def owners(ctx: HookContext, zone_ids: Iterable[str]) -> dict[str, str]:
    from automation.aws.dns_owners import txt_owners

    found: dict[str, str] = {}
    for zone_id in sorted(set(zone_ids)):
        found.update(txt_owners(ctx.clients.aws().route53, zone_id))
    return found


def guard_records(
    ctx: HookContext, names: Iterable[str], zone_ids: Iterable[str], clusters: Sequence[str]
) -> HookResult:
    """Refuse, or pause the controllers (``runtime.dns_writers: pause``), before a move."""
    names = list(names)
    found = writers(ctx, clusters)
    lines = conflicts(names, found, owners(ctx, zone_ids))
    if not lines:
        return HookResult(False, f"no DNS controller writes the {len(names)} record(s) to move")
    policy = ctx.settings.dns_writers
    unseen = [line for line in lines if "runs on no cluster" in line]
    if policy != "pause" or unseen:
        advice = (
            "stop the controllers kubeshift cannot see"
            if policy == "pause"
            else f"set {POLICY_KEY}: pause to scale them to zero for the window"
        )
        raise PreconditionFailed(
            f"{len(lines)} record(s) to move have another writer, which would put them back: "
            f"{'; '.join(lines)}; {advice}, or leave those names out of the move."
        )
    paused = [w.label for w in found if w.running and pause(ctx.clients.kube(w.cluster), w,
                                                         dry_run=ctx.dry_run)]  # fmt: skip
    verb = "would pause" if ctx.dry_run else "paused"
    return HookResult(
        bool(paused) and not ctx.dry_run,
        f"{verb} {', '.join(paused)} for the window ({len(lines)} record(s) they write)",
        {"paused": paused},
    )


def resume_writers(ctx: HookContext, clusters: Sequence[str]) -> HookResult:
    """Give every DNS controller kubeshift paused its replicas back (idempotent)."""
    back = [w.label for w in writers(ctx, clusters) if resume(ctx.clients.kube(w.cluster), w,
                                                             dry_run=ctx.dry_run)]  # fmt: skip
    if not back:
        return HookResult(False, "no DNS controller is paused by kubeshift")
    verb = "would resume" if ctx.dry_run else "resumed"
    return HookResult(not ctx.dry_run, f"{verb} {', '.join(back)}", {"resumed": back})
