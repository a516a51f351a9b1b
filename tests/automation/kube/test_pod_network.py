"""Pod-to-pod reachability after the CNI swap: real probe pods, answers the test controls.

The probe DaemonSet is placed by the real DaemonSet controller and its pods run on
kwok nodes, which have no network: the ring's logic is driven by a dialer whose
answers the test decides. The API server's pod proxy — the production dialer — is
exercised for real against pods whose address is this machine's, where a small HTTP
server answers netexec's ``/dial`` as the test says.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from kubernetes.client import CoreV1Api

from automation.kube.clients import KubeClients
from automation.kube.pod_network import (
    DialAnswer,
    ProbePod,
    RingResult,
    api_dialer,
    install_probe,
    pod_network_reaches_every_node,
    probe_daemonset,
    probe_pods,
    try_ring,
)
from automation.kube.pod_network_check import PodNetworkCheck
from tests.automation.kube.conftest import GROUP_LABEL, Fleet
from tests.support.waiting import eventually

PODS = [ProbePod(f"probe-{n}", n, f"10.1.0.{i}") for i, n in enumerate("abcdef", 1)]


def _broken(*nodes: str) -> Any:
    def dial(source: ProbePod, destination: ProbePod) -> DialAnswer:
        if source.node in nodes or destination.node in nodes:
            return DialAnswer(False, "timeout")
        return DialAnswer(True)

    return dial


def test_a_ring_then_clean_peers_name_only_the_broken_nodes() -> None:
    assert try_ring(PODS, _broken()) == RingResult((), (), 6)
    ring = try_ring(PODS, _broken("c"))
    assert ring.suspects == ("c",)  # b and d, on its failed hops, reach clean peers
    assert ring.failures[:2] == ("b -> c: timeout", "c -> d: timeout")
    assert try_ring(PODS, _broken("a", "c")).suspects == ("a", "c")


def test_a_node_that_only_sends_badly_is_named_alone() -> None:
    def one_way(source: ProbePod, destination: ProbePod) -> DialAnswer:
        return DialAnswer(source.node != "a", "refused")

    assert try_ring(PODS, one_way).suspects == ("a",)


def test_with_no_clean_node_every_node_on_a_failed_hop_is_named() -> None:
    assert try_ring(PODS[:4], _broken("a", "c")).suspects == ("a", "b", "c", "d")


def test_the_probe_tolerates_every_taint_and_serves_netexec() -> None:
    spec = probe_daemonset(PodNetworkCheck(port=9000))["spec"]["template"]["spec"]
    assert spec["tolerations"] == [{"operator": "Exists"}]
    (container,) = spec["containers"]
    assert container["args"] == ["netexec", "--http-port=9000"]


def _selector(fleet: Fleet) -> str:
    return f"{GROUP_LABEL}={fleet.group}"


@pytest.mark.controlplane
def test_the_gate_waits_for_a_probe_on_every_node_then_names_the_broken_one(
    kube: KubeClients, fleet: Fleet
) -> None:
    check = PodNetworkCheck(namespace=fleet.namespace, name="netcheck")
    pool = fleet.pool("cni", 3)
    dead = fleet.pool("nokubelet", 1, managed=False)
    assert install_probe(kube, check, dry_run=False).changed
    assert not install_probe(kube, check, dry_run=False).changed  # idempotent
    waiting = eventually(
        "three probes Ready, the kubelet-less node named",
        lambda: pod_network_reaches_every_node(kube, check, _selector(fleet), _broken()),
        until=lambda p: p.detail.startswith("3/4"),
        timeout=90,
    )
    assert waiting.items == (f"node {dead.node_names[0]}: no Ready netcheck pod",)

    fleet.pools.delete(dead)
    healthy = eventually(
        "every node probed",
        lambda: pod_network_reaches_every_node(kube, check, _selector(fleet), _broken()),
        until=lambda p: p.done,
        timeout=90,
    )
    assert healthy.detail == "pods reach each other across all 3 nodes"
    broken = pool.node_names[1]
    pending = pod_network_reaches_every_node(kube, check, _selector(fleet), _broken(broken))
    assert pending.items == (f"node {broken}: pod network broken",)
    assert "dial(s) failed" in pending.detail and "kubeshift replace-nodes" in pending.detail


# --- the API server's pod proxy, for real ------------------------------------------------


def _host_address() -> str:
    """This machine's outward IPv4 address (the API server refuses to proxy loopback)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.connect(("192.0.2.254", 9))  # no packet is sent
        return str(udp.getsockname()[0])


class _Netexec(BaseHTTPRequestHandler):
    """netexec's ``/dial``, answering as the test says; records each query."""

    answer: dict[str, Any] = {}
    asked: list[dict[str, list[str]]] = []

    def do_GET(self) -> None:
        url = urlparse(self.path)
        type(self).asked.append({"path": [url.path], **parse_qs(url.query)})
        body = json.dumps(type(self).answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture
def netexec() -> Iterator[tuple[str, int, type[_Netexec]]]:
    handler = type("Netexec", (_Netexec,), {"answer": {}, "asked": []})
    server = ThreadingHTTPServer((_host_address(), 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[0], server.server_address[1], handler
    server.shutdown()
    server.server_close()


@pytest.mark.controlplane
def test_the_api_servers_pod_proxy_carries_the_dial_and_its_answer(
    kube: KubeClients, fleet: Fleet, netexec: tuple[str, int, type[_Netexec]]
) -> None:
    address, port, server = netexec
    check = PodNetworkCheck(namespace=fleet.namespace, name="netcheck", port=port)
    pool = fleet.pool("proxied", 2, managed=False)
    install_probe(kube, check, dry_run=False)
    core = CoreV1Api(kube.api_client)

    def created() -> list[Any]:
        pods = core.list_namespaced_pod(fleet.namespace, label_selector=check.selector).items
        return [p for p in pods if p.spec.node_name in pool.node_names]

    # No kubelet runs these nodes: the test reports the pods running at this
    # machine's address, where its server stands in for netexec.
    for pod in eventually("a probe pod per node", created, until=lambda p: len(p) == 2):
        status = {
            "phase": "Running", "podIP": address, "podIPs": [{"ip": address}],
            "conditions": [{"type": "Ready", "status": "True"}],
        }  # fmt: skip
        core.patch_namespaced_pod_status(pod.metadata.name, fleet.namespace, {"status": status})
    pods, without = probe_pods(kube, check, _selector(fleet))
    assert without == [] and len(pods) == 2
    dial = api_dialer(kube, check)

    server.answer = {"responses": [p.name for p in pods]}
    assert dial(pods[0], pods[1]) == DialAnswer(True)
    (asked,) = server.asked
    assert asked["path"] == ["/dial"] and asked["host"] == [address]
    assert asked["port"] == [str(port)] and asked["request"] == ["hostname"]
    assert pod_network_reaches_every_node(kube, check, _selector(fleet)).done

    server.answer = {"errors": ["dial tcp 10.1.0.7:8080: i/o timeout"]}
    answer = dial(pods[0], pods[1])
    assert not answer.reached and "i/o timeout" in answer.detail
    pending = pod_network_reaches_every_node(kube, check, _selector(fleet))
    assert pending.items == tuple(f"node {n}: pod network broken" for n in sorted(pool.node_names))
