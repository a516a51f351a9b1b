"""What a caller asks of a DNS cutover: which record moves, to what, and how it is proven.

A :class:`RecordCutover` names one record and its new target (a CNAME, addresses or a
Route53 alias), optionally a weighted shift in steps, and the :class:`TargetCheck` the
new target must pass before and after the record moves; :class:`SyncOptions` says how
long to wait for Route53. All are frozen pydantic models, validated when built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from automation.aws.dns.records import canonical_name
from automation.aws.probe import HttpProbe

if TYPE_CHECKING:
    from mypy_boto3_route53.literals import RRTypeType


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CnameTarget(_Frozen):
    """Point the record at a host name (typically a load balancer's DNS name)."""

    kind: Literal["cname"] = "cname"
    value: str
    ttl: int = Field(default=60, ge=0)


class ARecordTarget(_Frozen):
    """Point the record at addresses (seed 001: the API at the first moved member)."""

    kind: Literal["a"] = "a"
    addresses: tuple[str, ...] = Field(min_length=1)
    ttl: int = Field(default=60, ge=0)


class AliasTarget(_Frozen):
    """Point the record at an AWS resource by Route53 alias (a load balancer)."""

    kind: Literal["alias"] = "alias"
    dns_name: str
    hosted_zone_id: str = Field(description="The load balancer's CanonicalHostedZoneId.")
    evaluate_target_health: bool = False
    record_type: Literal["A", "AAAA"] = "A"


RecordTarget = Annotated[CnameTarget | ARecordTarget | AliasTarget, Field(discriminator="kind")]


class WeightedShift(_Frozen):
    """Move traffic in weighted steps (percent to the new target) instead of at once."""

    steps: tuple[int, ...] = (10, 50, 100)
    old_set_identifier: str = "kubeshift-old"
    new_set_identifier: str = "kubeshift-new"
    collapse: bool = Field(
        default=True, description="At 100%, replace the weighted pair by a plain record."
    )
    pause_seconds: float = Field(default=0.0, ge=0, description="Dwell after each step.")

    @field_validator("steps")
    @classmethod
    def _ascending(cls, steps: tuple[int, ...]) -> tuple[int, ...]:
        if not steps or any(not 0 < s <= 100 for s in steps) or list(steps) != sorted(set(steps)):
            raise ValueError("steps must be strictly ascending percentages in 1..100")
        return steps


class TargetCheck(_Frozen):
    """What must hold of the new target before and after the record moves."""

    target_group_arns: tuple[str, ...] = ()
    min_healthy: int | None = Field(default=None, ge=1, description="None = every target.")
    probe: HttpProbe | None = None
    timeout: float = Field(default=120.0, ge=0, description="How long to wait for health.")
    interval: float = Field(default=10.0, gt=0)


class RecordCutover(_Frozen):
    """One record to move, where to, and how to prove the new target serves."""

    zone_id: str
    name: str
    target: RecordTarget
    weighted: WeightedShift | None = None
    check: TargetCheck = TargetCheck()

    @property
    def fqdn(self) -> str:
        return canonical_name(self.name)

    @property
    def record_type(self) -> RRTypeType:
        target = self.target
        if isinstance(target, CnameTarget):
            return "CNAME"
        if isinstance(target, ARecordTarget):
            return "A"
        return target.record_type

    @property
    def endpoint(self) -> str:
        """Where a probe connects to reach the new target."""
        target = self.target
        if isinstance(target, CnameTarget):
            return target.value.rstrip(".")
        if isinstance(target, ARecordTarget):
            return target.addresses[0]
        return target.dns_name.rstrip(".")


class SyncOptions(_Frozen):
    """How long to wait for Route53 to report a change INSYNC."""

    timeout: float = Field(default=300.0, gt=0)
    interval: float = Field(default=10.0, gt=0)
