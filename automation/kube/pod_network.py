"""Pod-to-pod reachability across nodes, after a CNI swap (seed 000's unstable network).

A node can run a Ready pod of the new CNI and still not carry traffic: seed 000 found
nodes whose network stayed broken after the roll. So after the CNI gate, a probe
DaemonSet runs one pod per node — agnhost ``netexec``, the image Kubernetes' own e2e
network tests use — and each probe pod is asked, through the API server's pod proxy,
to dial the probe pod on the next node (``/dial?host=…``): a ring, so every node is
tried as source and as destination in N requests. A failed hop says one of its ends
is broken; each node on one is then tried both ways against the most trusted peers,
and the nodes failing with most of them are named — the nodes to replace.

How a probe is asked is a :data:`Dialer`: through the API server in production; kwok
nodes have no network, so tests give answers they control to real probe pods.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from automation.core.waiting import Pending, summarize
from automation.kube.clients import KubeClients, list_all
from automation.kube.manifests import ApplyReport, apply_manifest
from automation.kube.pod_network_check import PROBE_LABEL, PodNetworkCheck
from automation.kube.pods import pod_ready

PROBE_CONTAINER = "netexec"


def probe_daemonset(check: PodNetworkCheck) -> dict[str, Any]:
    """The probe DaemonSet: netexec on every node, tolerating every taint."""
    labels = {PROBE_LABEL: check.name}
    container = {
        "name": PROBE_CONTAINER,
        "image": check.image,
        "args": ["netexec", f"--http-port={check.port}"],
        "ports": [{"containerPort": check.port, "protocol": "TCP"}],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": check.port}},
        "resources": {"requests": {"cpu": "5m", "memory": "16Mi"}},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": check.name, "namespace": check.namespace, "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"tolerations": [{"operator": "Exists"}], "containers": [container]},
            },
        },
    }


def install_probe(clients: KubeClients, check: PodNetworkCheck, *, dry_run: bool) -> ApplyReport:
    """Apply the probe DaemonSet (server-side, idempotent)."""
    return apply_manifest(clients, [probe_daemonset(check)], dry_run=dry_run)


@dataclass(frozen=True)
class ProbePod:
    """One Ready probe pod: where it runs and the address its neighbour dials."""

    name: str
    node: str
    ip: str


@dataclass(frozen=True)
class DialAnswer:
    """What a probe pod said when asked to dial another (``reached`` or why not)."""

    reached: bool
    detail: str = ""


Dialer = Callable[[ProbePod, ProbePod], DialAnswer]
"""Ask ``source`` to dial ``destination``'s probe."""


def api_dialer(clients: KubeClients, check: PodNetworkCheck) -> Dialer:
    """Ask through the API server's pod proxy, as ``kubectl get --raw`` would."""

    def dial(source: ProbePod, destination: ProbePod) -> DialAnswer:
        query = [
            ("host", destination.ip), ("port", str(check.port)), ("request", "hostname"),
            ("protocol", "http"), ("tries", "1"),
        ]  # fmt: skip
        api = clients.api_client
        method, url, headers, body, post = api.param_serialize(
            "GET",
            "/api/v1/namespaces/{namespace}/pods/{name}/proxy/dial",
            path_params={"namespace": check.namespace, "name": f"{source.name}:{check.port}"},
            query_params=query,
            auth_settings=["BearerToken"],
        )
        try:
            response = api.call_api(
                method, url, headers, body, post, _request_timeout=check.dial_timeout * 2
            )
            data = response.read()
        except Exception as exc:  # a timeout or a dropped connection: no answer
            return DialAnswer(False, f"no answer from {source.name} ({type(exc).__name__})")
        if response.status != 200:
            return DialAnswer(False, f"no answer from {source.name} ({response.status})")
        return read_dial_answer(data or b"", destination)

    return dial


def read_dial_answer(body: bytes | str, destination: ProbePod) -> DialAnswer:
    """netexec's ``/dial`` JSON: ``{"responses": [hostnames]}`` or ``{"errors": [...]}``."""
    try:
        answer = json.loads(body or b"{}")
    except ValueError:
        return DialAnswer(False, "the probe's answer is not JSON")
    responses = [str(r) for r in answer.get("responses") or []]
    if destination.name in responses:
        return DialAnswer(True)
    errors = [str(e) for e in answer.get("errors") or []]
    if errors:
        return DialAnswer(False, errors[0][:160])
    return DialAnswer(False, f"answered by {', '.join(responses) or 'nobody'}")


def probe_pods(
    clients: KubeClients, check: PodNetworkCheck, node_selector: str | None
) -> tuple[list[ProbePod], list[str]]:
    """The Ready probe pod of each selected node, and the nodes without one."""
    kwargs: dict[str, Any] = {"label_selector": node_selector} if node_selector else {}
    nodes = list_all(clients.core.list_node, action="list nodes", **kwargs)["items"]
    pods = list_all(
        clients.core.list_namespaced_pod, check.namespace, label_selector=check.selector,
        action=f"list the pods of {check.namespace}/{check.name}",
    )["items"]  # fmt: skip
    ready: dict[str, ProbePod] = {}
    for pod in pods:
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        if pod_ready(pod) and status.get("podIP") and spec.get("nodeName"):
            ready[spec["nodeName"]] = ProbePod(pod["metadata"]["name"], spec["nodeName"],
                                               status["podIP"])  # fmt: skip
    names = sorted(n["metadata"]["name"] for n in nodes)
    return [ready[n] for n in names if n in ready], [n for n in names if n not in ready]


@dataclass(frozen=True)
class RingResult:
    """Each failed dial, and the nodes to blame."""

    failures: tuple[str, ...]
    suspects: tuple[str, ...]
    tried: int


def try_ring(pods: Sequence[ProbePod], dial: Dialer, peers: int = 3) -> RingResult:
    """Each pod dials the next node's pod; then each node on a failed hop is tried both
    ways against up to ``peers`` others — those on the fewest failed hops first — and
    named when it fails with more than half of them.

    A failed hop only says that one of its two ends is broken; the second round says
    which. When half the nodes or more are broken the answer blurs, and more nodes are
    named than are broken.
    """
    if len(pods) < 2:
        return RingResult((), (), len(pods))
    failures: list[str] = []

    def reaches(source: ProbePod, destination: ProbePod) -> bool:
        answer = dial(source, destination)
        if not answer.reached:
            failures.append(f"{source.node} -> {destination.node}: {answer.detail}")
        return answer.reached

    failed_hops = dict.fromkeys((p.node for p in pods), 0)
    for index, source in enumerate(pods):
        destination = pods[(index + 1) % len(pods)]
        if not reaches(source, destination):
            failed_hops[source.node] += 1
            failed_hops[destination.node] += 1
    if not failures:
        return RingResult((), (), len(pods))
    by_trust = sorted(pods, key=lambda p: (failed_hops[p.node], p.node))
    suspects = []
    for pod in (p for p in pods if failed_hops[p.node]):
        chosen = [p for p in by_trust if p.node != pod.node][:peers]
        failed = sum(1 for peer in chosen if not (reaches(pod, peer) and reaches(peer, pod)))
        if failed * 2 > len(chosen):
            suspects.append(pod.node)
    return RingResult(tuple(failures), tuple(sorted(suspects)), len(pods))


def pod_network_reaches_every_node(
    clients: KubeClients,
    check: PodNetworkCheck,
    node_selector: str | None,
    dial: Dialer | None = None,
    advice: str = "replace the named nodes with `kubeshift replace-nodes`",
) -> Pending:
    """Gate: every selected node has a Ready probe pod, and the ring of dials holds."""
    pods, without = probe_pods(clients, check, node_selector)
    if not pods and not without:
        return Pending.of([f"no node matches {node_selector or 'any'} to probe"])
    if without:
        return Pending.of(
            [f"node {n}: no Ready {check.name} pod" for n in without],
            f"{len(pods)}/{len(pods) + len(without)} nodes run a Ready probe",
        )
    ring = try_ring(pods, dial or api_dialer(clients, check))
    if not ring.failures:
        return Pending.of([], f"pods reach each other across all {ring.tried} nodes")
    named = [f"node {n}: pod network broken" for n in ring.suspects] or [
        "pod network: dials failed, but no node failed with most of its peers (a flap?)"
    ]
    return Pending.of(
        named,
        f"{len(ring.failures)} dial(s) failed ({summarize(ring.failures, 3)}); {advice}",
    )
