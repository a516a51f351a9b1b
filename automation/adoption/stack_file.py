"""``adopt --write-config``: a first stack file from what runs.

The stack file may hold little more than the cluster's name, the region, the hosted
zone and the migration settings. The cluster block is proposed from the live cluster
(:mod:`proposal`) and must then validate as a whole stack: a proposal kubeshift
itself would refuse is never written. Other keys are kept as they are, secrets
included. YAML comments are not kept.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from automation.adoption.discovery import discover
from automation.adoption.kept_descriptions import kept_descriptions
from automation.adoption.kept_names import kept_names, shares_no_group
from automation.adoption.kept_user_data import kept_user_data
from automation.adoption.live import Raw, read
from automation.adoption.live_tags import declared_tags, live_tags, tags_to_keep
from automation.adoption.managed_policies import managed_policies
from automation.adoption.network_names import network_names
from automation.adoption.proposal import Proposal, propose
from automation.aws.clients import AwsClients
from automation.aws.lookup import Lookup, LookupProblem
from automation.core.errors import ConfigError, UserError
from automation.review.render import render_program
from components.contract import kept_file
from components.contract import keys as stack_keys
from components.contract import loading as stack_loading
from components.contract import model_base as stack_model_base
from components.contract.tags import is_own_tag


@dataclass(frozen=True)
class ProposedStack:
    values: dict[str, Any]
    proposal: Proposal
    groups: int
    """Auto Scaling groups read."""
    written: list[Path] = field(default_factory=list)
    """The stack file and, for a large cluster, its kept file (:func:`write`)."""


def cluster_name(values: dict[str, Any], path: Path) -> str:
    cluster = values.get(stack_keys.CLUSTER_KEY)
    name = cluster.get("name") if isinstance(cluster, dict) else None
    if not isinstance(name, str) or not name:
        raise UserError(
            f"{path} names no cluster; set {stack_keys.CLUSTER_KEY}.name to the live "
            "cluster's name (its kubernetes.io/cluster/<name> tag)."
        )
    return name


def _keep_given_ingress(given: dict[str, Any], proposal: Proposal) -> None:
    """No load balancer runs in front of the workers (kops exposes its ingress through a
    ``LoadBalancer`` Service): the stack file's ingress load balancer and records are
    what the user asks kubeshift to add, which adoption does beside what runs."""
    if "ingress" in proposal.cluster:
        return
    ingress = given.get("ingress")
    records = (given.get("dns") or {}).get("ingress_records") if isinstance(
        given.get("dns"), dict) else None  # fmt: skip
    if isinstance(ingress, dict):
        proposal.cluster["ingress"] = ingress
    if records and isinstance(proposal.cluster.get("dns"), dict):
        proposal.cluster["dns"].setdefault("ingress_records", records)
    proposal.notes.append(
        "No load balancer runs in front of the workers' node ports; the stack file's "
        f"{stack_keys.CLUSTER_KEY}.ingress"
        + (" and dns.ingress_records are" if records else " is")
        + " kept, and adoption adds that load balancer (and its records) beside what runs."
    )


def propose_stack(values: dict[str, Any], path: Path, clients: AwsClients) -> ProposedStack:
    """The stack ``values`` with their cluster block proposed from what runs."""
    name = cluster_name(values, path)
    cluster = values[stack_keys.CLUSTER_KEY]
    dns = cluster.get("dns") if isinstance(cluster.get("dns"), dict) else {}
    zone = dns.get("zone_id") if isinstance(dns.get("zone_id"), str) else None
    given_id = cluster.get("cluster_id")
    cluster_id = given_id if isinstance(given_id, str) and given_id else ""
    try:
        live = read(Lookup(clients=clients, cluster=name, cluster_id=cluster_id), zone)
    except LookupProblem as exc:
        raise UserError(f"No stack file was proposed: {exc}") from None
    proposal = propose(live, zone)
    if cluster_id:
        proposal.cluster = {"name": name, "cluster_id": cluster_id, **proposal.cluster}
    user_data = kept_user_data(live)
    kept_blocks = (
        ("names", kept_names(live), "resources carry names", "a rename would replace them"),
        (
            "descriptions",
            kept_descriptions(live),
            "security groups carry descriptions",
            "EC2 cannot change a group's description: it would be replaced",
        ),
        (
            "user_data",
            user_data.scripts,
            "launch templates carry boot scripts",
            "the nodes their groups launch must boot as they do now",
        ),
    )
    proposal.notes += [
        f"Launch template {template}'s user data is not text; it is not kept, and adopting "
        "shows it as a difference."
        for template in user_data.not_text
    ]
    proposal.notes += [
        f"Launch template {template}'s boot script, kept in {stack_keys.CLUSTER_KEY}."
        f"user_data, seems to carry a credential (line {', '.join(map(str, lines))}); the "
        "proposed stack file holds it in plain text: keep it as private as the template."
        for template, lines in user_data.credentials.items()
    ]
    if shares_no_group(live):
        proposal.cluster["shared_group"] = False
        proposal.notes.append(
            "The cluster's workers and members share no security group; "
            f"{stack_keys.CLUSTER_KEY}.shared_group: false declares none on it, so its "
            "own rules keep admitting its instances to each other, and a peered VPC is "
            "admitted in the groups they carry."
        )
    managed = managed_policies(live)
    if managed:
        proposal.cluster["managed_policies"] = managed
        proposal.notes.append(
            f"The {' and '.join(sorted(managed))} role(s) have other policies attached than "
            f"kubeshift attaches; {stack_keys.CLUSTER_KEY}.managed_policies keeps them "
            "(adoption attaches and detaches none)."
        )
    _keep_given_ingress(cluster, proposal)
    for block, kept, what, why in kept_blocks:
        if kept:
            proposal.cluster[block] = kept
            proposal.notes.append(
                f"{len(kept)} {what} kubeshift would not give them; "
                f"{stack_keys.CLUSTER_KEY}.{block} keeps them ({why})."
            )
    others = {k: v for k, v in values.items() if k != kept_file.KEPT_KEY}  # proposed anew
    proposed = {**others, stack_keys.CLUSTER_KEY: proposal.cluster}
    _propose_kops_state(proposed, proposal, user_data.scripts.values())
    if not proposal.problems:
        try:
            stack_loading.load_config(proposed)
        except stack_model_base.ConfigError as exc:
            proposal.problems.append(f"The proposal is not a valid stack: {exc}")
    if not proposal.problems:
        _propose_network_names(proposed, proposal, clients, live.vpc)
        _propose_kept_tags(proposed, proposal, clients)
    return ProposedStack(proposed, proposal, len(live.groups))


_CONFIG_BASE = re.compile(r"^\s*ConfigBase:\s*(s3://\S+?)/?\s*$", re.MULTILINE)
"""The line of kops's boot script that tells nodeup where the cluster's state store is
(kops ``pkg/model/bootstrapscript.go``: the cluster spec it writes before nodeup runs)."""


def _propose_kops_state(values: dict[str, Any], proposal: Proposal, scripts: Any) -> None:
    """Name kops's state store (``runtime.kops_state``) where the kept boot scripts name
    one, so that adoption and every phase check what kops still holds; a store the
    stack file names already is kept."""
    bases = {found for script in scripts for found in _CONFIG_BASE.findall(script)}
    runtime = values.get(stack_keys.RUNTIME_KEY)
    runtime = dict(runtime) if isinstance(runtime, dict) else {}
    if len(bases) != 1 or runtime.get("kops_state"):
        if len(bases) > 1:
            proposal.notes.append(
                f"The boot scripts name {len(bases)} kops state stores "
                f"({', '.join(sorted(bases))}); set {stack_keys.RUNTIME_KEY}.kops_state to "
                "the cluster's."
            )
        return
    (base,) = bases
    values[stack_keys.RUNTIME_KEY] = {**runtime, "kops_state": base}
    proposal.notes.append(
        f"The nodes boot kops's nodeup from the state store {base}; "
        f"{stack_keys.RUNTIME_KEY}.kops_state names it, so adopt lists the instance groups "
        "kops still holds and a phase refuses to change one until `kubeshift release` lets "
        "it go."
    )


def _propose_network_names(
    values: dict[str, Any], proposal: Proposal, clients: AwsClients, vpc: Raw
) -> None:
    """Keep the ``Name`` another tool gave each part of the VPC, by which adoption finds
    its route tables and addresses (:mod:`automation.adoption.network_names`)."""
    names = network_names(values, clients, vpc)
    if names:
        proposal.cluster["kept_tags"] = names
        proposal.notes.append(
            f"{len(names)} parts of the VPC carry names kubeshift would not give them; "
            f"{stack_keys.CLUSTER_KEY}.kept_tags keeps each one's Name (adoption finds a "
            "route table or an address by it)."
        )


def _propose_kept_tags(values: dict[str, Any], proposal: Proposal, clients: AwsClients) -> None:
    """Map the proposed stack to what runs, then keep each live tag it does not declare;
    where no live resource carries kubeshift's own tags, propose to declare none."""
    discovery = discover(values, clients, "proposal")
    if discovery.problems:
        proposal.notes.append(
            "Tags to keep were not proposed: the proposed stack does not map the live cluster "
            f"yet ({discovery.problems[0]})"
        )
        return
    live = live_tags(clients, discovery.resources)
    if live and not any(is_own_tag(key) for tags in live.values() for key in tags):
        values[stack_keys.CLUSTER_KEY]["own_tags"] = False
        proposal.notes.append(
            "No live resource carries kubeshift's own tags (managed-by, kubeshift.io/*); "
            f"{stack_keys.CLUSTER_KEY}.own_tags: false leaves them off, so adopting "
            "retags nothing."
        )
    rendered = render_program(values, discovery.phase).resources
    declared = {r.name: declared_tags(r.inputs.get("tags")) for r in rendered if r.custom}
    kept = tags_to_keep(live, declared)
    for name, tags in dict(proposal.cluster.get("kept_tags") or {}).items():
        kept[name] = {**tags, **kept.get(name, {})}
    if kept:
        proposal.cluster["kept_tags"] = kept
        proposal.notes.append(
            f"{len(kept)} resources carry tags kubeshift does not declare; "
            f"{stack_keys.CLUSTER_KEY}.kept_tags keeps them (an update would remove them)."
        )


class _StackDumper(yaml.SafeDumper):
    """Safe YAML with multi-line text (boot scripts) as literal blocks, readable as is."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_StackDumper.add_representer(str, _text)


def check_targets(target: Path, stack: str) -> None:
    """Refuse, before the account is read, a proposal that could not be written: its file
    or the kept file beside it exists, or their directory is missing or read-only."""
    for path in (target, target.with_name(kept_file.kept_file_name(stack))):
        if path.exists() or path.is_symlink():
            raise ConfigError(f"{path} exists; write the proposal to a new file and compare.")
    folder = target.parent
    if not folder.is_dir():
        raise UserError(f"Cannot write {target}: {folder} is not a directory.")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UserError(f"Cannot write {target}: {folder} is not writable.")


def write(proposed: ProposedStack, target: Path, region: str, stack: str) -> list[Path]:
    """Write the proposed stack file to ``target`` (never over an existing file); a
    proposal too large for the engine to hand its program whole keeps its adopted
    sections in ``Pulumi.<stack>.kept.yaml`` beside it (:mod:`components.contract.kept_file`).
    Returns the files written."""
    values: dict[str, Any] = proposed.values
    kept: dict[str, Any] = {}
    kept_target = target.with_name(kept_file.kept_file_name(stack))
    size = kept_file.config_env_bytes(values)
    if size > kept_file.SPLIT_AT:
        values, kept = kept_file.split(values, stack_keys.CLUSTER_KEY)
        values = _after(values, stack_keys.CLUSTER_KEY, kept_file.KEPT_KEY, kept_target.name)
        proposed.proposal.notes.append(
            f"The proposed config is {size / 1024:.0f} KiB; Pulumi hands a stack's config to "
            f"its program in one environment variable of at most "
            f"{kept_file.ENV_LIMIT // 1024} KiB, so {', '.join(sorted(kept))} are kept in "
            f"{kept_target.name}, named by {kept_file.KEPT_KEY}: keep it beside the stack file."
        )
    written = [target, kept_target] if kept else [target]
    for path in written:
        if path.exists():
            raise ConfigError(f"{path} exists; write the proposal to a new file and compare.")
    stamp = f"from what runs in {region} on {time.strftime('%Y-%m-%d')}"
    _write_yaml(
        target,
        f"# Proposed by `kubeshift adopt --write-config` {stamp}; review it, then use it "
        "as the stack file.\n",
        {"config": values},
    )
    if kept:
        _write_yaml(
            kept_target,
            f"# Kept by `kubeshift adopt --write-config` {stamp}: the live cluster's own "
            f"settings, merged into {stack_keys.CLUSTER_KEY}.\n",
            kept,
        )
    return written


def _after(values: dict[str, Any], anchor: str, key: str, value: Any) -> dict[str, Any]:
    """``values`` with ``key`` placed right after ``anchor``, for a readable file."""
    placed: dict[str, Any] = {}
    for name, existing in values.items():
        placed[name] = existing
        if name == anchor:
            placed[key] = value
    return placed


def _write_yaml(target: Path, header: str, document: dict[str, Any]) -> None:
    body = yaml.dump(document, Dumper=_StackDumper, sort_keys=False, width=100)
    try:
        target.write_text(header + body)
    except OSError as exc:
        raise UserError(f"Cannot write {target} ({exc.strerror}).") from None
