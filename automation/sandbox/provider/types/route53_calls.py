"""The Route53 calls and names hosted zones and record sets both use: a change batch
waited on until it is ``INSYNC`` everywhere, a zone's name, and names compared as
Route53 compares them.

Record names are case-insensitive and compared without their trailing dot; Route53
answers a leading ``*`` label as ``\\052``. Waits follow the Terraform AWS provider's
(its 30-minute timeout), so the calls are right for AWS too; against moto every change
is in sync at once.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from botocore.exceptions import ClientError

from automation.sandbox.provider.model import NotFound

COMMENT = "Managed by Pulumi"
SYNC_TIMEOUT = 30 * 60.0  # Terraform's default create/update/delete timeout


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def dns_name(name: str) -> str:
    """Lower case, no trailing dot, ``\\052`` back to ``*`` (Route53's escape for it)."""
    name = name.strip().rstrip(".").lower()
    return "*" + name[4:] if name.startswith("\\052") else name


def wait_insync(r53: Any, info: Mapping[str, Any]) -> None:
    """Wait for a Route53 change to reach every name server, as Terraform does."""
    deadline = time.monotonic() + SYNC_TIMEOUT
    while info.get("Status") != "INSYNC":
        if time.monotonic() > deadline:
            raise TimeoutError(f"Route53 change {info.get('Id')} still {info.get('Status')}")
        time.sleep(2)
        info = r53.get_change(Id=info["Id"])["ChangeInfo"]


def apply_changes(r53: Any, zone_id: str, changes: list[dict[str, Any]], comment: str) -> None:
    answer = r53.change_resource_record_sets(
        HostedZoneId=zone_id, ChangeBatch={"Comment": comment, "Changes": changes}
    )
    wait_insync(r53, answer["ChangeInfo"])


def hosted_zone_name(r53: Any, zone_id: str) -> str:
    """The zone's name; NotFound when the zone is gone."""
    try:
        return str(r53.get_hosted_zone(Id=zone_id)["HostedZone"]["Name"])
    except ClientError as exc:
        if error_code(exc) == "NoSuchHostedZone":
            raise NotFound(zone_id) from exc
        raise
