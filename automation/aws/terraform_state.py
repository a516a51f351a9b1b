"""What a Terraform state still claims of what kubeshift adopts, and the commands that
release it.

Terraform keeps, per configuration, a state file (v4 JSON since Terraform 0.12:
``resources[]`` each with its ``module`` instance path, ``mode``, ``type`` and ``name``,
and ``instances[]`` each with its ``index_key`` and ``attributes``; hashicorp/terraform
``internal/states/statefile/version4.go``). Its next ``terraform apply`` puts back what
it manages as its configuration says, so a resource kubeshift changes must leave it
first: ``terraform state rm ADDRESS`` forgets a resource without touching it. The
addresses are read from the state, never guessed from a module's conventions, and a
resource is claimed when an instance's ``id`` or ``arn`` is the adopted resource's id
or import id (a route's: its table and destination) — or, for a rule kept outside its
group (``aws_security_group_rule``, ``aws_vpc_security_group_*_rule``), when its group is
one kubeshift adopts.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from automation.core.errors import ConfigError

SUPPORTED_VERSION = 4
_MATCHED_BY = ("id", "arn")
_GROUP_OF_A_RULE = "security_group_id"


class TerraformClaim(BaseModel):
    """One resource instance a Terraform state manages."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    address: str
    """Its address, as ``terraform state rm`` takes it (``module.a["x"].aws_lb.api``)."""
    type: str
    ids: frozenset[str]
    """What identifies it in AWS: its ``id`` and ``arn``."""
    group: str | None = None
    """For a rule kept outside its security group: the group's id."""


def claims_in(text: str, where: str) -> list[TerraformClaim]:
    """Every managed resource instance of a v4 state; ``where`` names it in refusals."""
    try:
        state = json.loads(text)
    except ValueError:
        raise ConfigError(f"{where} is not a Terraform state: it is not JSON.") from None
    version = state.get("version") if isinstance(state, dict) else None
    if version != SUPPORTED_VERSION:
        raise ConfigError(
            f"{where} is a Terraform state of format version {version!r}; kubeshift reads "
            f"version {SUPPORTED_VERSION} (Terraform 0.12 and later): run "
            "`terraform state pull` with a current Terraform and name its output."
        )
    claims = []
    for resource in state.get("resources") or []:
        if resource.get("mode") != "managed":
            continue  # a data source reads; it claims nothing
        for instance in resource.get("instances") or []:
            claims.append(_claim(resource, instance))
    return claims


def _claim(resource: dict[str, Any], instance: dict[str, Any]) -> TerraformClaim:
    attributes = instance.get("attributes") or {}
    ids = frozenset(str(attributes[k]) for k in _MATCHED_BY if attributes.get(k))
    if resource["type"] == "aws_route" and attributes.get("destination_cidr_block"):
        # its id (``r-<table><hash>``) names it nowhere else: the table and destination
        # do, as pulumi-aws imports a route (``<table>_<destination>``)
        route = f"{attributes.get('route_table_id')}_{attributes['destination_cidr_block']}"
        ids |= {route}
    group = attributes.get(_GROUP_OF_A_RULE) if "rule" in resource["type"] else None
    return TerraformClaim(
        address=address_of(resource, instance.get("index_key")),
        type=resource["type"],
        ids=ids,
        group=str(group) if group else None,
    )


def address_of(resource: dict[str, Any], index_key: object) -> str:
    """``module.<path>.<type>.<name>[<key>]`` as Terraform writes an instance's address:
    an integer key bare, a string key quoted."""
    base = f"{resource['type']}.{resource['name']}"
    if resource.get("module"):
        base = f"{resource['module']}.{base}"
    if index_key is None:
        return base
    if isinstance(index_key, bool) or not isinstance(index_key, int | float | str):
        raise ConfigError(f"a Terraform state instance of {base} has the key {index_key!r}.")
    key = json.dumps(index_key) if isinstance(index_key, str) else str(int(index_key))
    return f"{base}[{key}]"


def still_claimed(claims: Iterable[TerraformClaim], ids: Iterable[str]) -> list[TerraformClaim]:
    """The claims on any of ``ids`` (resources kubeshift adopts or changes), each once, in
    the state's order."""
    wanted = set(ids)
    return [c for c in claims if c.ids & wanted or (c.group is not None and c.group in wanted)]


def release_commands(claims: Iterable[TerraformClaim]) -> list[str]:
    """The ``terraform state rm`` that releases the claims, in one command per 20
    addresses (the shell quotes each)."""
    addresses = list(dict.fromkeys(c.address for c in claims))
    return [
        "terraform state rm " + " ".join(shlex.quote(a) for a in addresses[i : i + 20])
        for i in range(0, len(addresses), 20)
    ]


def read_location(location: str, read_s3: Callable[[str, str], bytes]) -> str:
    """The state at ``location``: a local file, or ``s3://bucket/key`` read by
    ``read_s3(bucket, key)``."""
    if location.startswith("s3://"):
        bucket, _, key = location.removeprefix("s3://").partition("/")
        if not bucket or not key:
            raise ConfigError(f"{location} names no object: give s3://BUCKET/KEY.")
        return read_s3(bucket, key).decode()
    path = Path(location).expanduser()
    if not path.is_file():
        raise ConfigError(f"the Terraform state {location} is not a file.")
    return path.read_text()


def state_claims(location: str, s3: Any) -> list[TerraformClaim]:
    """The claims of the state at ``location`` (``runtime.terraform_state``), an S3 one
    read with the ``s3`` client."""

    def read_s3(bucket: str, key: str) -> bytes:
        from botocore.exceptions import ClientError

        try:
            return bytes(s3.get_object(Bucket=bucket, Key=key)["Body"].read())
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            raise ConfigError(
                f"the Terraform state s3://{bucket}/{key} could not be read ({code}); check "
                "kubeshift:runtime.terraform_state and that the operator may s3:GetObject it."
            ) from None

    return claims_in(read_location(location, read_s3), location)
