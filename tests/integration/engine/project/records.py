"""Fixture components for the engine tests: a network and a worker fleet made of records.

Why this module exists: the engine tests need a program shaped like kubeshift's real
scenarios (component resources whose children are created, updated in place and
replaced from phase to phase) without any provider plugin, which machines here cannot
download. Children are ``Record`` dynamic resources (defined in ``__main__.py`` so that
dill pickles their provider by value); this module only arranges them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pulumi

RecordFactory = Callable[..., Any]


@dataclass(frozen=True)
class NetworkArgs:
    """A VPC record and one subnet record per entry of ``subnet_cidrs``."""

    cidr: str
    subnet_cidrs: tuple[str, ...]
    tags: dict[str, str] = field(default_factory=dict)
    delete_first: bool = False  # the VPC is replaced delete-before-replace


class Network(pulumi.ComponentResource):
    """``kubeshift:test:Network``: changing ``cidr`` replaces the VPC and its subnets."""

    def __init__(
        self,
        name: str,
        args: NetworkArgs,
        record: RecordFactory,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("kubeshift:test:Network", name, None, opts)
        self.vpc = record(
            f"{name}-vpc",
            identity={"cidr": args.cidr},
            settings={"tags": args.tags},
            opts=pulumi.ResourceOptions(parent=self, delete_before_replace=args.delete_first),
        )
        # Identities name the VPC by its CIDR (an input), not by its id (an output):
        # the Python dynamic provider cannot mark outputs stable, so an id would turn
        # unknown in the preview of any VPC update and show every subnet as replaced.
        in_vpc = pulumi.ResourceOptions(parent=self, depends_on=[self.vpc])
        self.subnets = [
            record(
                f"{name}-subnet-{i}",
                identity={"cidr": cidr, "vpc": args.cidr},
                settings={},
                opts=in_vpc,
            )
            for i, cidr in enumerate(args.subnet_cidrs)
        ]
        self.cidr = args.cidr
        self.vpc_id = self.vpc.record_id
        self.register_outputs({"vpc_id": self.vpc_id})


@dataclass(frozen=True)
class WorkersArgs:
    """``count`` worker groups of ``size`` nodes each in the network ``vpc``."""

    vpc: Network
    count: int
    size: int
    delay: float = 0.0
    linger: float = 0.0
    chained: bool = False
    hold: str = ""  # a file: each create waits while it exists


class Workers(pulumi.ComponentResource):
    """``kubeshift:test:Workers``: resizing updates groups in place."""

    def __init__(
        self,
        name: str,
        args: WorkersArgs,
        record: RecordFactory,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("kubeshift:test:Workers", name, None, opts)
        self.groups: list[Any] = []
        previous: Any = None
        for i in range(args.count):
            depends = [args.vpc.vpc]
            if args.chained and previous is not None:
                depends.append(previous)
            previous = record(
                f"{name}-group-{i}",
                identity={"vpc": args.vpc.cidr, "index": i},
                settings={"size": args.size},
                delay=args.delay,
                linger=args.linger,
                hold=args.hold,
                opts=pulumi.ResourceOptions(parent=self, depends_on=depends),
            )
            self.groups.append(previous)
        self.group_ids = pulumi.Output.all(*[g.record_id for g in self.groups])
        self.register_outputs({"group_ids": self.group_ids})
