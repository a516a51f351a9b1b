"""Time adoption's reading of a live cluster at the seed's scale (default: vpc-move-example).

Run on demand: ``.venv/bin/python benchmarks/adoption.py [STACK] [--built-by BUILDER]
[--smoke]``. Starts moto in this process, builds the cluster the stack file describes as
kops would have (the sandbox's world: boto3 calls, kops's names and tags, no state; the
example's 72 worker groups are 72 instance groups, each with its launch template), or
with ``--built-by terraform-modules`` as seed 001's Terraform modules did (the modules'
names, the cluster tag alone, a group and template per type x AZ x capacity), then
times, with the AWS calls each makes:

- the inventory any operator can take in one command, ``aws resourcegroupstaggingapi
  get-resources`` for the cluster's tag (what it finds is not mapped to anything);
- ``adopt --write-config``'s proposal (live read, kept names, discovery, kept tags);
- discovery with the proposed stack: every declared resource mapped to its live id.

The engine's import preview is not timed here (it needs the sandbox's engine). Checked
(``ok``/``FAIL`` lines, exit 1 on a failure): no problem in the proposal or discovery,
every declared resource mapped.
``--smoke`` makes the checks on the ``local`` stack's smaller world and prints no figures.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

T = TypeVar("T")
SMOKE_STACK = "local"  # five groups, not the example's 72


def _timed(calls: Counter[str], what: Callable[[], T]) -> tuple[T, float, int]:
    calls.clear()
    began = time.perf_counter()
    result = what()
    return result, time.perf_counter() - began, sum(calls.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stack", nargs="?", default="vpc-move-example")
    parser.add_argument(
        "--smoke", action="store_true", help="the local stack's world: the checks, no figures"
    )
    parser.add_argument("--built-by", choices=("kops", "terraform-modules"), default="kops")
    args = parser.parse_args()
    os.environ.update(
        AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_SESSION_TOKEN="bench",
        MOTO_IAM_LOAD_MANAGED_POLICIES="true",
    )  # fmt: skip
    from moto.server import ThreadedMotoServer

    from automation.sandbox.moto_gaps import close_every_gap

    close_every_gap()  # as the sandbox's moto runs
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    os.environ["AWS_ENDPOINT_URL"] = endpoint
    try:
        stack = SMOKE_STACK if args.smoke else args.stack
        return run(stack, endpoint, figures=not args.smoke, built_by=args.built_by)
    finally:
        server.stop()


@dataclass
class Adopted:
    """What adoption's two reads found, and what the world and the program hold."""

    proposal_problems: list[str]
    discovery_problems: list[str]
    mapped: int
    declared: int
    unmodelled: int
    kops_own: int
    added: int = 0
    """Declared resources adoption adds beside what runs (kops never built them)."""


def checks(adopted: Adopted) -> dict[str, bool]:
    """What must hold for the times to be of a whole adoption: the proposal and the
    discovery found no problem, and every declared resource was mapped to a live one or
    is one adoption adds beside what runs (``automation.adoption.additions``); one left
    over would be refused."""
    return {
        "the proposal has no problem": not adopted.proposal_problems,
        "discovery has no problem": not adopted.discovery_problems,
        "every declared resource mapped": adopted.mapped > 0
        and adopted.mapped + adopted.added == adopted.declared,
    }


def run(stack: str, endpoint: str, *, figures: bool = True, built_by: str = "kops") -> int:
    import boto3

    from automation.adoption.discovery import discover
    from automation.adoption.stack_file import propose_stack
    from automation.aws.clients import AwsAccess, AwsClients
    from automation.review.render import render_program
    from automation.sandbox.provider.model import Aws
    from automation.sandbox.world.build import KOPS_OWN, build
    from automation.sandbox.world.modules.build import build_modules
    from components.contract.loading import load_config, load_stack_file

    values = load_stack_file(ROOT / "stacks" / f"Pulumi.{stack}.yaml")
    config = load_config(values)
    region = config.region
    route53 = boto3.client("route53", region_name=region, endpoint_url=endpoint)
    zone_name = config.cluster.dns.api_record.split(".", 1)[1]
    zone = route53.create_hosted_zone(Name=zone_name, CallerReference="bench")
    values["kubeshift:cluster"]["dns"]["zone_id"] = zone["HostedZone"]["Id"].rsplit("/", 1)[-1]

    began = time.perf_counter()
    if built_by == "terraform-modules":  # tagged by the cluster's name, not kops's ID
        values["kubeshift:cluster"].pop("cluster_id", None)
        config = load_config(values)
        with tempfile.TemporaryDirectory() as scratch:
            state = Path(scratch) / "terraform.tfstate"
            built = build_modules(values, Aws(region, endpoint), state).built
    else:
        built = build(values, Aws(region, endpoint))
    seconds = time.perf_counter() - began
    print(f"world: {len(built)} AWS resources built as {built_by} would in {seconds:.1f}s")
    own = sum(b.kind in KOPS_OWN for b in built)  # kops's own: listed, never mapped

    clients = AwsClients(AwsAccess(region=region))
    calls: Counter[str] = Counter()

    def count(event_name: str, **_: Any) -> None:
        calls[event_name] += 1

    clients.session.events.register("before-call.*.*", count)
    cluster_tag = f"kubernetes.io/cluster/{config.cluster.tag_id}"

    def inventory() -> int:
        pages = clients.tagging.get_paginator("get_resources").paginate(
            TagFilters=[{"Key": cluster_tag}]
        )
        return sum(len(p["ResourceTagMappingList"]) for p in pages)

    listed, floor, floor_calls = _timed(calls, inventory)
    with tempfile.TemporaryDirectory() as scratch:
        target = Path(scratch) / f"Pulumi.{stack}.yaml"
        proposed, proposing, proposing_calls = _timed(
            calls, lambda: propose_stack(values, target, clients)
        )
    cluster = proposed.values["kubeshift:cluster"]
    found, discovering, discovering_calls = _timed(
        calls, lambda: discover(proposed.values, clients, stack)
    )
    first = load_config(proposed.values).phase_ids[0]
    declared = [r for r in render_program(proposed.values, first).resources if r.custom]
    adopted = Adopted(
        proposed.proposal.problems, found.problems, len(found.resources), len(declared),
        len(found.unmodelled), own, len(found.additions),
    )  # fmt: skip
    verdict = checks(adopted)
    for name, ok in verdict.items():
        print(f"{'ok ' if ok else 'FAIL'} {name}")
    for problem in [*adopted.proposal_problems, *adopted.discovery_problems]:
        print(f"  {problem}")
    if not figures:
        return 0 if all(verdict.values()) else 1
    print(f"load avg {os.getloadavg()[0]:.1f}; {proposed.groups} Auto Scaling groups")
    print("| step | seconds | AWS calls | result | ratio to inventory |")
    print("|---|---|---|---|---|")
    print(f"| tagging inventory | {floor:.2f} | {floor_calls} | {listed} tagged, unmapped | 1.0 |")
    print(
        f"| write-config | {proposing:.2f} | {proposing_calls} | "
        f"{len(cluster.get('names', {}))} names, {len(cluster.get('kept_tags', {}))} kept tags "
        f"| {proposing / floor:.1f} |"
    )
    print(
        f"| discovery | {discovering:.2f} | {discovering_calls} | "
        f"{adopted.mapped} of {adopted.declared} declared mapped ({adopted.added} to add), "
        f"{adopted.unmodelled} listed as not modelled ({own} of kops's own made) "
        f"| {discovering / floor:.1f} |"
    )
    return 0 if all(verdict.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
