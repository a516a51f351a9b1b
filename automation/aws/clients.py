"""The one place kubeshift builds boto3 clients.

Hooks receive an ``AwsClients`` and never build their own, so the profile, region,
endpoint (``AWS_ENDPOINT_URL`` or an explicit URL, for emulators such as moto),
retry mode and timeouts are decided here once. Clients are created lazily: a phase
that only touches Route53 never builds an EC2 client.
"""

from __future__ import annotations

import os
import threading
from functools import cached_property
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from automation.core.errors import UserError

if TYPE_CHECKING:
    import boto3
    from botocore.config import Config
    from mypy_boto3_autoscaling import AutoScalingClient
    from mypy_boto3_cloudwatch import CloudWatchClient
    from mypy_boto3_ec2 import EC2Client
    from mypy_boto3_elb import ElasticLoadBalancingClient
    from mypy_boto3_elbv2 import ElasticLoadBalancingv2Client
    from mypy_boto3_iam import IAMClient
    from mypy_boto3_resourcegroupstaggingapi import ResourceGroupsTaggingAPIClient
    from mypy_boto3_route53 import Route53Client
    from mypy_boto3_service_quotas import ServiceQuotasClient


class AwsAccess(BaseModel):
    """How to reach AWS: the settings every AWS hook shares."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    profile: str | None = Field(
        default=None, description="Named profile from ~/.aws/config; None = default chain."
    )
    region: str | None = Field(
        default=None, description="Region; None = the profile's or AWS_REGION/AWS_DEFAULT_REGION."
    )
    endpoint_url: str | None = Field(
        default=None,
        description="Endpoint for every service (emulators); None = AWS_ENDPOINT_URL or AWS.",
    )
    connect_timeout: float = Field(default=5.0, gt=0, description="Seconds to connect.")
    read_timeout: float = Field(default=30.0, gt=0, description="Seconds to wait for a reply.")
    max_attempts: int | None = Field(
        default=None, ge=1, description="Attempts per call; None = AWS_MAX_ATTEMPTS or 3."
    )

    @field_validator("endpoint_url")
    @classmethod
    def _endpoint_is_a_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        try:
            parts.port  # noqa: B018 - raises on a port that is not a number
        except ValueError:
            raise ValueError("its port is not a number") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("use http(s)://host[:port]")
        return value


def botocore_config(access: AwsAccess) -> Config:
    """Standard retry mode and explicit timeouts for every client."""
    from botocore.config import Config

    retries: dict[str, Any] = {"mode": "standard"}
    if access.max_attempts is not None:
        retries["total_max_attempts"] = access.max_attempts
    return Config(
        retries=retries,  # type: ignore[arg-type]
        connect_timeout=access.connect_timeout,
        read_timeout=access.read_timeout,
    )


def build_session(access: AwsAccess) -> boto3.session.Session:
    """A boto3 session for ``access``; a missing profile or region is a ``UserError``.

    boto3 is imported here, not with the module: commands that never call AWS (render,
    diff, status, plan) start without paying for it."""
    import boto3
    from botocore.exceptions import ProfileNotFound

    try:
        session = boto3.session.Session(profile_name=access.profile, region_name=access.region)
    except ProfileNotFound as exc:
        raise UserError(
            f"AWS profile '{access.profile}' is not configured; add it to ~/.aws/config or "
            "set kubeshift's aws.profile to an existing one."
        ) from exc
    if not session.region_name:
        raise UserError(
            "No AWS region is set; set kubeshift's aws.region, the profile's region, or AWS_REGION."
        )
    return session


class AwsClients:
    """Lazily-built boto3 clients sharing one session, one config and one endpoint."""

    def __init__(self, access: AwsAccess | None = None) -> None:
        self.access = access or AwsAccess()
        self.session = build_session(self.access)
        self.config = botocore_config(self.access)
        self._lock = threading.Lock()

    @property
    def region(self) -> str:
        return str(self.session.region_name)

    @property
    def endpoint_url(self) -> str | None:
        """The explicit endpoint, else ``AWS_ENDPOINT_URL`` (which botocore honours itself)."""
        return self.access.endpoint_url or os.environ.get("AWS_ENDPOINT_URL") or None

    def client(self, service: str) -> Any:
        """A new client for ``service`` with this object's session, config and endpoint."""
        kwargs: dict[str, Any] = {"config": self.config}
        if self.access.endpoint_url:
            kwargs["endpoint_url"] = self.access.endpoint_url
        with self._lock:  # boto3 sessions are not thread-safe; clients are
            return self.session.client(service, **kwargs)  # type: ignore[call-overload]

    @cached_property
    def ec2(self) -> EC2Client:
        return self.client("ec2")  # type: ignore[no-any-return]

    @cached_property
    def elbv2(self) -> ElasticLoadBalancingv2Client:
        return self.client("elbv2")  # type: ignore[no-any-return]

    @cached_property
    def elb(self) -> ElasticLoadBalancingClient:
        """Classic load balancers (the AWS cloud provider's default for a Service)."""
        return self.client("elb")  # type: ignore[no-any-return]

    @cached_property
    def cloudwatch(self) -> CloudWatchClient:
        return self.client("cloudwatch")  # type: ignore[no-any-return]

    @cached_property
    def route53(self) -> Route53Client:
        return self.client("route53")  # type: ignore[no-any-return]

    @cached_property
    def autoscaling(self) -> AutoScalingClient:
        return self.client("autoscaling")  # type: ignore[no-any-return]

    @cached_property
    def iam(self) -> IAMClient:
        return self.client("iam")  # type: ignore[no-any-return]

    @cached_property
    def tagging(self) -> ResourceGroupsTaggingAPIClient:
        return self.client("resourcegroupstaggingapi")  # type: ignore[no-any-return]

    @cached_property
    def service_quotas(self) -> ServiceQuotasClient:
        return self.client("service-quotas")  # type: ignore[no-any-return]
