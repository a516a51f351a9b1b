"""The node bridge: moto's running instances become kwok-managed Nodes.

It does what the AWS cloud controller and the kubelet do for a real instance. Every
*running* instance tagged for the cluster (``kubernetes.io/cluster/<name>`` or the
legacy ``KubernetesCluster=<name>``) gets a Node named after its private DNS name,
with ``spec.providerID = aws:///<az>/<instance-id>`` (how kubeshift maps instances to
nodes, :mod:`automation.aws.nodes`), the cloud's zone/region/instance-type labels,
``InternalIP`` = the private IP, a pod CIDR, and the labels and taints its kubelet
would register from the user data (``--node-labels`` / ``--register-with-taints``,
read from the launch template version the instance was launched from). A node kops
boots (its script names a kops instance group) registers as kops makes it: the
group's taints and labels, as its nodeup configuration in kops's state store gives
them, plus kops-controller's instance-group and node-role labels. An instance joins
only when its image's bootstrap would start a kubelet (:mod:`automation.sandbox.boots`:
nodeup finds its group's file under the hash its script names; kubeshift's node.env
needs an image built to read it); one that would not is left out, and why is logged. Instances
tagged as control-plane members get the role label and ``NoSchedule`` taint (what
kops-controller adds). A Node whose instance stopped running or disappeared is
deleted, as the cloud node-lifecycle controller does.

An instance joins the cluster whose API server its user data names (``API_ENDPOINT``),
as a kubelet does: when two clusters share the cluster tag (cni-swap's mirror is the
primary's cluster with suffixed names), each bridge is given the API hosts it serves
or the ones it leaves to another bridge.

Nodes are created once and never updated: after registration the cluster owns them
(kubeshift taints and cordons them). Each bridged Node carries :data:`BRIDGE_LABEL`
= the cluster name, so a bridge only ever deletes its own Nodes.

This module is the bridge's passes; what the kubelet reads from the user data is in
:mod:`automation.sandbox.kubelet_flags`, and the Node an instance becomes in
:mod:`automation.sandbox.instance_nodes`.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import re
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError
from kubernetes import client

from automation.aws.nodes import LEGACY_CLUSTER_TAG, cluster_tag_key, instance_id_from_provider_id
from automation.core.waiting import summarize
from automation.kube.clients import list_all
from automation.sandbox.boots import Boots
from automation.sandbox.instance_nodes import Instance, node_manifest
from automation.sandbox.kubelet_flags import (
    api_host,
    kubelet_flags,
    kubelet_refuses,
    registered_flags,
    user_data_text,
)
from automation.sandbox.pacing import SLOWEST_SECONDS, Pace

if TYPE_CHECKING:
    from mypy_boto3_ec2 import EC2Client

log = logging.getLogger("kubeshift.sandbox.bridge")

MANAGED_LABEL = ("kwok.x-k8s.io/managed", "true")
"""The label the sandbox's kwok selects the nodes it plays kubelet for by."""
BRIDGE_LABEL = "sandbox.kubeshift.io/node-bridge"
LT_ID_TAG = "aws:ec2launchtemplate:id"
LT_VERSION_TAG = "aws:ec2launchtemplate:version"
DEFAULT_POD_CIDR = "10.64.0.0/10"  # the sandbox kwok's --cidr
REQUEST_TIMEOUT = 30.0


@dataclass(frozen=True)
class BridgeReport:
    """What one pass changed: Nodes added and removed, instances left for the next pass."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    deferred: tuple[str, ...] = ()
    """``<instance-id>: <why>`` for instances that got no Node this pass."""

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed)

    def __str__(self) -> str:
        parts = [
            f"{verb} {len(names)} node(s): {summarize(names)}"
            for verb, names in (("added", self.added), ("removed", self.removed))
            if names
        ]
        if self.deferred:
            parts.append(f"deferred {len(self.deferred)}: {summarize(self.deferred, 3)}")
        return "; ".join(parts) or "no change"


def label_value(text: str) -> str:
    """``text`` when it is a valid label value, else a stable short digest of it."""
    if re.fullmatch(r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?", text):
        return text
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _instance_of(node: Mapping[str, Any]) -> str | None:
    return instance_id_from_provider_id((node.get("spec") or {}).get("providerID"))


class NodeBridge:
    """Keeps one cluster's Nodes in step with the cluster's running EC2 instances."""

    def __init__(
        self,
        ec2_client: EC2Client,
        kube_api_client: client.ApiClient,
        cluster_name: str,
        *,
        managed_label: tuple[str, str] = MANAGED_LABEL,
        pod_cidr: str | None = DEFAULT_POD_CIDR,
        node_cidr_prefix: int = 24,
        api_hosts: frozenset[str] = frozenset(),
        foreign_api_hosts: frozenset[str] = frozenset(),
        boots: Boots | None = None,
    ) -> None:
        """``api_hosts``: join only instances whose user data names one of these API
        hosts; ``foreign_api_hosts``: leave those to another cluster's bridge.
        ``boots``: join only instances whose image's bootstrap starts a kubelet, with
        the labels it reads (the sandbox always gives it; without it, for tests of
        what a Node looks like, every script's kubelet starts)."""
        self._ec2 = ec2_client
        self._core = client.CoreV1Api(kube_api_client)
        self.cluster = cluster_name
        self._owner = label_value(cluster_name)
        self._extra_labels = {managed_label[0]: managed_label[1], BRIDGE_LABEL: self._owner}
        self._pod_cidr = ipaddress.ip_network(pod_cidr) if pod_cidr else None
        self._prefix = node_cidr_prefix
        self._template_data: dict[tuple[str, str], str | None] = {}
        self._instance_data: dict[str, str | None] = {}
        self._warned: set[str] = set()
        self._api_hosts = api_hosts
        self._foreign_api_hosts = foreign_api_hosts
        self._boots = boots

    # -- one pass --------------------------------------------------------------------------
    def sync(self) -> BridgeReport:
        """Create Nodes for new running instances, delete Nodes of gone ones. Idempotent."""
        instances = {i.instance_id: i for i in self.running_instances() if self._joins(i)}
        ours = self._bridged_nodes()
        removed = []
        for name, node in sorted(ours.items()):
            iid = _instance_of(node)
            if iid not in instances or instances[iid].private_dns_name != name:
                self._delete(name)
                removed.append(name)
                del ours[name]
        bridged = {_instance_of(node) for node in ours.values()}
        added: list[str] = []
        deferred: list[str] = []
        taken: set[str] | None = None
        for iid in sorted(set(instances) - bridged):
            if taken is None:
                taken = self._pod_cidrs_in_use()
            problem = self._register(instances[iid], taken)
            if problem:
                deferred.append(f"{iid}: {problem}")
            else:
                added.append(instances[iid].private_dns_name)
        self._forget(set(instances))
        return BridgeReport(tuple(added), tuple(removed), tuple(deferred))

    def _joins(self, instance: Instance) -> bool:
        """Whether ``instance``'s kubelet would join this bridge's cluster."""
        if not self._api_hosts and not self._foreign_api_hosts:
            return True
        try:
            host = api_host(user_data_text(self.user_data(instance)))
        except ClientError:  # unreadable yet: registration retries and says why
            return not self._api_hosts
        if self._api_hosts:
            return host in self._api_hosts
        return host not in self._foreign_api_hosts

    def _register(self, instance: Instance, taken: set[str]) -> str:
        """Register one instance's Node, as its kubelet would; why not, or ``""``."""
        if not instance.private_dns_name or not instance.private_ip:
            return "no private DNS name or IP yet"
        try:
            text = user_data_text(self.user_data(instance))
        except ClientError as exc:
            return f"user data unreadable ({exc})"
        kubelet = None
        if self._boots is not None:
            kubelet = self._boots.kubelet(instance.image_id, text)
            if kubelet.problem:
                return f"no kubelet starts: {kubelet.problem}"
        flags = registered_flags(text, instance.tags, kubelet)
        refused = ", ".join(kubelet_refuses(kubelet_flags(text).labels))
        if refused and refused not in self._warned:
            self._warned.add(refused)
            log.warning(
                "%s: user data sets %s with --node-labels; a real kubelet refuses to start "
                "with these (a controller must apply them); the bridge applies them anyway",
                instance.instance_id,
                refused,
            )
        cidr = self._next_cidr(taken)
        return self._create(
            node_manifest(instance, flags, pod_cidr=cidr, extra_labels=self._extra_labels)
        )

    def run(self, stop: threading.Event, interval: float = 1.0, duty: float = 0.3) -> None:
        """``sync`` until ``stop``; errors are logged, never fatal.

        A pass starts ``interval`` seconds after the last one ended when it changed
        something or left instances for later, up to four times that while passes find
        nothing to do (:mod:`automation.sandbox.pacing`), and later still when the last
        pass was long: the bridge spends at most ``duty`` of one core. With a few
        hundred instances a pass takes seconds (moto's responses are slow to build),
        and passing every second would starve the control plane it stands beside.
        """
        failing = ""
        deferred: tuple[str, ...] = ()
        pace = Pace(fastest=interval, slowest=max(interval, SLOWEST_SECONDS))
        log.info("node bridge for cluster %s started", self.cluster)
        while not stop.is_set():
            began = time.monotonic()
            busy = True  # a failed pass is retried soon
            try:
                report = self.sync()
            except Exception as exc:
                message = f"{type(exc).__name__}: {exc}"
                if message != failing:
                    log.warning(
                        "node bridge %s: pass failed, will retry: %s", self.cluster, message
                    )
                    log.debug("node bridge failure", exc_info=True)
                failing = message
            else:
                if failing:
                    log.info("node bridge %s: recovered", self.cluster)
                    failing = ""
                if report.changed or report.deferred != deferred:
                    log.info("node bridge %s: %s", self.cluster, report)
                deferred = report.deferred
                busy = report.changed or bool(report.deferred)
            spent = time.monotonic() - began
            stop.wait(max(pace.after(busy), spent * (1 - duty) / duty))
        log.info("node bridge for cluster %s stopped", self.cluster)

    # -- EC2 -------------------------------------------------------------------------------
    def running_instances(self) -> Iterator[Instance]:
        """One paginated call: running instances with either cluster tag key."""
        filters: Any = [
            {"Name": "tag-key", "Values": [cluster_tag_key(self.cluster), LEGACY_CLUSTER_TAG]},
            {"Name": "instance-state-name", "Values": ["running"]},
        ]
        for page in self._ec2.get_paginator("describe_instances").paginate(Filters=filters):
            for reservation in page.get("Reservations", []):
                for raw in reservation.get("Instances", []):
                    instance = Instance.from_ec2(raw)  # type: ignore[arg-type]
                    tags = instance.tags
                    if cluster_tag_key(self.cluster) in tags or (
                        tags.get(LEGACY_CLUSTER_TAG) == self.cluster
                    ):
                        yield instance

    def user_data(self, instance: Instance) -> str | None:
        """The launch template version's user data (cached), else the instance's own."""
        template = instance.tags.get(LT_ID_TAG), instance.tags.get(LT_VERSION_TAG)
        if template[0] and template[1]:
            key = (template[0], template[1])
            if key not in self._template_data:
                self._template_data[key] = self._template_user_data(*key)
            if self._template_data[key] is not None:
                return self._template_data[key]
        if instance.instance_id not in self._instance_data:
            reply = self._ec2.describe_instance_attribute(
                InstanceId=instance.instance_id, Attribute="userData"
            )
            self._instance_data[instance.instance_id] = (reply.get("UserData") or {}).get("Value")
        return self._instance_data[instance.instance_id]

    def _template_user_data(self, template_id: str, version: str) -> str | None:
        try:
            reply = self._ec2.describe_launch_template_versions(
                LaunchTemplateId=template_id, Versions=[version]
            )
        except ClientError as exc:
            if "NotFound" in exc.response.get("Error", {}).get("Code", ""):
                return None  # template deleted since launch: read the instance's copy
            raise
        versions = reply.get("LaunchTemplateVersions") or [{}]
        return (versions[0].get("LaunchTemplateData") or {}).get("UserData")

    def _forget(self, running: set[str]) -> None:
        for iid in set(self._instance_data) - running:
            del self._instance_data[iid]

    # -- Kubernetes ------------------------------------------------------------------------
    def _bridged_nodes(self) -> dict[str, dict[str, Any]]:
        items = list_all(
            self._core.list_node,
            action=f"list the nodes bridged for {self.cluster}",
            label_selector=f"{BRIDGE_LABEL}={self._owner}",
            _request_timeout=REQUEST_TIMEOUT,
        )["items"]
        return {n["metadata"]["name"]: n for n in items}

    def _pod_cidrs_in_use(self) -> set[str]:
        items = list_all(
            self._core.list_node, action="list node pod CIDRs", _request_timeout=REQUEST_TIMEOUT
        )["items"]
        return {c for n in items for c in (n.get("spec") or {}).get("podCIDRs") or []}

    def _next_cidr(self, taken: set[str]) -> str | None:
        if self._pod_cidr is None:
            return None
        for subnet in self._pod_cidr.subnets(new_prefix=self._prefix):
            if str(subnet) not in taken:
                taken.add(str(subnet))
                return str(subnet)
        log.warning("pod CIDR %s has no free /%d left", self._pod_cidr, self._prefix)
        return None

    def _create(self, body: Any) -> str:
        """Create the Node (a plain manifest); the reason it was not created, or ``""``."""
        name = body["metadata"]["name"]
        try:
            self._core.create_node(body, _preload_content=False, _request_timeout=REQUEST_TIMEOUT)
        except client.ApiException as exc:
            if exc.status != 409:
                raise
            return f"node name {name} is taken by a node this bridge does not own"
        return ""

    def _delete(self, name: str) -> None:
        try:
            self._core.delete_node(name, _preload_content=False, _request_timeout=REQUEST_TIMEOUT)
        except client.ApiException as exc:
            if exc.status != 404:
                raise
