"""What Terraform records of the modules' world: its v4 state file.

Each resource instance the world makes is recorded as Terraform would: under its module
path, type and name, its ``index_key`` where the module makes several (``count`` an
integer, ``for_each`` a string), with the ``id`` (and ``arn``) the provider reads back
(hashicorp/terraform ``internal/states/statefile/version4.go``). ``kubeshift adopt``
reads it back (``automation.aws.terraform_state``) to name what Terraform still manages.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

PROVIDER = 'provider["registry.terraform.io/hashicorp/aws"]'
TERRAFORM_VERSION = "1.9.8"


@dataclass(frozen=True)
class Managed:
    """One resource instance a module manages."""

    module: str
    """The module's name (``control-plane``), its address ``module.<name>``."""
    type: str
    """Terraform's type (``aws_autoscaling_group``)."""
    name: str
    """The resource's name in the module (``this``)."""
    id: str
    key: int | str | None = None
    arn: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)


def state_file(managed: Iterable[Managed], lineage: str | None = None) -> str:
    """The v4 state recording ``managed``, instances of one resource together."""
    resources: dict[tuple[str, str, str], dict[str, Any]] = {}
    for item in managed:
        resource = resources.setdefault((item.module, item.type, item.name), {
            "module": f"module.{item.module}", "mode": "managed", "type": item.type,
            "name": item.name, "provider": PROVIDER, "instances": [],
        })  # fmt: skip
        attributes = {**item.attributes, "id": item.id}
        if item.arn:
            attributes["arn"] = item.arn
        instance: dict[str, Any] = {"schema_version": 0, "attributes": attributes}
        if item.key is not None:
            instance["index_key"] = item.key
        resource["instances"].append(instance)
    state = {
        "version": 4,
        "terraform_version": TERRAFORM_VERSION,
        "serial": 1,
        "lineage": lineage or str(uuid.uuid4()),
        "outputs": {},
        "resources": list(resources.values()),
        "check_results": None,
    }
    return json.dumps(state, indent=2) + "\n"
