"""What the user's ``terraform state rm`` does to a local v4 state, for rehearsals that
release a Terraform-built cluster as its operator would (no terraform binary here).

Terraform removes each named resource instance (``module.m.type.name[key]``, the key an
integer for ``count`` and a quoted string for ``for_each``), a resource left with none
going too, and bumps the state's serial (hashicorp/terraform ``internal/command/
state_rm.go``). An address the state does not hold fails the command, as Terraform's.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any


def instance_address(resource: dict[str, Any], instance: dict[str, Any]) -> str:
    """The address Terraform names one instance of ``resource`` by."""
    module = f"{resource['module']}." if resource.get("module") else ""
    data = "data." if resource.get("mode") == "data" else ""
    address = f"{module}{data}{resource['type']}.{resource['name']}"
    if "index_key" in instance:
        address += f"[{json.dumps(instance['index_key'])}]"
    return address


def state_rm(state: Path, addresses: list[str]) -> None:
    """``terraform state rm ADDRESS...`` on the local state at ``state``."""
    document = json.loads(state.read_text())
    wanted = set(addresses)
    kept_resources = []
    for resource in document["resources"]:
        instances = []
        for instance in resource["instances"]:
            address = instance_address(resource, instance)
            if address in wanted:
                wanted.discard(address)
            else:
                instances.append(instance)
        if instances:
            kept_resources.append({**resource, "instances": instances})
    if wanted:
        raise AssertionError(f"terraform state rm: no such address {sorted(wanted)[0]}")
    document["resources"] = kept_resources
    document["serial"] = int(document["serial"]) + 1
    state.write_text(json.dumps(document, indent=2) + "\n")


def run_state_rm_commands(state: Path, commands: list[str]) -> int:
    """Run each ``terraform state rm …`` command of ``commands``; how many addresses."""
    count = 0
    for command in commands:
        words = shlex.split(command)
        assert words[:3] == ["terraform", "state", "rm"], command
        state_rm(state, words[3:])
        count += len(words) - 3
    return count
