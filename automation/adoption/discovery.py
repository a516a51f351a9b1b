"""Run the program's first phase under mocks that answer with what runs in AWS.

The SDK registers resources in dependency order and hands each registration the ids
its mocks returned for the resources it refers to; answering with live ids means each
finder searches where the live parent is (the subnet in the live VPC, the rule in the
live group). A resource nothing or several things match is one problem sentence, and
the resources that refer to it are skipped rather than reported twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi

from automation.adoption.additions import ADDED, addable, holds_mark, looked_up
from automation.adoption.models import Addition, AdoptedResource, Discovery, LiveResource
from automation.aws.clients import AwsClients
from automation.aws.failures import BotoCoreError, ClientError
from automation.aws.lookup import Lookup, LookupProblem, Missing, OwnAddition, find
from automation.aws.lookup.iam import role_policies_besides
from automation.aws.lookup.security import rules_besides
from automation.aws.lookup.tagged import tagged_resources
from automation.core.errors import ConfigError
from automation.review.render import render_program
from components.contract import keys as stack_keys
from components.contract import loading as stack_loading
from components.contract import model_base as stack_model_base

UNFOUND = "kubeshift-unfound:"
GROUP = "aws:autoscaling/group:Group"
SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
ROLE = "aws:iam/role:Role"
SHARED_GROUP = "-sg-shared"
"""How the logical name of a side's shared security group ends."""
_READ_BY_DEPENDENTS = ("arn", "dnsName", "zoneId", "arnSuffix", "allocationId", "privateIp")
NAMED_KINDS = frozenset({
    "ec2:security-group", "ec2:launch-template", "autoscaling:autoScalingGroup",
    "elasticloadbalancing:loadbalancer", "elasticloadbalancing:targetgroup",
})  # fmt: skip
"""Kinds of tagged resource found by name: unmodelled ones hint at another tool's names."""


def _refers_to_unfound(value: Any) -> bool:
    return holds_mark(value, UNFOUND)


def _aws_refusal(exc: ClientError | BotoCoreError) -> str:
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        operation = getattr(exc, "operation_name", "a call")
        return f"AWS refused {operation} ({error.get('Code', '?')}: {error.get('Message', '')})"
    return f"AWS could not be reached ({exc})"


class LiveMocks(pulumi.runtime.Mocks):
    """Answers each custom resource with the live resource its inputs describe."""

    def __init__(self, lookup: Lookup) -> None:
        self.lookup = lookup
        self.found: list[AdoptedResource] = []
        self.problems: list[str] = []
        self.skipped: list[str] = []
        self.added: list[Addition] = []
        self.shared_group_missing = False
        """No live group is the program's shared one (the instances may share none)."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        inputs = dict(args.inputs)
        if not args.custom:
            return "", inputs
        unfound = f"{UNFOUND}{args.name}"
        # what dependents read of a resource not found carries the mark too
        placeholder = {**inputs, **dict.fromkeys(_READ_BY_DEPENDENTS, unfound)}
        if _refers_to_unfound(inputs):
            self.skipped.append(args.name)
            return unfound, placeholder
        if not looked_up(args.typ, inputs):
            if addable(args.typ, args.name, inputs):
                return self._add(args, inputs, "it belongs to a resource adoption adds")
            kind = args.typ.rsplit(":", 1)[-1]
            self.problems.append(
                f"{args.name}: nothing live matches it, for it refers to a resource adoption "
                f"would add, and a {kind} is not added beside what runs."
            )
            return unfound, placeholder
        try:
            live = find(self.lookup, args.typ, args.name, inputs)
        except Missing as exc:
            if addable(args.typ, args.name, inputs):
                return self._add(args, inputs, str(exc).split(": ", 1)[-1].rstrip("."))
            self.problems.append(str(exc))
            if args.typ == SECURITY_GROUP and args.name.endswith(SHARED_GROUP):
                self.shared_group_missing = True
            return unfound, placeholder
        except LookupProblem as exc:
            self.problems.append(str(exc))
            return unfound, placeholder
        except OwnAddition:  # not imported: the preview shows its create, and refuses it
            return unfound, placeholder
        except KeyError:  # an input made of an unfound resource's attribute
            self.skipped.append(args.name)
            return unfound, placeholder
        except (ClientError, BotoCoreError) as exc:
            self.problems.append(f"{args.name}: {_aws_refusal(exc)}.")
            return unfound, placeholder
        self.found.append(
            AdoptedResource(type=args.typ, name=args.name, id=live.id, import_id=live.import_id)
        )
        return live.id, {**inputs, **live.outputs}

    def _add(
        self, args: pulumi.runtime.MockResourceArgs, inputs: dict[str, Any], why: str
    ) -> tuple[str, dict[str, Any]]:
        """Answer for a resource adoption adds; what dependents read of it carries the
        mark, so they are added too or refused (:mod:`.additions`)."""
        self.added.append(Addition(type=args.typ, name=args.name, why=why))
        added = f"{ADDED}{args.name}"
        return added, {**inputs, **dict.fromkeys(_READ_BY_DEPENDENTS, added)}

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[Any]]:
        return {}, []  # no stack to read back: the program skips its progress check


def discover(values: Mapping[str, Any], clients: AwsClients, stack: str) -> Discovery:
    """Map every resource of the first phase of the stack ``values`` to what runs."""
    try:
        config = stack_loading.load_config(values)
    except stack_model_base.ConfigError as exc:  # kept values merged in since it loaded
        raise ConfigError(f"The stack with what adoption keeps is not valid: {exc}") from exc
    first = config.phase_ids[0]
    lookup = Lookup(clients=clients, cluster=config.cluster.name, cluster_id=config.cluster.tag_id)
    mocks = LiveMocks(lookup)
    render_program(values, first, mocks=mocks)
    known = {r.id for r in mocks.found}
    groups = [r.id for r in mocks.found if r.type == GROUP]
    try:
        unmodelled = [
            LiveResource(arn=t.arn, kind=t.kind)
            for t in tagged_resources(lookup, groups)
            if not t.belongs_to(known)
        ]
        security_groups = [r.id for r in mocks.found if r.type == SECURITY_GROUP]
        tagged = {u.arn for u in unmodelled}
        unmodelled += [
            LiveResource(arn=arn, kind="ec2:security-group-rule")
            for arn in rules_besides(lookup, security_groups, known)
            if arn not in tagged
        ]
        roles = [r.id for r in mocks.found if r.type == ROLE]
        unmodelled += [
            LiveResource(arn=policy, kind="iam:role-policy")
            for policy in role_policies_besides(lookup, roles, known)
        ]
    except (ClientError, BotoCoreError) as exc:
        refusal = _aws_refusal(exc)
        mocks.problems.append(f"Listing what is tagged for the cluster failed: {refusal}.")
        unmodelled = []
    mocks.problems += claimed_twice(mocks.found)
    hint = _names_hint(config.cluster.name, mocks.problems, unmodelled)
    if mocks.shared_group_missing and not hint:  # else the names' hint leads the way
        hint.append(
            "If the cluster's workers and members carry no security group in common, as "
            f"kops's do, {stack_keys.CLUSTER_KEY}.shared_group: false declares none "
            "(`kubeshift adopt --write-config FILE` proposes it when so)."
        )
    return Discovery(
        stack=stack,
        cluster=config.cluster.name,
        phase=first,
        resources=mocks.found,
        problems=[*mocks.problems, *hint],
        skipped=mocks.skipped,
        additions=mocks.added,
        unmodelled=unmodelled,
    )


def claimed_twice(found: list[AdoptedResource]) -> list[str]:
    """One sentence for each live resource that several declared ones would import: Pulumi
    would then hold it under each name, and an update or delete of one would act on all
    (the stack file's pools group the live groups otherwise than their templates)."""
    claims: dict[tuple[str, str], list[str]] = {}
    for resource in found:
        if resource.import_id is not None:
            claims.setdefault((resource.type, resource.import_id), []).append(resource.name)
    return [
        f"Live {kind.rsplit(':', 1)[-1]} {live_id} would be adopted by {len(names)} of the "
        f"program's resources ({', '.join(sorted(names))}); a live resource can be only "
        "one of them, so the stack file does not describe what runs there."
        for (kind, live_id), names in sorted(claims.items())
        if len(names) > 1
    ]


def _names_hint(cluster: str, problems: list[str], unmodelled: list[LiveResource]) -> list[str]:
    """One more sentence when resources were missed by name while resources of those
    kinds run tagged for the cluster: another tool named them."""
    misnamed = sorted({u.kind for u in unmodelled if u.kind in NAMED_KINDS})
    if not problems or not misnamed:
        return []
    count = sum(u.kind in NAMED_KINDS for u in unmodelled)
    return [
        f"{count} resources tagged for {cluster} ({', '.join(misnamed)}) carry names the "
        f"stack file does not give; `kubeshift adopt --write-config FILE` proposes "
        f"{stack_keys.CLUSTER_KEY}.names to keep them."
    ]
