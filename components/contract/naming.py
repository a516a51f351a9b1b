"""Deterministic physical names for every AWS resource kubeshift creates.

AWS refuses duplicate names for load balancers, target groups, auto scaling groups,
launch templates, IAM roles and instance profiles, and each kind has its own length
and character rules. A migration duplicates most of them (the seed's "suffix"), so
every name is built here, from the cluster name, a role and the migration suffix,
and checked against the kind's limits. A name that would be too long keeps a readable
head, a stable hash of the full name and the suffix, so it stays unique and
reviewable for any valid cluster name.
"""

from __future__ import annotations

import enum
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from components.contract import kept_use

if TYPE_CHECKING:
    from components.contract.cluster_models import ClusterConfig

HASH_LENGTH = 8


@dataclass(frozen=True)
class NameRule:
    """AWS's rules for one kind of name."""

    key: str
    """How a kept name (``kubeshift:cluster.names``) says it is for this kind."""
    max_length: int
    allowed: re.Pattern[str]
    forbidden_prefixes: tuple[str, ...] = ()


_LB_CHARS = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$")
_GENERIC_CHARS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/()+=,@-]*$")
_IAM_CHARS = re.compile(r"^[A-Za-z0-9+=,.@_-]+$")
_LT_CHARS = re.compile(r"^[A-Za-z0-9()./_-]+$")


class NameKind(enum.Enum):
    """Kinds of physical names, with the limits AWS enforces on each."""

    LOAD_BALANCER = NameRule("load-balancer", 32, _LB_CHARS, ("internal-",))
    TARGET_GROUP = NameRule("target-group", 32, _LB_CHARS, ("internal-",))
    AUTOSCALING_GROUP = NameRule("autoscaling-group", 255, _GENERIC_CHARS)
    LAUNCH_TEMPLATE = NameRule("launch-template", 128, _LT_CHARS)
    IAM_ROLE = NameRule("iam-role", 64, _IAM_CHARS)
    INSTANCE_PROFILE = NameRule("instance-profile", 64, _IAM_CHARS)
    SECURITY_GROUP = NameRule("security-group", 255, _GENERIC_CHARS, ("sg-",))
    TAG = NameRule("tag", 255, _GENERIC_CHARS)


def kind_key(kind: NameKind) -> str:
    """``NameKind.LAUNCH_TEMPLATE`` -> ``launch-template``: how a kept name says which
    kind it is for when two kinds share a derived name (a member's group and template)."""
    return kind.value.key


def stable_hash(text: str, length: int = HASH_LENGTH) -> str:
    """Lower-case hex digest prefix of ``text``: the same input gives the same hash."""
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def physical_name(cluster: str, role: str, suffix: str = "", *, kind: NameKind) -> str:
    """Name of the ``role`` resource of ``cluster`` (plus ``suffix``), valid for ``kind``.

    Short enough names are ``<cluster>-<role>[-<suffix>]``. Longer ones become
    ``<head>-<hash>[-<suffix>]`` where the hash covers the full untruncated name.
    """
    rule = kind.value
    parts = [p for p in (cluster, role, suffix) if p]
    full = "-".join(parts)
    if len(full) <= rule.max_length and not full.startswith(rule.forbidden_prefixes):
        name = full
    else:
        tail = f"-{stable_hash(full)}" + (f"-{suffix}" if suffix else "")
        head = "-".join(p for p in (cluster, role) if p)
        if head.startswith(rule.forbidden_prefixes):
            head = "k-" + head
        head = head[: max(rule.max_length - len(tail), 1)].rstrip("-._") or "k"
        name = head + tail
    check_name(name, kind)
    return name


_SHORTENED = re.compile(rf"^(?P<head>.+)-[0-9a-f]{{{HASH_LENGTH}}}$")


def given_to(cluster: str, derived: str) -> bool:
    """Whether ``derived`` can be a name :func:`physical_name` gives ``cluster``'s
    original side: ``<cluster>-…``, or — too long for its kind — the head of that cut
    short (the cluster's name too, when it is long) and the full name's hash."""
    if derived.startswith(f"{cluster}-"):
        return True
    shortened = _SHORTENED.fullmatch(derived)
    if shortened is None:
        return False
    head = shortened["head"]
    full = f"{cluster}-"
    return full.startswith(head) or full.startswith(head.removeprefix("k-"))


def check_name(name: str, kind: NameKind) -> None:
    """Raise ``ValueError`` when ``name`` breaks the rules of ``kind``."""
    rule = kind.value
    if not name or len(name) > rule.max_length:
        raise ValueError(f"{kind.name} name {name!r} is not 1..{rule.max_length} characters")
    if not rule.allowed.fullmatch(name):
        raise ValueError(f"{kind.name} name {name!r} has characters AWS does not accept")
    if name.startswith(rule.forbidden_prefixes):
        raise ValueError(f"{kind.name} name {name!r} starts with a prefix AWS reserves")


@dataclass(frozen=True)
class Namer:
    """Names for one cluster and one side of a migration (``suffix`` empty = original)."""

    cluster: str
    suffix: str = ""
    existing: tuple[tuple[str, str], ...] = ()
    """(name kubeshift would give, name the live resource carries): an adopted cluster's
    original resources keep their names, since renaming most of them is a replace.
    Only the original side (no suffix) uses them; a migration's duplicates are new."""
    descriptions: tuple[tuple[str, str], ...] = ()
    """(name kubeshift would give a security group, the live group's description): AWS
    cannot change a group's description, so an adopted group keeps its own. Original
    side only, as :attr:`existing`."""
    user_data: tuple[tuple[str, str], ...] = ()
    """(name kubeshift would give a launch template, the boot script another tool wrote
    into it): an adopted template keeps its script, so the nodes its groups launch
    during a migration still boot as they did, and the same role's templates on every
    side and generation boot it too (:meth:`kept_user_data`)."""
    cluster_id: str = ""
    """The ID the cluster's tags carry (``kubernetes.io/cluster/<id>``) where it is not
    :attr:`cluster` (kops's DNS name): :attr:`tag_id`."""

    @property
    def tag_id(self) -> str:
        """The cluster's ID in its tags: :attr:`cluster_id`, else :attr:`cluster`."""
        return self.cluster_id or self.cluster

    @classmethod
    def of(
        cls,
        cluster: str,
        existing: Mapping[str, str],
        suffix: str = "",
        descriptions: Mapping[str, str] | None = None,
        user_data: Mapping[str, str] | None = None,
        cluster_id: str = "",
    ) -> Namer:
        return cls(
            cluster,
            suffix,
            tuple(sorted(existing.items())),
            tuple(sorted((descriptions or {}).items())),
            tuple(sorted((user_data or {}).items())),
            cluster_id,
        )

    @classmethod
    def for_cluster(cls, cluster: ClusterConfig) -> Namer:
        """The original side's namer, with everything the stack file says to keep."""
        return cls.of(
            cluster.name,
            cluster.names,
            descriptions=cluster.descriptions,
            user_data=cluster.user_data,
            cluster_id=cluster.tag_id,
        )

    def name(self, role: str, kind: NameKind) -> str:
        derived = physical_name(self.cluster, role, self.suffix, kind=kind)
        return self._kept(derived, kind) or derived

    def _kept(self, derived: str, kind: NameKind, *, bare: bool = True) -> str | None:
        """The live name of the resource kubeshift names ``derived``, when it differs
        (``bare``: a key without its kind counts too)."""
        existing = dict(self.existing) if not self.suffix else {}
        if not self.suffix:
            kept_use.note("names", f"{kind_key(kind)}:{derived}", *([derived] if bare else []))
        kept = existing.get(f"{kind_key(kind)}:{derived}")
        if kept is None and bare:
            kept = existing.get(derived)
        if kept is not None:
            check_name(kept, kind)
        return kept

    def inline_policy(self, identity: str) -> str:
        """kubeshift's inline policy on ``identity``'s role: ``<identity>-inline`` (unique
        within the role). It is kubeshift's own even on an adopted role: the inline
        policies another tool gave the role are its grants, left alone."""
        return f"{identity}-inline"

    def load_balancer(self, role: str) -> str:
        return self.name(role, NameKind.LOAD_BALANCER)

    def target_group(self, role: str) -> str:
        return self.name(role, NameKind.TARGET_GROUP)

    def autoscaling_group(self, role: str) -> str:
        return self.name(role, NameKind.AUTOSCALING_GROUP)

    def launch_template(self, role: str) -> str:
        return self.name(role, NameKind.LAUNCH_TEMPLATE)

    def iam_role(self, role: str) -> str:
        return self.name(role, NameKind.IAM_ROLE)

    def instance_profile(self, role: str) -> str:
        return self.name(role, NameKind.INSTANCE_PROFILE)

    def security_group(self, role: str) -> str:
        return self.name(role, NameKind.SECURITY_GROUP)

    def security_group_description(self, role: str, default: str) -> str:
        """The description of the ``role`` group: the live one an adopted group keeps,
        else ``default``."""
        if self.suffix:
            return default
        derived = physical_name(self.cluster, role, kind=NameKind.SECURITY_GROUP)
        kept_use.note("descriptions", derived)
        return dict(self.descriptions).get(derived, default)

    def kept_user_data(self, role: str) -> str | None:
        """The boot script an adopted cluster's ``role`` launch template keeps, if it keeps
        one: the adopted template's own, and on every other side and generation of the
        cluster the same role's (a vpc-move's target, cni-swap's second workers), so
        that new nodes boot as the cluster's nodes do — kops's nodeup reads the instance
        group's configuration from kops's state store; kubeshift's node.env would need
        an image built for it. A mirror is another cluster, named without kept scripts."""
        derived = physical_name(self.cluster, role, kind=NameKind.LAUNCH_TEMPLATE)
        kept_use.note("user_data", derived)
        return dict(self.user_data).get(derived)

    def tag(self, role: str) -> str:
        return self.name(role, NameKind.TAG)
