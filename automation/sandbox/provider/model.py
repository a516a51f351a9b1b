"""What one ``aws:*`` resource type must provide to the stand-in provider.

A type is a :class:`ResourceType` subclass registered under its Pulumi token. Inputs
and outputs use the engine's camelCase property names (``cidrBlock``, ``vpcId``), as
pulumi-aws's schema spells them; outputs are the inputs plus what AWS computed (ids,
ARNs, DNS names), so the program's ``resource.arn`` etc. resolve.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import boto3
from botocore.config import Config

from automation.review.set_attributes import SET_ATTRIBUTES
from automation.sandbox.provider.diffing import Schema, Verdict, decide

Props = dict[str, Any]


@dataclass(frozen=True)
class ForceNew:
    """A property whose change forces a new resource, and where that fact comes from."""

    prop: str  # top-level input property, camelCase (``cidrBlock``)
    source: str  # e.g. "internal/service/ec2/vpc_.go: cidr_block ForceNew"


class Aws:
    """boto3 clients for the sandbox's moto server (one per service, made on first use)."""

    def __init__(self, region: str, endpoint_url: str | None) -> None:
        self.region = region
        self.endpoint_url = endpoint_url
        self._clients: dict[str, Any] = {}
        self._config = Config(retries={"mode": "standard", "total_max_attempts": 3})

    def client(self, service: str) -> Any:
        if service not in self._clients:
            self._clients[service] = boto3.client(  # type: ignore[call-overload]
                service,
                region_name=self.region,
                endpoint_url=self.endpoint_url,
                config=self._config,
            )
        return self._clients[service]

    @property
    def ec2(self) -> Any:
        return self.client("ec2")


class NotFound(Exception):
    """The live resource no longer exists (Read answers "gone")."""


@dataclass
class Request:
    """One call's context: the resource's logical name (for autonaming) and type."""

    name: str
    token: str
    extra: dict[str, Any] = field(default_factory=dict)


class ResourceType:
    """One ``aws:*`` type. Subclasses set ``token`` and ``force_new`` and implement CRUD.

    - ``create`` returns ``(id, outputs)``; never called during previews.
    - ``read`` returns the live outputs for ``id`` (``state`` is the last known outputs,
      or the declared inputs when importing); raises :class:`NotFound` when gone.
    - ``update`` changes in place what AWS can change in place and returns outputs;
      it is only called when no ``force_new`` property changed.
    - ``delete`` removes the resource; deleting something already gone succeeds.
    - ``computed`` lists output properties AWS computes (unknown during previews).
    """

    token: ClassVar[str]
    force_new: ClassVar[tuple[ForceNew, ...]] = ()
    computed: ClassVar[tuple[str, ...]] = ("arn",)
    # Input properties that AWS never returns; the type's ``read`` keeps them from the
    # state, as Terraform's Read leaves them alone.
    write_only: ClassVar[tuple[str, ...]] = ()
    # Paths (``a``, ``a.b``, ``a[].b``) AWS reports but moto does not: a refresh keeps the
    # state's value for these and for nothing else. Each is a line in
    # docs/sandbox-fidelity.md and has a test showing moto leave it out.
    moto_omits: ClassVar[tuple[str, ...]] = ()
    # Properties Terraform's schema types ``TypeSet``: compared without order, and read
    # back in the state's order when the members are the same. Taken from the one list
    # of pulumi-aws's set attributes (``review.set_attributes``) that the offline
    # judgement of a phase reads too.
    sets: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        token = cls.__dict__.get("token")
        if token is not None:
            cls.sets = tuple(sorted(SET_ATTRIBUTES.get(token, ())))
    # Terraform's Optional+Computed attributes: when the program does not set one, AWS's
    # value stands (no diff); an import reads them as inputs. ``a.b`` reaches into a
    # one-block attribute (a target group's ``healthCheck.timeout``).
    optional_computed: ClassVar[tuple[str, ...]] = ()
    # Schema defaults: not declaring one is declaring its default; an import leaves a
    # value equal to its default out of the inputs, as the bridge does.
    defaults: ClassVar[Mapping[str, Any]] = {}
    # JSON documents (IAM policies), compared as parsed JSON: the provider suppresses
    # diffs between equivalent policies.
    json_documents: ClassVar[tuple[str, ...]] = ()
    # The property pulumi-aws autonames when the program leaves it out (``name``; its
    # ``provider/autonaming.go`` for every type with an input ``name``, but for
    # overrides). Set by the program, it makes every replacement delete-first.
    auto_named: ClassVar[str | None] = None
    # pulumi-aws marks the type ``DeleteBeforeReplace`` outright in its ResourceInfo.
    delete_before_replace: ClassVar[bool] = False
    # The attributes of pulumi-aws's state for the type (its SDK class's properties)
    # that ``read`` does not report, each with why: an import through pulumi-aws compares
    # the program with all of them, the stand-in's only with what it reads. With what
    # ``read`` reports it is exactly the SDK's list (a test holds it so), and each is
    # named on the type's line in docs/sandbox-fidelity.md.
    not_read: ClassVar[Mapping[str, str]] = {}

    @classmethod
    def schema(cls) -> Schema:
        return Schema(cls.sets, cls.optional_computed, cls.defaults, cls.json_documents)

    def check(self, req: Request, news: Props) -> Props:
        """Apply defaults and autonaming to the declared inputs (default: as declared)."""
        return news

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        raise NotImplementedError

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        raise NotImplementedError

    def imported_id(self, aws: Aws, req: Request, id_: str, outputs: Props) -> str:
        """The id an import by ``id_`` leaves in the state (the provider's importer may
        take another form than the resource's id, e.g. ``<subnet>/<route table>``)."""
        return id_

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        raise NotImplementedError(f"{self.token} has no property AWS updates in place")

    def recomputed(self, olds: Props, news: Props) -> tuple[str, ...]:
        """Computed outputs the update from ``olds`` to ``news`` gives new values: unknown
        in the update's preview (Terraform's ``SetNewComputed``), so that an update plan
        made from the preview admits what the update then writes."""
        return ()

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        raise NotImplementedError

    @classmethod
    def replace_props(cls) -> frozenset[str]:
        return frozenset(f.prop for f in cls.force_new)

    def forced_new(self, olds: Props, old_inputs: Props, news: Props) -> tuple[str, ...]:
        """Properties the provider's CustomizeDiff (or ModifyPlan) forces new for this
        change only — what no static ``force_new`` can state. ``olds`` are the old
        outputs (the state), ``old_inputs`` the old declared inputs."""
        return ()

    def diff(self, old_inputs: Props, news: Props, olds: Props | None = None) -> Verdict:
        """Which declared properties changed, and which of them replace the resource."""
        verdict = decide(self.replace_props(), old_inputs, news, self.schema())
        forced = [
            p
            for p in self.forced_new(old_inputs if olds is None else olds, old_inputs, news)
            if p in verdict.changed and p not in verdict.replaces
        ]
        return Verdict(verdict.changed, verdict.replaces + tuple(forced))


# Reasons many types give in ``not_read``.
OPTIONAL_COMPUTED = "Optional+Computed and never set by the program: an import cannot differ on it"
REGION = f"the provider's region; {OPTIONAL_COMPUTED}"
NAME_PREFIX = f"derived from the name on import; {OPTIONAL_COMPUTED}"
TERRAFORM_ONLY = (
    "an argument of Terraform's, not an AWS setting: an import reads its schema default, "
    "which the program keeps"
)
COMPUTED_ONLY = "computed only: the program cannot declare it, so an import cannot differ on it"
UNTRIED = (
    "not read by the stand-in, though moto holds it: the program never sets it, so a live "
    "value other than AWS's default would show on a real import only"
)
MOTO_LACKS = "moto does not model it: no sandbox resource has it"

REGISTRY: dict[str, ResourceType] = {}


def register(cls: type[ResourceType]) -> type[ResourceType]:
    """Class decorator: make ``cls`` serve its token."""
    if cls.token in REGISTRY:
        raise ValueError(f"{cls.token} registered twice")
    REGISTRY[cls.token] = cls()
    return cls


def tags_list(tags: Mapping[str, str] | None) -> list[dict[str, str]]:
    """``{"k": "v"}`` -> ``[{"Key": "k", "Value": "v"}]`` (EC2/ELB/IAM shape)."""
    return [{"Key": k, "Value": v} for k, v in (tags or {}).items()]


def tags_dict(tags: list[dict[str, str]] | None) -> dict[str, str]:
    """The reverse of :func:`tags_list`, dropping AWS-reserved ``aws:`` keys."""
    return {t["Key"]: t["Value"] for t in tags or [] if not t["Key"].startswith("aws:")}
