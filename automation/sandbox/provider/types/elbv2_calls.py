"""The ELBv2 calls the ``aws:lb`` types make the same way: waits, "gone" errors,
names, tags and attributes.

Waits follow the Terraform AWS provider's (its 10-minute timeouts, ``internal/service/
elbv2/``), so the calls are right for AWS too; against moto every wait ends at its first
poll. ``check_name`` holds names to AWS's rules, which moto does not (it accepts names
longer than 32 characters). Each type's own attribute table lives with the type.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from botocore.exceptions import ClientError

from automation.sandbox.provider.model import NotFound, Props, Request, tags_dict, tags_list

T = TypeVar("T")
Raw = dict[str, Any]

TIMEOUT = 600.0  # Terraform's 10-minute create/update/delete timeouts
POLL = 2.0
_NAME_LIMIT = 32
_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$")


# --- AWS plumbing ---------------------------------------------------------------------


def error_code(err: ClientError) -> str:
    return str(err.response.get("Error", {}).get("Code", ""))


def is_gone(err: ClientError) -> bool:
    """``LoadBalancerNotFound``, ``TargetGroupNotFound``, ``ListenerNotFound``."""
    return error_code(err).endswith("NotFound")


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


def ignore_gone(call: Callable[[], object]) -> None:
    try:
        call()
    except ClientError as err:
        if not is_gone(err):
            raise


def wait(fetch: Callable[[], T], done: Callable[[T], bool], what: str, timeout: float) -> T:
    """Poll ``fetch()`` until ``done`` holds; a resource not visible yet (AWS is
    eventually consistent) is polled again."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = fetch()
            if done(value):
                return value
        except NotFound:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: still waiting after {timeout:.0f}s")
        time.sleep(POLL)


def refuse_existing(describe: Callable[[], list[Raw]], code: str, what: str, op: str) -> None:
    """Create calls answer an existing resource of the same name and settings with that
    resource; refuse instead, as Terraform does, rather than adopt it."""
    try:
        one(describe)
    except NotFound:
        return
    raise ClientError({"Error": {"Code": code, "Message": f"{what} already exists"}}, op)


def covers(live: Any, declared: Any) -> bool:
    """Whether ``live`` already holds every value ``declared`` sets (AWS fills in the
    fields a declaration leaves out, as Terraform's Optional+Computed ones)."""
    if declared is None:
        return True
    if isinstance(declared, dict):
        return isinstance(live, dict) and all(covers(live.get(k), v) for k, v in declared.items())
    if isinstance(declared, list):
        return (
            isinstance(live, list)
            and len(live) == len(declared)
            and all(map(covers, live, declared))
        )
    return bool(live == declared)


def check_name(kind: str, props: Props, req: Request) -> Props:
    """Fill ``name`` (from ``namePrefix`` or the logical name, stable across previews) and
    hold it to AWS's ELBv2 naming rules."""
    props = dict(props)
    if not props.get("name"):
        prefix = props.get("namePrefix") or f"{req.name[:24]}-"
        props["name"] = (prefix + hashlib.sha256(req.name.encode()).hexdigest())[:_NAME_LIMIT]
    name = props["name"]
    if len(name) > _NAME_LIMIT:
        raise ValueError(
            f"{kind} name cannot be longer than '{_NAME_LIMIT}' characters: "
            f"{name!r} has {len(name)}"
        )
    if not _NAME.match(name):
        raise ValueError(
            f"{kind} name {name!r} must be letters, digits and hyphens, "
            "not beginning or ending with a hyphen"
        )
    return props


# --- tags -------------------------------------------------------------------------------


def tag_args(inputs: Props) -> Raw:
    return {"Tags": tags_list(inputs["tags"])} if inputs.get("tags") else {}


def read_tags(elb: Any, arn: str) -> Props:
    found = elb.describe_tags(ResourceArns=[arn])["TagDescriptions"]
    tags = tags_dict(found[0]["Tags"] if found else [])
    return {"tags": tags, "tagsAll": dict(tags)}


def retag(elb: Any, arn: str, olds: Props, news: Props) -> None:
    """Make the resource's tags go from ``olds["tags"]`` to ``news["tags"]``."""
    old: Mapping[str, str] = olds.get("tags") or {}
    new: Mapping[str, str] = news.get("tags") or {}
    if removed := [k for k in old if k not in new]:
        elb.remove_tags(ResourceArns=[arn], TagKeys=removed)
    if changed := {k: v for k, v in new.items() if old.get(k) != v}:
        elb.add_tags(ResourceArns=[arn], Tags=tags_list(changed))


# --- attributes -------------------------------------------------------------------------

# input property -> (attribute key, types it applies to, Terraform default); the default's
# type (bool or int) is the property's.
Attributes = dict[str, tuple[str, tuple[str, ...], bool | int]]


def applicable(table: Attributes, kind: str) -> list[str]:
    return [prop for prop, (_, kinds, _) in table.items() if kind in kinds]


def attribute_args(table: Attributes, values: Props) -> list[dict[str, str]]:
    args = []
    for prop, value in values.items():
        key, _, default = table[prop]
        text = str(bool(value)).lower() if isinstance(default, bool) else str(int(value))
        args.append({"Key": key, "Value": text})
    return args


def attribute_outputs(table: Attributes, kind: str, live: list[dict[str, str]]) -> Props:
    values = {a["Key"]: a["Value"] for a in live}
    outputs: Props = {}
    for prop in applicable(table, kind):
        key, _, default = table[prop]
        if key in values:
            raw = values[key]
            outputs[prop] = raw == "true" if isinstance(default, bool) else int(raw)
        # attributes AWS does not report are left out
    return outputs


def attribute_changes(table: Attributes, kind: str, olds: Props, news: Props) -> Props:
    return {
        p: news[p]
        for p in applicable(table, kind)
        if news.get(p) is not None and news[p] != olds.get(p)
    }
