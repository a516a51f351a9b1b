"""A gate rides out an AWS outage: moto behind a proxy that refuses connections for a while."""

from __future__ import annotations

import threading

import pytest

from automation.aws.clients import AwsAccess, AwsClients
from automation.aws.targets import targets_pending
from automation.core.waiting import Pending, wait_until
from tests.support.moto_fixtures import MotoServer
from tests.support.moto_world import make_network, make_target_group, run_instances
from tests.support.tcp_proxy import TcpProxy, upstream_of

OUTAGE = 2.5  # seconds the proxy refuses connections
DEADLINE = 20.0  # the gate's timeout, well past the outage


def _proxy_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("tcp-proxy")]


@pytest.mark.moto
def test_a_gate_rides_out_an_outage_until_aws_answers_again(
    moto: MotoServer, aws: AwsClients
) -> None:
    net = make_network(aws.ec2)
    instance_ids = [i["InstanceId"] for i in run_instances(aws.ec2, net, 2)]
    group = make_target_group(aws.elbv2, net.vpc_id, "web-new", instance_ids)
    seen: list[Pending] = []

    with TcpProxy(upstream_of(moto.endpoint_url)) as proxy:
        # kubeshift's own client through the proxy: one attempt, short timeouts, so
        # botocore's retries do not hide the outage from the gate.
        access = AwsAccess(
            region=moto.region,
            endpoint_url=proxy.url,
            connect_timeout=1,
            read_timeout=5,
            max_attempts=1,
        )
        elbv2 = AwsClients(access).elbv2
        proxy.pause()
        back_online = threading.Timer(OUTAGE, proxy.resume)
        back_online.start()
        try:
            result = wait_until(
                "healthy targets in web-new",
                lambda: targets_pending(elbv2, [group]),
                timeout=DEADLINE,
                interval=0.2,
                on_progress=lambda _what, status, _left: seen.append(status),
            )
        finally:
            back_online.cancel()
            back_online.join()

    assert result.done
    first, last = seen[0], seen[-1]
    assert not first.done, "the first poll should have met the outage"
    [error] = first.items
    assert proxy.url in error  # the pending item names the endpoint that was unreachable
    assert last.done
    assert _proxy_threads() == []
