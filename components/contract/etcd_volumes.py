"""The etcd volumes hold the cluster's whole state: no update may replace or delete one.

The program exports what it declared for each member's volume (``etcd_volumes``) and,
before declaring anything, compares the stack file with what the last update
recorded. A change AWS can only make by replacing the volume (its AZ), one it refuses
(a smaller size) and fewer members (their volumes would be deleted) stop the update
— ``kubeshift run`` and ``pulumi up`` by hand alike — with one sentence naming the
volume and the setting. The volumes are also ``protect``-ed in the engine's state, so
a change from anywhere else is refused by the engine itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from components.contract.naming import Namer

if TYPE_CHECKING:  # the config imports the registry, whose outputs model uses EtcdVolume
    from components.contract.models import StackConfig

ETCD_VOLUMES_OUTPUT = "etcd_volumes"


class EtcdVolume(BaseModel):
    """What the program declared for one member's etcd volume."""

    model_config = ConfigDict(frozen=True)

    name: str
    """The volume's ``Name`` tag."""
    az: str
    size: int
    """GiB."""
    type: str
    protected: bool = True
    """False once the user released the volumes (``release_etcd_volumes``, at the last
    phase): the stack records who may now delete them."""


def declared(config: StackConfig) -> dict[str, EtcdVolume]:
    """Member index -> the etcd volume the stack file declares for it."""
    from components.contract.placement import member_az

    cluster = config.cluster
    cp = cluster.control_plane
    namer = Namer.of(cluster.name, cluster.names)
    return {
        str(index): EtcdVolume(
            name=namer.tag(f"etcd-{index}"),
            az=member_az(cp, cluster.network, index),
            size=cp.etcd_volume_size,
            type=cp.etcd_volume_type,
            protected=not cp.release_etcd_volumes,
        )
        for index in range(1, cp.members + 1)
    }


def recorded(outputs: Mapping[str, Any]) -> dict[str, EtcdVolume]:
    """The volumes the last update declared; none for a stack from before this record."""
    raw = outputs.get(ETCD_VOLUMES_OUTPUT)
    if not isinstance(raw, Mapping):
        return {}
    try:
        return {str(k): EtcdVolume.model_validate(v) for k, v in raw.items()}
    except ValidationError:
        return {}


def refusal(before: Mapping[str, EtcdVolume], after: Mapping[str, EtcdVolume]) -> str | None:
    """One sentence when going from ``before`` to ``after`` loses or replaces a volume."""
    from components.contract.keys import CLUSTER_KEY

    cp = f"{CLUSTER_KEY}.control_plane"
    problems = []
    gone = [before[k].name for k in sorted(before, key=int) if k not in after]
    if gone:
        problems.append(f"{cp}.members {len(before)} → {len(after)} would delete {', '.join(gone)}")
    for key in sorted(set(before) & set(after), key=int):
        old, new = before[key], after[key]
        if old.az != new.az:
            problems.append(
                f"{old.name} would be replaced to move it from {old.az} to {new.az} "
                f"({cp}.azs, or the network's AZs when that is unset)"
            )
        if new.size < old.size:
            problems.append(
                f"{old.name} cannot shrink from {old.size} to {new.size} GiB "
                f"({cp}.etcd_volume_size)"
            )
    if not problems:
        return None
    return (
        f"The etcd volumes hold the cluster's whole state and this update would lose one: "
        f"{'; '.join(problems)}; nothing was changed — put the stack file back."
    )
