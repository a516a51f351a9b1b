"""The sandbox's moto server answers concurrent requests as consistently as AWS."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from automation.sandbox.moto_gaps.ec2 import addresses_taken_once
from automation.sandbox.moto_server import OneRequestAtATime
from tests.support.moto_fixtures import MotoServer

ADDRESS = "10.5.0.10"
CALLERS = 4


def test_one_request_is_answered_at_a_time_whole() -> None:
    inside, most = 0, 0
    guard = threading.Lock()

    def app(environ: dict[str, Any], start: Callable[..., Any]) -> Iterator[bytes]:
        nonlocal inside, most
        with guard:
            inside += 1
            most = max(most, inside)
        start("200 OK", [])
        time.sleep(0.05)
        yield b"made "
        time.sleep(0.05)  # the body is made before the next request starts
        with guard:
            inside -= 1
        yield b"whole"

    served = OneRequestAtATime(app)
    bodies: list[list[bytes]] = []
    callers = [
        threading.Thread(target=lambda: bodies.append(served({}, lambda *_: None)))
        for _ in range(CALLERS)
    ]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert most == 1
    assert bodies == [[b"made ", b"whole"]] * CALLERS


@pytest.fixture
def gathered_creation(monkeypatch: pytest.MonkeyPatch) -> Callable[[float], None]:
    """``gather(patience)``: moto's address check patched in, and each creation past it
    waits until every caller's has come as far, or ``patience`` seconds have passed.
    Callers that can be answered together are then sure to pass the check together,
    however the machine schedules their threads."""
    from moto.ec2.models.elastic_network_interfaces import NetworkInterfaceBackend

    def gather(patience: float) -> None:
        made, arrived = NetworkInterfaceBackend.create_network_interface, [0]
        together = threading.Condition()

        def after_the_others(self: Any, *args: Any, **kwargs: Any) -> Any:
            with together:
                arrived[0] += 1
                together.notify_all()
                together.wait_for(lambda: arrived[0] >= CALLERS, timeout=patience)
            return made(self, *args, **kwargs)

        monkeypatch.setattr(NetworkInterfaceBackend, "create_network_interface", after_the_others)
        addresses_taken_once()

    return gather


def _claims(endpoint: str, subnet: str) -> list[str]:
    """``CALLERS`` requests at once for one address: what each was answered."""
    ec2 = boto3.client("ec2", endpoint_url=endpoint)
    start, answers = threading.Barrier(CALLERS), []

    def claim() -> None:
        start.wait()
        try:
            ec2.create_network_interface(SubnetId=subnet, PrivateIpAddress=ADDRESS)
            answers.append("made")
        except ClientError as refused:
            answers.append(str(refused.response["Error"]["Code"]))

    callers = [threading.Thread(target=claim) for _ in range(CALLERS)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    return sorted(answers)


def _subnet(moto: MotoServer) -> str:
    ec2 = moto.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.5.0.0/16")["Vpc"]["VpcId"]
    return str(ec2.create_subnet(VpcId=vpc, CidrBlock="10.5.0.0/24")["Subnet"]["SubnetId"])


def test_an_address_asked_for_at_once_is_given_once(
    moto: MotoServer, gathered_creation: Callable[[float], None]
) -> None:
    gathered_creation(1.0)  # one request at a time: the first waits alone, then makes it
    answers = _claims(moto.endpoint_url, _subnet(moto))
    assert answers == ["InvalidIPAddress.InUse"] * (CALLERS - 1) + ["made"]


def test_motos_own_threaded_server_gives_it_to_every_caller(
    moto: MotoServer, gathered_creation: Callable[[float], None]
) -> None:
    from moto.server import ThreadedMotoServer

    gathered_creation(60.0)  # a deadline against a hang; all four arrive long before
    subnet = _subnet(moto)  # the backends are the process's: both servers share them
    lenient = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    lenient.start()
    try:
        host, port = lenient.get_host_and_port()
        answers = _claims(f"http://{host}:{port}", subnet)
    finally:
        lenient.stop()
    assert answers == ["made"] * CALLERS
