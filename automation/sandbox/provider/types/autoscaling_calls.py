"""The Auto Scaling calls both ``aws:autoscaling`` types make: retries on a given error,
waits, finding a group, and waiting for a group's capacity.

As Terraform does, a group's create waits until the desired capacity is ``InService``
(``wait_for_capacity_timeout``, 10 minutes); moto launches and terminates instances at
once, so every wait ends at its first poll. The sandbox's world builder waits for its
own groups the same way (:func:`wait_capacity`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from botocore.exceptions import ClientError

from automation.sandbox.provider.model import Aws, NotFound

T = TypeVar("T")
Raw = dict[str, Any]

TIMEOUT = 600.0  # Terraform's wait_for_capacity_timeout and delete timeout (10m)
POLL = 2.0


def code_and_message(err: ClientError) -> tuple[str, str]:
    error = err.response.get("Error", {})
    return str(error.get("Code", "")), str(error.get("Message", ""))


def retry(call: Callable[[], T], retryable: Callable[[str, str], bool], timeout: float) -> T:
    """``call()``, again while AWS answers an error ``retryable(code, message)`` accepts."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except ClientError as err:
            if not retryable(*code_and_message(err)) or time.monotonic() > deadline:
                raise
        time.sleep(POLL)


def wait(fetch: Callable[[], T], done: Callable[[T], bool], what: str) -> T:
    """Poll ``fetch()`` until ``done`` holds for what it returns."""
    deadline = time.monotonic() + TIMEOUT
    while not done(value := fetch()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: still waiting after {TIMEOUT:.0f}s")
        time.sleep(POLL)
    return value


def describe_group(aws: Aws, name: str) -> Raw:
    found = aws.client("autoscaling").describe_auto_scaling_groups(AutoScalingGroupNames=[name])
    if not found["AutoScalingGroups"]:
        raise NotFound(f"auto scaling group {name} not found")
    return dict(found["AutoScalingGroups"][0])


def in_service(group: Raw) -> bool:
    """Whether the group's healthy ``InService`` capacity is its desired capacity."""
    ready = sum(
        int(i.get("WeightedCapacity") or 1)
        for i in group["Instances"]
        if i["LifecycleState"] == "InService" and i["HealthStatus"] == "Healthy"
    )
    return ready == group["DesiredCapacity"]


def wait_capacity(aws: Aws, name: str) -> None:
    """Wait until the group ``name`` has its desired capacity healthy and in service."""
    wait(lambda: describe_group(aws, name), in_service, f"auto scaling group {name} capacity")
