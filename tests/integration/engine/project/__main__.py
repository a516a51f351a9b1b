"""Entry of the engine-test project: builds the resources of phase ``kubeshift:phase``.

Phases are cumulative, like a real scenario:

=============  ==============================================================
network        Network ``net``: a VPC record and two subnet records
workers        + Workers ``workers``: two groups of size 2
scale-workers  workers resized to 3 (update) and the VPC re-tagged (update)
move-vpc       the VPC's CIDR changes: VPC and subnets are replaced (the VPC delete-first
               with ``kubeshift-test:delete_first``)
fleet          + Workers ``fleet``: five chained slow groups (kill/resume tests)
=============  ==============================================================

``Record`` is a Python dynamic resource: no provider plugin is needed. Its provider
mirrors every record as a JSON file in ``kubeshift-test:store`` so tests can see what
really exists outside Pulumi's state. It lives here so dill pickles it by value.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import pulumi
import pulumi.dynamic as dynamic
from records import Network, NetworkArgs, Workers, WorkersArgs

PHASES = ("network", "workers", "scale-workers", "move-vpc", "fleet")
HOLD_DEADLINE = 600.0


class RecordProvider(dynamic.ResourceProvider):
    """Stores each record as ``<store>/<id>.json``; ``identity`` changes force a replace."""

    def _write(self, record_id: str, props: dict[str, Any]) -> None:
        time.sleep(float(props.get("delay") or 0))
        hold, deadline = props.get("hold") or "", time.monotonic() + HOLD_DEADLINE
        while hold and Path(hold).exists():  # the test decides when the update goes on
            if time.monotonic() > deadline:
                raise RuntimeError(f"{hold} still exists after {HOLD_DEADLINE:.0f} s")
            time.sleep(0.1)
        path = Path(props["store"]) / f"{record_id}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(props, sort_keys=True))
        os.replace(tmp, path)

    def create(self, props: dict[str, Any]) -> dynamic.CreateResult:
        digest = hashlib.sha256(json.dumps(props["identity"], sort_keys=True).encode())
        record_id = f"{props['label']}-{digest.hexdigest()[:8]}"
        self._write(record_id, props)
        # made, not yet returned: an engine killed now leaves a pending create behind
        # whose resource exists, as an AWS create that completed as the engine died
        time.sleep(float(props.get("linger") or 0))
        return dynamic.CreateResult(record_id, {**props, "record_id": record_id})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> dynamic.DiffResult:
        replaces = ["identity"] if olds.get("identity") != news.get("identity") else []
        changed = [k for k in ("identity", "settings", "store") if olds.get(k) != news.get(k)]
        # An in-place update keeps the id: saying so keeps dependents' inputs known in
        # preview (otherwise they would show as replaced until the update is applied).
        stables = [] if replaces else ["record_id"]
        return dynamic.DiffResult(changes=bool(changed), replaces=replaces, stables=stables)

    def update(
        self, record_id: str, _olds: dict[str, Any], news: dict[str, Any]
    ) -> dynamic.UpdateResult:
        self._write(record_id, news)
        return dynamic.UpdateResult({**news, "record_id": record_id})

    def delete(self, record_id: str, props: dict[str, Any]) -> None:
        Path(props["store"], f"{record_id}.json").unlink(missing_ok=True)


class Record(dynamic.Resource):
    """One record; ``record_id`` is derived from its identity."""

    record_id: pulumi.Output[str]
    settings: pulumi.Output[dict[str, Any]]

    def __init__(
        self,
        name: str,
        identity: dict[str, Any],
        settings: dict[str, Any],
        delay: float = 0.0,
        linger: float = 0.0,
        hold: str = "",
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            "label": name,
            "identity": identity,
            "settings": settings,
            "delay": delay,
            "linger": linger,
            "hold": hold,
            "store": STORE,
            "record_id": None,
        }
        super().__init__(RecordProvider(), name, props, opts)


config = pulumi.Config("kubeshift")
phase = config.get("phase") or PHASES[0]
if phase not in PHASES:
    raise ValueError(f"kubeshift:phase must be one of {', '.join(PHASES)}, not {phase!r}")
step = PHASES.index(phase)
STORE = pulumi.Config("kubeshift-test").require("store")
Path(STORE).mkdir(parents=True, exist_ok=True)

network = Network(
    "net",
    NetworkArgs(
        cidr="10.1.0.0/16" if step >= PHASES.index("move-vpc") else "10.0.0.0/16",
        subnet_cidrs=("a", "b"),
        tags={"stage": "scaled" if step >= PHASES.index("scale-workers") else "initial"},
        delete_first=pulumi.Config("kubeshift-test").get_bool("delete_first") or False,
    ),
    Record,
)
pulumi.export("phase", phase)
pulumi.export("vpc_id", network.vpc_id)

if step >= PHASES.index("workers"):
    size = 3 if step >= PHASES.index("scale-workers") else 2
    workers = Workers("workers", WorkersArgs(network, count=2, size=size), Record)
    pulumi.export("worker_group_ids", workers.group_ids)

if step >= PHASES.index("fleet"):
    delay = float(pulumi.Config("kubeshift-test").get("fleet_delay") or 2.0)
    linger = float(pulumi.Config("kubeshift-test").get("fleet_linger") or 0.0)
    hold = pulumi.Config("kubeshift-test").get("fleet_hold") or ""
    fleet = Workers(
        "fleet",
        WorkersArgs(network, count=5, size=1, delay=delay, linger=linger, chained=True, hold=hold),
        Record,
    )
    pulumi.export("fleet_group_ids", fleet.group_ids)
