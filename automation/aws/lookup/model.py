"""What a finder returns, how it fails, and the registry of finders by type token."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from automation.aws.clients import AwsClients

if TYPE_CHECKING:
    from mypy_boto3_ec2.type_defs import FilterTypeDef

Props = dict[str, Any]
"""Declared inputs as the engine sees them (camelCase keys), live ids already in."""


@dataclass(frozen=True)
class Found:
    """The live resource behind one declared resource."""

    id: str
    """Its id as the stack's state will hold it."""
    import_id: str | None
    """What Pulumi's ``import`` option takes (pulumi-aws's importer format); None for a
    type pulumi-aws cannot import, which adoption records by an idempotent create."""
    outputs: Props = field(default_factory=dict)
    """Live attributes dependents read: ``arn``, ``dnsName``, ``allocationId``..."""


class LookupProblem(Exception):
    """No single live resource matches; the message is one sentence."""


class Missing(LookupProblem):
    """Nothing live matches the declared resource."""


class OwnAddition(Exception):
    """Nothing live matches, and nothing another tool builds would: kubeshift's own
    addition to what runs (its grants on an adopted role). Not a lookup problem: the
    engine's preview shows its create, which adoption refuses beside the differences
    that call for it."""


class Ambiguous(LookupProblem):
    """More than one live resource matches the declared resource."""


@dataclass
class Lookup:
    """What every finder shares: the account's clients and the cluster being adopted."""

    clients: AwsClients
    cluster: str
    """The cluster's name, which kubeshift's names start with."""
    cache: dict[str, Any] = field(default_factory=dict)
    cluster_id: str = ""
    """The ID its tags carry where it is not :attr:`cluster` (kops's DNS name)."""

    @property
    def cluster_tag(self) -> str:
        return f"kubernetes.io/cluster/{self.cluster_id or self.cluster}"

    def memo(self, key: str, load: Callable[[], Any]) -> Any:
        """``load()`` once per key (describe calls several finders share)."""
        if key not in self.cache:
            self.cache[key] = load()
        return self.cache[key]


Finder = Callable[[Lookup, str, Props], Found]
FINDERS: dict[str, Finder] = {}


def finds(token: str) -> Callable[[Finder], Finder]:
    """Register the decorated function as the finder of ``token``."""

    def register(finder: Finder) -> Finder:
        FINDERS[token] = finder
        return finder

    return register


def find(lookup: Lookup, token: str, name: str, inputs: Props) -> Found:
    """The live resource behind ``name`` of type ``token``; :class:`LookupProblem` else."""
    finder = FINDERS.get(token)
    if finder is None:
        raise Missing(f"{name}: kubeshift cannot adopt a {token} yet.")
    return finder(lookup, name, inputs)


def only(name: str, what: str, matches: Sequence[str]) -> str:
    """The one id in ``matches``; ``what`` describes the search in the sentence."""
    unique = list(dict.fromkeys(matches))
    if not unique:
        raise Missing(f"{name}: no live {what}.")
    if len(unique) > 1:
        raise Ambiguous(f"{name}: {len(unique)} live {what} ({', '.join(unique)}).")
    return unique[0]


def tag_map(tags: Sequence[Mapping[str, str]] | None) -> dict[str, str]:
    """AWS's ``[{Key, Value}]`` as a dict."""
    return {t["Key"]: t.get("Value", "") for t in tags or []}


def declared_tags(inputs: Props) -> dict[str, str]:
    tags = inputs.get("tags") or {}
    return {str(k): str(v) for k, v in tags.items()}


def by(name: str, *values: str) -> FilterTypeDef:
    """One EC2 ``Filters`` entry: ``by("vpc-id", "vpc-1")``, ``by("tag:Name", "x")``."""
    return {"Name": name, "Values": list(values)}
