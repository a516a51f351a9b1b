"""The EC2 calls every ``aws:ec2`` type makes the same way: waits, "gone" errors, tags,
ARNs and the small conversions between the engine's values and the API's.

Waits follow the Terraform AWS provider's (its ``ec2PropagationTimeout``, retries while
AWS answers a given error), so the calls are right for AWS too; against moto every wait
ends at its first poll. The types themselves live one resource family a module.
"""

from __future__ import annotations

import functools
import secrets
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, TypeVar

import boto3
from botocore.exceptions import ClientError

from automation.sandbox.provider.diffing import same
from automation.sandbox.provider.model import (
    Aws,
    NotFound,
    Props,
    Request,
    tags_dict,
    tags_list,
)

T = TypeVar("T")
Raw = dict[str, Any]

SRC = "internal/service/ec2/"
PROPAGATION = 120.0  # the Terraform provider's ec2PropagationTimeout
DRAIN = 600.0  # how long a delete retries DependencyViolation while dependents go
POLL = 2.0


def error_code(err: ClientError) -> str:
    return str(err.response.get("Error", {}).get("Code", ""))


def is_gone(err: ClientError) -> bool:
    """``InvalidGroup.NotFound``, ``InvalidVolume.NotFound``, ... (moto also answers
    ``InvalidLaunchTemplateName.NotFoundException``)."""
    return error_code(err).endswith(("NotFound", "NotFoundException"))


def ignore_gone(call: Callable[[], object]) -> None:
    """Run a delete-like call; the target being gone already is success."""
    try:
        call()
    except ClientError as err:
        if not is_gone(err):
            raise


def retry(call: Callable[[], T], codes: tuple[str, ...], timeout: float) -> T:
    """``call()``, retried while AWS answers one of ``codes``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except ClientError as err:
            if error_code(err) not in codes or time.monotonic() > deadline:
                raise
        time.sleep(POLL)


def until(
    fetch: Callable[[], T], done: Callable[[T], bool] = lambda _: True, timeout: float = PROPAGATION
) -> T:
    """``fetch()`` until it finds the resource and ``done`` holds (AWS is eventually
    consistent: what was just created may not be visible yet)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = fetch()
            if done(value):
                return value
        except NotFound:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"not ready after {timeout:.0f}s")
        time.sleep(POLL)


def until_gone(fetch: Callable[[], object], timeout: float = PROPAGATION) -> None:
    """Poll ``fetch()`` until it raises :class:`NotFound`."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            fetch()
        except NotFound:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"still there after {timeout:.0f}s")
        time.sleep(POLL)


def one(describe: Callable[[], list[Raw]]) -> Raw:
    """The single resource a Describe call names, or :class:`NotFound`."""
    try:
        found = describe()
    except ClientError as err:
        if is_gone(err):
            raise NotFound(str(err)) from err
        raise
    if not found:
        raise NotFound("not found")
    return found[0]


def filters(**by: str) -> list[dict[str, Any]]:
    """``filters(vpc_id="vpc-1")`` -> ``[{"Name": "vpc-id", "Values": ["vpc-1"]}]``
    (``__`` in a keyword becomes ``.``)."""
    return [{"Name": k.replace("__", ".").replace("_", "-"), "Values": [v]} for k, v in by.items()]


def some(values: Mapping[str, Any]) -> Props:
    """``values`` without what AWS left unset (``None``, ``""``); lists stay, even empty."""
    return {k: v for k, v in values.items() if v is not None and v != ""}


def integer(value: Any) -> int | None:
    """A number from the engine (protobuf numbers arrive as floats) as an int."""
    return None if value is None else int(value)


def changed(olds: Props, news: Props, prop: str) -> bool:
    """Whether ``prop`` differs, absent/empty counting as unset (the servicer's rule)."""
    return not same(olds.get(prop), news.get(prop))


def declared_change(olds: Props, news: Props, prop: str) -> bool:
    """A change of an Optional+Computed property: only when the program declares it."""
    return prop in news and changed(olds, news, prop)


def client_token() -> str:
    return str(uuid.uuid4())


def rfc3339(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def autoname(req: Request) -> str:
    """Pulumi's autoname: the logical name plus a dash and seven random hex digits."""
    return f"{req.name}-{secrets.token_hex(4)[:7]}"


@functools.lru_cache
def _partition(region: str) -> str:
    return boto3.session.Session().get_partition_for_region(region)


def ec2_arn(aws: Aws, account: str, resource: str) -> str:
    return f"arn:{_partition(aws.region)}:ec2:{aws.region}:{account}:{resource}"


@functools.lru_cache(maxsize=8)
def account_id(aws: Aws) -> str:
    """The caller's account (what the Terraform provider puts in ARNs it builds)."""
    return str(aws.client("sts").get_caller_identity()["Account"])


def tag_spec(resource_type: str, tags: Mapping[str, str] | None) -> Raw:
    """``TagSpecifications`` for a Create call, if there are tags."""
    if not tags:
        return {}
    return {"TagSpecifications": [{"ResourceType": resource_type, "Tags": tags_list(tags)}]}


def retag(aws: Aws, id_: str, olds: Props, news: Props) -> None:
    """Make the resource's tags go from ``olds["tags"]`` to ``news["tags"]``."""
    old: Mapping[str, str] = olds.get("tags") or {}
    new: Mapping[str, str] = news.get("tags") or {}
    if removed := [k for k in old if k not in new]:
        aws.ec2.delete_tags(Resources=[id_], Tags=[{"Key": k} for k in removed])
    if updated := {k: v for k, v in new.items() if old.get(k) != v}:
        aws.ec2.create_tags(Resources=[id_], Tags=tags_list(updated))


def tag_outputs(raw: list[dict[str, str]] | None) -> Props:
    tags = tags_dict(raw)
    return {"tags": tags, "tagsAll": dict(tags)}


# --- the networking types' own variants -------------------------------------------------
# The VPC, gateway, route and peering types came with their own copies of the helpers
# above; where a copy differs, it is kept as it was, under its own name: "gone" is a
# ``...NotFound`` code only, the account is asked for on every call, and a property
# changes only when declared with another value (compared with ``!=``).


def is_not_found(err: ClientError) -> bool:
    """``InvalidVpcID.NotFound``, ``NatGatewayNotFound``, ``InvalidRoute.NotFound``, ...
    (unlike :func:`is_gone`, not moto's ``...NotFoundException``)."""
    return error_code(err).endswith("NotFound")


def ignore_not_found(call: Callable[[], object]) -> None:
    """Run a delete-like call; the target being gone already (:func:`is_not_found`) is
    success."""
    try:
        call()
    except ClientError as err:
        if not is_not_found(err):
            raise


def find_one(describe: Callable[[], list[Raw]]) -> Raw:
    """The single resource a Describe call names, or :class:`NotFound` (gone as
    :func:`is_not_found` tells it)."""
    try:
        found = describe()
    except ClientError as err:
        if is_not_found(err):
            raise NotFound(str(err)) from err
        raise
    if not found:
        raise NotFound("not found")
    return found[0]


def caller_account(aws: Aws) -> str:
    """The caller's account, asked for on every call (:func:`account_id` caches it)."""
    return str(aws.client("sts").get_caller_identity()["Account"])


def declared_differs(olds: Props, news: Props, prop: str) -> bool:
    """Whether the program declares ``prop`` with a value other than the old one."""
    return prop in news and news[prop] != olds.get(prop)
