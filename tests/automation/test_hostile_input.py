"""Bad input, as a newcomer or a damaged disk gives it: one sentence, an exit code, no trace.

Every case runs the CLI against a scratch copy of the project (``stacks/`` plus a
stack ``t`` made from ``vpc-move-small``) and a scratch state directory, then checks:
the exit code; stderr is one ``error:`` sentence holding the expected words (the
field or file); no traceback; and nothing under the project or the state directory
was created, changed or removed (no journal, no lock, no sandbox state).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main
import yaml
from typer.testing import CliRunner

from automation.cli.app import app

REPO = Path(__file__).resolve().parents[2]
BASE_STACK = "vpc-move-small"


@dataclass
class Scratch:
    project: Path
    state: Path

    @property
    def stack_file(self) -> Path:
        return self.project / "stacks" / "Pulumi.t.yaml"

    @property
    def journal(self) -> Path:
        return self.state / "t.journal.json"

    def stack(self) -> dict[str, Any]:
        return yaml.safe_load(self.stack_file.read_text())

    def write_stack(self, document: dict[str, Any]) -> None:
        self.stack_file.write_text(yaml.safe_dump(document, sort_keys=False))

    def config(self, key: str, value: Any) -> None:
        """Set ``kubeshift:cluster.network.cidr``-style dotted paths (ints index lists)."""
        document = self.stack()
        top, *rest = key.split(".")
        node = document["config"]
        if not rest:
            node[top] = value
        else:
            node = node[top]
            for part in rest[:-1]:
                node = node[int(part)] if part.isdigit() else node[part]
            last = rest[-1]
            node[int(last) if last.isdigit() else last] = value
        self.write_stack(document)

    def runtime(self, settings: dict[str, Any]) -> None:
        self.config("kubeshift:runtime", settings)


Setup = Callable[[Scratch], None]


def _journal(body: str | bytes) -> Setup:
    def setup(s: Scratch) -> None:
        s.state.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            s.journal.write_bytes(body)
        else:
            s.journal.write_text(body)

    return setup


def _valid_journal(**changes: Any) -> str:
    record = {"phase": "baseline", "step": "update", "status": "succeeded", "attempts": 1}
    data = {
        "stack": "t",
        "scenario": "vpc-move",
        "version": 1,
        "steps": {"baseline/update": record},
    }
    data.update(changes)
    return json.dumps(data)


def _stack_bytes(data: bytes) -> Setup:
    return lambda s: s.stack_file.write_bytes(data)


def _stack_text(text: str) -> Setup:
    return lambda s: s.stack_file.write_text(text)


def _rewrites(*rules: tuple[str, str]) -> Setup:
    rewrites = [{"source": source, "target": target} for source, target in rules]
    return _runtime({"mirror": {"registry_rewrites": rewrites}})


def _set(key: str, value: Any) -> Setup:
    return lambda s: s.config(key, value)


def _runtime(settings: dict[str, Any]) -> Setup:
    return lambda s: s.runtime(settings)


def _duplicate_key(s: Scratch) -> None:
    text = s.stack_file.read_text()
    s.stack_file.write_text(text.replace("config:\n", "config:\n  aws:region: eu-west-1\n", 1))


def _directory_stack(s: Scratch) -> None:
    s.stack_file.unlink()
    s.stack_file.mkdir()


def _directory_journal(s: Scratch) -> None:
    s.journal.mkdir(parents=True)


def _state_is_a_file(s: Scratch) -> None:
    s.state.parent.mkdir(parents=True, exist_ok=True)
    s.state.write_text("not a directory")


def _overlay(key: str, value: Any) -> Setup:
    def setup(s: Scratch) -> None:
        shutil.copy(s.project / "stacks" / "Pulumi.overlay-switch-example.yaml", s.stack_file)
        s.config(key, value)

    return setup


def _cni_swap(key: str, value: Any) -> Setup:
    def setup(s: Scratch) -> None:
        shutil.copy(REPO / "stacks" / "Pulumi.cni-swap-example.yaml", s.stack_file)
        s.config(key, value)

    return setup


def _mirror_without_image_of_a_kops_cluster(s: Scratch) -> None:
    """The cni-swap example adopted from kops (a worker template keeps nodeup), its
    mirror naming no image of its own."""
    shutil.copy(REPO / "stacks" / "Pulumi.cni-swap-example.yaml", s.stack_file)
    s.config("kubeshift:cluster.user_data", {"shop-euw1-workers-general-spot": "#!/bin/bash\n"})
    document = s.stack()
    del document["config"]["kubeshift:migration"]["mirror"]["image_id"]
    s.write_stack(document)


def _project_dir(path: str) -> Setup:
    def setup(_: Scratch) -> None:
        os.environ["KUBESHIFT_PROJECT_DIR"] = path  # restored by the fixture's monkeypatch

    return setup


def _kept_file(text: str) -> Setup:
    """A kept file beside the stack file, named by ``kubeshift:kept``."""

    def setup(s: Scratch) -> None:
        (s.stack_file.parent / "Pulumi.t.kept.yaml").write_text(text)
        s.config("kubeshift:kept", "Pulumi.t.kept.yaml")

    return setup


def _nothing(_: Scratch) -> None:
    return None


PLAN = ("--stack", "t", "plan")
STATUS = ("--stack", "t", "status")
RUN = ("--stack", "t", "run", "--yes")
DRY = ("--stack", "t", "run", "--dry-run")
REPLACE = ("--stack", "t", "replace-nodes", "ip-10-0-1-1.ec2.internal", "--dry-run")
LONG_NAME = ("a" * 60 + ".") * 5 + "example.com"

# (id, setup, argv, exit code, words stderr must hold)
CASES: list[tuple[str, Setup, tuple[str, ...], int, tuple[str, ...]]] = [
    # --- the stack file as bytes and YAML ----------------------------------------------
    ("stack-not-utf8", _stack_bytes(b"config:\n  a: \xff\xfe\x00bad\n"), PLAN, 2, ("not UTF-8",)),
    ("stack-utf16", _stack_bytes("config: {}\n".encode("utf-16")), PLAN, 2, ("UTF-16",)),
    ("stack-empty", _stack_text(""), PLAN, 2, ("no 'config:' mapping",)),
    ("stack-broken-yaml", _stack_text("config:\n  a: [1, 2\n"), PLAN, 2, ("not valid YAML",)),
    ("stack-duplicate-key", _duplicate_key, PLAN, 2, ("given twice",)),
    ("stack-directory", _directory_stack, PLAN, 2, ("is a directory",)),
    ("stack-config-list", _stack_text("config: [1, 2]\n"), PLAN, 2, ("no 'config:' mapping",)),
    ("stack-config-string", _stack_text("config: hello\n"), PLAN, 2, ("no 'config:' mapping",)),
    # --- the stack's configuration -------------------------------------------------------
    (
        "kept-file-missing",
        _set("kubeshift:kept", "gone.yaml"),
        PLAN,
        2,
        ("Kept file", "does not exist"),
    ),
    (
        "kept-file-unknown-section",
        _kept_file("worker_pools: {}\n"),
        PLAN,
        2,
        ("holds 'worker_pools'",),
    ),
    ("kept-file-not-mapping", _kept_file("- names\n"), PLAN, 2, ("is not a mapping",)),
    ("kept-file-broken-yaml", _kept_file("names: {a: [1\n"), PLAN, 2, ("not valid YAML",)),
    (
        "kept-section-twice",
        lambda s: (_kept_file("names: {}\n")(s), s.config("kubeshift:cluster.names", {})),
        PLAN,
        2,
        ("given both",),
    ),
    ("misspelt-runtime-block", _set("kubeshift:runtme", {}), PLAN, 2, ("'kubeshift:runtime'",)),
    ("misspelt-cluster-block", _set("kubeshift:clustr", {}), PLAN, 2, ("'kubeshift:cluster'",)),
    ("unknown-scenario", _set("kubeshift:scenario", "teleport"), PLAN, 2, ("not a known",)),
    ("unknown-phase", _set("kubeshift:phase", "warp"), PLAN, 2, ("kubeshift:phase",)),
    (
        "secret-is-not-echoed",
        _set("kubeshift:cluster.name", {"secure": "v1:c2VjcmV0Y2lwaGVydGV4dA=="}),
        PLAN,
        2,
        ("kubeshift:cluster.name", "[secret]"),
    ),
    ("vpc-slash-8", _set("kubeshift:cluster.network.cidr", "10.0.0.0/8"), PLAN, 2, ("/16 to /28",)),
    (
        "az-other-region",
        _set("kubeshift:cluster.network.azs", ["eu-west-1a", "eu-west-1b"]),
        PLAN,
        2,
        ("kubeshift:cluster.network.azs", "us-west-2"),
    ),
    ("empty-zone-id", _set("kubeshift:cluster.dns.zone_id", ""), PLAN, 2, ("zone_id",)),
    (
        "aws-tag-key",
        _set("kubeshift:cluster.tags", {"aws:owner": "me"}),
        PLAN,
        2,
        ("kubeshift:cluster.tags", "reserved"),
    ),
    (
        "dns-name-too-long",
        _set("kubeshift:cluster.dns.api_record", LONG_NAME),
        PLAN,
        2,
        ("api_record", "253"),
    ),
    (
        "label-key",
        _set("kubeshift:cluster.worker_pools.0.labels", {"has space": "x"}),
        PLAN,
        2,
        ("worker_pools[0].labels",),
    ),
    (
        "label-value",
        _set("kubeshift:cluster.worker_pools.0.labels", {"team": "a b"}),
        PLAN,
        2,
        ("worker_pools[0].labels", "label value"),
    ),
    (
        "taint-key",
        _set("kubeshift:cluster.worker_pools.0.taints", [{"key": "-x", "value": "y"}]),
        PLAN,
        2,
        ("worker_pools[0].taints[0]",),
    ),
    (
        "capacity-twice",
        _set("kubeshift:cluster.worker_pools.0.capacity_types", ["spot", "spot"]),
        PLAN,
        2,
        ("capacity_types", "twice"),
    ),
    (
        "pool-az-twice",
        _set("kubeshift:cluster.worker_pools.0.azs", ["us-west-2a", "us-west-2a"]),
        PLAN,
        2,
        ("worker_pools[0].azs", "twice"),
    ),
    (
        "listener-port-twice",
        _set(
            "kubeshift:cluster.ingress",
            {"listeners": [{"port": 80, "node_port": 30080}, {"port": 80, "node_port": 30081}]},
        ),
        PLAN,
        2,
        ("listeners", "port 80 twice"),
    ),
    (
        "node-port-twice",
        _set(
            "kubeshift:cluster.ingress",
            {"listeners": [{"port": 80, "node_port": 30080}, {"port": 443, "node_port": 30080}]},
        ),
        PLAN,
        2,
        ("listeners", "node_port 30080 twice"),
    ),
    ("members-999", _set("kubeshift:cluster.control_plane.members", 999), PLAN, 2, ("3 to 7",)),
    ("members-even", _set("kubeshift:cluster.control_plane.members", 4), PLAN, 2, ("odd",)),
    (
        "member-azs-twice",
        _set("kubeshift:cluster.control_plane.azs", ["us-west-2a", "us-west-2a"]),
        PLAN,
        2,
        ("control_plane.azs", "twice"),
    ),
    (
        "pod-cidr-below-node-prefix",
        _overlay("kubeshift:migration.overlay.pod_cidr", "100.64.0.0/26"),
        PLAN,
        2,
        ("pod_cidr", "per-node"),
    ),
    ("image-id", _set("kubeshift:cluster.image_id", "ubuntu"), PLAN, 2, ("image_id",)),
    (
        "mirror-image-id",
        _cni_swap("kubeshift:migration.mirror.image_id", "ubuntu"),
        PLAN,
        2,
        ("mirror.image_id",),
    ),
    (
        "mirror-image-of-a-kops-cluster",
        _mirror_without_image_of_a_kops_cluster,
        PLAN,
        2,
        ("mirror.image_id is required", "node.env"),
    ),
    # --- runtime settings ------------------------------------------------------------------
    ("runtime-not-mapping", _runtime([]), PLAN, 2, ("kubeshift:runtime", "mapping")),  # type: ignore[arg-type]
    (
        "drain-option-typo",
        _runtime({"drain": {"delete_emptydir_dat": True}}),
        PLAN,
        2,
        ("drain.delete_emptydir_dat", "'delete_emptydir_data'"),
    ),
    (
        "drain-limit-typo",
        _runtime({"drain_limits": {"max_nodes": 3}}),
        PLAN,
        2,
        ("drain_limits.max_nodes", "'max_nodes_in_flight'"),
    ),
    (
        "kubeconfig-typo",
        _runtime({"clusters": {"primary": {"kubeconfg": "/x"}}}),
        PLAN,
        2,
        ("clusters.primary.kubeconfg", "'kubeconfig'"),
    ),
    (
        "probe-service-without-namespace",
        _runtime({"probe_services": ["justname"]}),
        PLAN,
        2,
        ("probe_services[0]", "namespace/name"),
    ),
    (
        "endpoint-not-url",
        _runtime({"aws": {"endpoint_url": "not a url"}}),
        PLAN,
        2,
        ("aws.endpoint_url",),
    ),
    (
        "endpoint-port-not-number",
        _runtime({"aws": {"endpoint_url": "http://localhost:port"}}),
        PLAN,
        2,
        ("aws.endpoint_url", "port"),
    ),
    ("aws-region-typo", _runtime({"aws": {"regoin": "x"}}), PLAN, 2, ("'region'",)),
    (
        "taint-effect-typo",
        _runtime({"retiring_taint": {"key": "k", "efect": "NoSchedule"}}),
        PLAN,
        2,
        ("retiring_taint.efect", "'effect'"),
    ),
    (
        "taint-effect-value",
        _runtime({"retiring_taint": {"key": "k", "effect": "Never"}}),
        PLAN,
        2,
        ("retiring_taint.effect",),
    ),
    ("ingress-typo", _runtime({"ingress": {"namespce": "x"}}), PLAN, 2, ("'namespace'",)),
    ("mirror-typo", _runtime({"mirror": {"namespacez": ["a"]}}), PLAN, 2, ("'namespaces'",)),
    (
        "gate-timeout-negative",
        _runtime({"gates": {"dns_sync_timeout": -1}}),
        PLAN,
        2,
        ("gates.dns_sync_timeout",),
    ),
    ("unknown-runtime-key", _runtime({"clustres": {}}), PLAN, 2, ("'clusters'",)),
    # --- the command line: each option and argument that takes a value ---------------------
    ("usage-unknown-option", _nothing, (*PLAN, "--bogus"), 2, ("No such option", "plan --help")),
    ("usage-unknown-command", _nothing, ("--stack", "t", "teleport"), 2, ("No such command",)),
    (
        "render-config-missing",
        _nothing,
        ("--stack", "t", "render", "--config", "gone.yaml"),
        2,
        ("gone.yaml", "does not exist"),
    ),
    (
        "diff-unknown-to",
        _nothing,
        ("--stack", "t", "diff", "--from", "baseline", "--to", "warp"),
        2,
        ("Unknown phase 'warp'",),
    ),
    (
        "preview-unknown-phase",
        _nothing,
        ("--stack", "t", "preview", "--phase", "warp"),
        2,
        ("'warp'",),
    ),
    ("run-unknown-to", _nothing, (*DRY, "--to", "warp"), 2, ("Unknown phase 'warp'",)),
    (
        "back-unknown-to",  # said before the engine is looked for (there is none here)
        _nothing,
        ("--stack", "t", "back", "--to", "warp", "--dry-run"),
        2,
        ("Unknown phase 'warp'",),
    ),
    (
        "hooks-unknown-phase",  # said before the engine is looked for (there is none here)
        _nothing,
        ("--stack", "t", "hooks", "warp", "--before", "--dry-run"),
        2,
        ("Unknown phase 'warp'",),
    ),
    (
        "replace-unknown-phase",
        _nothing,
        (*REPLACE, "--phase", "warp"),
        2,
        ("Unknown phase 'warp'",),
    ),
    (
        "replace-unknown-cluster",
        _nothing,
        (*REPLACE, "--phase", "drain-workers", "--cluster", "mirror"),
        2,
        ("Cluster 'mirror'", "kubeshift:runtime.clusters"),
    ),
    (
        "replace-timeout-zero",
        _nothing,
        (*REPLACE, "--phase", "drain-workers", "--timeout", "0"),
        2,
        ("--timeout", "replace-nodes --help"),
    ),
    (
        "replace-not-a-node-name",
        _nothing,
        ("--stack", "t", "replace-nodes", "ip-10-0-1-1\n", "--phase", "drain-workers", "--dry-run"),
        2,
        ("not a node name",),
    ),
    (
        "sandbox-port-range",
        _nothing,
        ("sandbox", "up", "--moto-port", "70000"),
        2,
        ("--moto-port",),
    ),
    (
        "sandbox-built-by-unknown",
        _nothing,
        ("sandbox", "up", "--built-by", "terraform"),
        2,
        ("--built-by", "'kops'"),
    ),
    ("sandbox-unknown-stack", _nothing, ("sandbox", "up", "--stack", "nope"), 2, ("'nope'",)),
    # --- a whole value, not a prefix of it: a trailing newline is not part of a name ----
    (
        "name-trailing-newline",
        _set("kubeshift:cluster.name", "demo\n"),
        PLAN,
        2,
        ("kubeshift:cluster.name",),
    ),
    (
        "suffix-trailing-newline",
        _set("kubeshift:migration.suffix", "mig\n"),
        PLAN,
        2,
        ("kubeshift:migration.suffix",),
    ),
    (
        "zone-id-trailing-newline",
        _set("kubeshift:cluster.dns.zone_id", "Z0DEMO0000000000000\n"),
        PLAN,
        2,
        ("zone_id",),
    ),
    ("region-trailing-newline", _set("aws:region", "us-west-2\n"), PLAN, 2, ("aws:region",)),
    (
        "instance-type-trailing-newline",
        _set("kubeshift:cluster.control_plane.instance_type", "m5.large\n"),
        PLAN,
        2,
        ("instance_type",),
    ),
    (
        "pool-name-trailing-newline",
        _set("kubeshift:cluster.worker_pools.0.name", "general\n"),
        PLAN,
        2,
        ("worker_pools[0]",),
    ),
    (
        "image-id-trailing-newline",
        _set("kubeshift:cluster.image_id", "ami-0123456789abcdef0\n"),
        PLAN,
        2,
        ("image_id",),
    ),
    (
        "api-record-trailing-newline",
        _set("kubeshift:cluster.dns.api_record", "api.demo.example.internal\n"),
        PLAN,
        2,
        ("api_record",),
    ),
    (
        "az-trailing-newline",
        _set("kubeshift:cluster.network.azs", ["us-west-2a", "us-west-2b\n"]),
        PLAN,
        2,
        ("network.azs",),
    ),
    (
        "policy-arn-trailing-newline",
        _set(
            "kubeshift:cluster.managed_policies",
            {"node": ["arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore\n"]},
        ),
        PLAN,
        2,
        ("managed_policies",),
    ),
    ("stack-name-trailing-newline", _nothing, ("--stack", "t\n", "plan"), 2, ("stack",)),
    (
        "service-ref-trailing-newline",
        _runtime({"probe_services": ["shop/web\n"]}),
        PLAN,
        2,
        ("probe_services",),
    ),
    # --- what AWS would refuse, said at load ----------------------------------------------
    (
        "etcd-volume-needs-iops",
        _set("kubeshift:cluster.control_plane.etcd_volume_type", "io1"),
        PLAN,
        2,
        ("etcd_volume_type io1", "provisioned IOPS"),
    ),
    (
        "etcd-volume-too-big",
        _set("kubeshift:cluster.control_plane.etcd_volume_size", 20000),
        PLAN,
        2,
        ("etcd_volume_size 20000", "1 to 16384"),
    ),
    (
        "worker-root-too-big",
        _set("kubeshift:cluster.worker_pools.0.root_volume_size", 20000),
        PLAN,
        2,
        ("worker_pools[0].root_volume_size",),
    ),
    (
        "managed-policies-past-iams-limit",
        _set(
            "kubeshift:cluster.managed_policies",
            {"node": [f"arn:aws:iam::123456789012:policy/p{i}" for i in range(21)]},
        ),
        PLAN,
        2,
        ("managed_policies.node", "at most 20"),
    ),
    # --- runtime settings that make sense one by one but not together -------------------
    (
        "old-generation-selects-the-new",
        _runtime({"mirror": {"old_nodes_selector": "kubeshift.io/generation"}}),
        PLAN,
        2,
        ("old_nodes_selector", "new generation would be drained"),
    ),
    (
        "old-generation-equals-the-new",
        _runtime({"mirror": {"new_nodes_selector": "gen=b", "old_nodes_selector": "gen = b"}}),
        PLAN,
        2,
        ("old_nodes_selector", "'gen!=b'"),
    ),
    (
        "selector-trailing-comma",
        _runtime({"mirror": {"new_nodes_selector": "gen=b,"}}),
        PLAN,
        2,
        ("mirror.new_nodes_selector", "not a label selector"),
    ),
    (
        "pod-selector-space",
        _runtime({"mirror": {"old_cni": {"name": "weave-net", "pod_selector": "name=weave net"}}}),
        PLAN,
        2,
        ("mirror.old_cni.pod_selector", "not a label selector"),
    ),
    (
        "copy-kube-system",
        _runtime({"mirror": {"namespaces": ["shop", "kube-system"]}}),
        PLAN,
        2,
        ("mirror.namespaces", "kube-system", "never copied"),
    ),
    (
        "copy-namespace-newline",
        _runtime({"mirror": {"namespaces": ["shop\n"]}}),
        PLAN,
        2,
        ("mirror.namespaces", "not a namespace name"),
    ),
    (
        "copy-unknown-kind",
        _runtime({"mirror": {"kinds": ["Deploymnet"]}}),
        PLAN,
        2,
        ("mirror.kinds", "unknown kind"),
    ),
    (
        "rewrite-shadowed",
        _rewrites(("registry.example.com", "m.example.com"), ("registry.example.com/t", "t.io")),
        PLAN,
        2,
        ("registry_rewrites", "never applies"),
    ),
    (
        "rewrite-twice",
        _rewrites(("docker.io", "a.example.com"), ("index.docker.io", "b.example.com")),
        PLAN,
        2,
        ("registry_rewrites", "rewritten twice"),
    ),
    (
        "etcd-one-port",
        _runtime({"etcd": {"client_port": 2380}}),
        PLAN,
        2,
        ("kubeshift:runtime.etcd", "both 2380"),
    ),
    (
        "etcd-ranges-overlap",
        _runtime(
            {
                "etcd": {
                    "address_map": {"10.0.0.0/16": "127.1.0.0/16", "10.0.8.0/24": "127.9.0.0/24"}
                }
            }
        ),
        PLAN,
        2,
        ("etcd.address_map", "overlap"),
    ),
    (
        "etcd-ranges-land-together",
        _runtime(
            {
                "etcd": {
                    "address_map": {"10.0.0.0/16": "127.1.0.0/16", "10.1.0.0/16": "127.1.0.0/16"}
                }
            }
        ),
        PLAN,
        2,
        ("etcd.address_map", "one address"),
    ),
    (
        "runtime-secret",
        _runtime({"clusters": {"primary": {"context": {"secure": "v1:c2VjcmV0Y2lwaGVydGV4dA=="}}}}),
        PLAN,
        2,
        ("kubeshift:runtime.clusters.primary.context is a secret",),
    ),
    (
        "whole-cluster-secret",
        _set("kubeshift:cluster", {"secure": "v1:c2VjcmV0Y2lwaGVydGV4dA=="}),
        PLAN,
        2,
        ("kubeshift:cluster is stored as one secret", "--path"),
    ),
    # --- journals --------------------------------------------------------------------------
    ("journal-truncated-status", _journal(_valid_journal()[:40]), STATUS, 2, ("damaged",)),
    ("journal-garbage-status", _journal("garbage!"), STATUS, 2, ("damaged", "not JSON")),
    ("journal-empty-status", _journal(""), STATUS, 2, ("is empty",)),
    ("journal-directory-status", _directory_journal, STATUS, 2, ("is a directory",)),
    ("journal-not-utf8-status", _journal(b"\xff\xfe\xfa"), STATUS, 2, ("not UTF-8",)),
    ("journal-list-status", _journal("[1, 2, 3]"), STATUS, 2, ("damaged",)),
    ("journal-steps-list", _journal(_valid_journal(steps=[])), STATUS, 2, ("damaged", "steps")),
    (
        "journal-bad-status-value",
        _journal(_valid_journal(steps={"a/b": {"phase": "a", "step": "b", "status": "done"}})),
        STATUS,
        2,
        ("damaged", "status"),
    ),
    ("journal-other-stack", _journal(_valid_journal(stack="prod")), STATUS, 2, ("'prod'",)),
    ("journal-newer", _journal(_valid_journal(version=99)), STATUS, 2, ("newer kubeshift",)),
    ("journal-truncated-run", _journal(_valid_journal()[:40]), RUN, 2, ("damaged",)),
    ("journal-other-stack-run", _journal(_valid_journal(stack="prod")), RUN, 2, ("'prod'",)),
    (
        "journal-other-scenario-run",
        _journal(_valid_journal(scenario="cni-swap")),
        RUN,
        2,
        ("cni-swap run", "vpc-move"),
    ),
    ("journal-directory-run", _directory_journal, RUN, 2, ("is a directory",)),
    ("journal-empty-dry-run", _journal(""), DRY, 2, ("is empty",)),
    # --- state directory, flags, names ---------------------------------------------------
    ("state-dir-is-a-file", _state_is_a_file, RUN, 2, ("is a file",)),
    ("stack-name-escapes", _nothing, ("--stack", "../../x", "status"), 2, ("not a stack name",)),
    ("stack-name-empty", _nothing, ("--stack", "", "plan"), 2, ("not a stack name",)),
    ("stack-unknown", _nothing, ("--stack", "nope", "plan"), 2, ("known stacks",)),
    ("render-empty-phase", _nothing, ("--stack", "t", "render", "--phase", ""), 2, ("''",)),
    ("render-unknown-phase", _nothing, ("--stack", "t", "render", "--phase", "x"), 2, ("'x'",)),
    (
        "diff-unknown-phase",
        _nothing,
        ("--stack", "t", "diff", "--from", "nope", "--to", "cleanup"),
        2,
        ("'nope'",),
    ),
    ("run-unknown-from", _nothing, (*DRY, "--from", "warp"), 2, ("'warp'",)),
    ("fresh-with-dry-run", _nothing, (*DRY, "--fresh"), 2, ("--fresh", "--dry-run")),
    ("status-without-journal", _nothing, STATUS, 2, ("no journal yet",)),
    ("env-project-elsewhere", _project_dir("/nonexistent/project"), PLAN, 2, ("no file",)),
    # --- kept values for nothing the program declares (a typo drops another tool's tags) ---
    (
        "kept-tags-for-nothing-run",
        _set("kubeshift:cluster.kept_tags", {"demo-source-network-vcp": {"k": "v"}}),
        RUN,
        2,
        ("kept_tags 'demo-source-network-vcp'", "did you mean 'demo-source-network-vpc'"),
    ),
    (
        "kept-name-for-nothing-render",
        _set("kubeshift:cluster.names", {"demo-nodes": "nodes.demo.k8s.local"}),
        ("--stack", "t", "render", "--phase", "cleanup"),
        2,
        ("names 'demo-nodes'", "did you mean 'demo-node'"),
    ),
    (
        "kept-script-for-nothing-hooks",
        _set("kubeshift:cluster.user_data", {"demo-workers-generl-spot": "#!/bin/bash\n"}),
        ("--stack", "t", "hooks", "target-workers", "--after", "--yes"),
        2,
        ("user_data 'demo-workers-generl-spot'",),
    ),
    (
        "write-config-with-import-flags",
        _nothing,
        ("--stack", "t", "adopt", "--write-config", "p.yaml", "--keep-live", "--yes"),
        2,
        ("--write-config", "--yes or --keep-live"),
    ),
]


def _snapshot(*roots: Path) -> dict[str, tuple[bool, int, float]]:
    found = {}
    for root in roots:
        if not root.exists():
            continue
        found[str(root)] = (root.is_dir(), 0, root.stat().st_mtime)
        for path in root.rglob("*") if root.is_dir() else ():
            stat = path.stat()
            found[str(path)] = (path.is_dir(), stat.st_size, stat.st_mtime)
    return found


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scratch:
    project = tmp_path / "project"
    (project / "stacks").mkdir(parents=True)
    shutil.copy(REPO / "Pulumi.yaml", project / "Pulumi.yaml")
    for stack in (BASE_STACK, "overlay-switch-example"):
        shutil.copy(REPO / "stacks" / f"Pulumi.{stack}.yaml", project / "stacks")
    shutil.copy(REPO / "stacks" / f"Pulumi.{BASE_STACK}.yaml", project / "stacks" / "Pulumi.t.yaml")
    state = tmp_path / "state"
    monkeypatch.setenv("KUBESHIFT_PROJECT_DIR", str(project))
    monkeypatch.setenv("KUBESHIFT_STATE_DIR", str(state))
    monkeypatch.setenv("PATH", os.defpath)  # no `pulumi`: reaching the engine would show
    monkeypatch.delenv("KUBESHIFT_SANDBOX", raising=False)
    return Scratch(project, state)


def test_the_table_is_large_enough() -> None:
    assert len(CASES) >= 60
    assert len({case[0] for case in CASES}) == len(CASES)


@pytest.mark.parametrize(
    ("setup", "argv", "code", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_is_one_sentence_and_changes_nothing(
    scratch: Scratch, setup: Setup, argv: tuple[str, ...], code: int, words: tuple[str, ...]
) -> None:
    setup(scratch)
    before = _snapshot(scratch.project, scratch.state)

    result = CliRunner().invoke(app, list(argv))

    assert result.exit_code == code, (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output
    text = result.stderr.strip()
    assert len(text.splitlines()) == 1, text
    assert text.startswith("error: ") and text.endswith((".", "?")), text
    for word in words:
        assert word in text, text
    assert "c2VjcmV0Y2lwaGVydGV4dA" not in result.output
    assert _snapshot(scratch.project, scratch.state) == before, "the command wrote something"


def test_a_secret_tag_is_shown_as_a_secret_offline(scratch: Scratch) -> None:
    scratch.config("kubeshift:cluster.tags", {"team": {"secure": "v1:c2VjcmV0Y2lwaGVydGV4dA=="}})

    result = CliRunner().invoke(app, ["--stack", "t", "--json", "render", "--phase", "baseline"])

    assert result.exit_code == 0, result.output
    assert "c2VjcmV0Y2lwaGVydGV4dA" not in result.output
    assert "[secret]" in result.output


def test_kubectl_spellings_of_drain_options_are_accepted(scratch: Scratch) -> None:
    scratch.runtime({"drain": {"delete-emptydir-data": True, "ignore-daemonsets": False}})
    from automation.config.settings import load_runtime_settings
    from components.contract.loading import load_stack_file

    settings = load_runtime_settings(load_stack_file(scratch.stack_file))

    assert settings.drain.delete_emptydir_data is True
    assert settings.drain.ignore_daemonsets is False


def test_hooks_use_the_stacks_region_unless_runtime_names_one(scratch: Scratch) -> None:
    from automation.config.settings import load_runtime_settings
    from components.contract.loading import load_stack_file

    assert load_runtime_settings(load_stack_file(scratch.stack_file)).aws.region == "us-west-2"
    scratch.runtime({"aws": {"region": "eu-central-1"}})
    assert load_runtime_settings(load_stack_file(scratch.stack_file)).aws.region == "eu-central-1"


KUBECONFIGS: list[tuple[str, bytes, dict[str, Any], str]] = [
    ("not-utf8", b"\xff\xfe\xfa", {}, "not UTF-8"),
    ("broken-yaml", b"apiVersion: v1\nclusters: [\n", {}, "not valid YAML at line"),
    ("a-list", b"- 1\n- 2\n", {}, "not a kubeconfig"),
    ("contexts-garbage", b"contexts: [1, 2]\ncurrent-context: x\n", {}, "no current context"),
    ("unknown-context", b"contexts: [{name: a}]\n", {"context": "b"}, "'b' is not in kubeconfig"),
    ("missing-file", b"", {"kubeconfig": "/nonexistent/kubeconfig"}, "does not exist"),
]


@pytest.mark.parametrize(
    ("body", "access", "words"), [k[1:] for k in KUBECONFIGS], ids=[k[0] for k in KUBECONFIGS]
)
def test_a_bad_kubeconfig_is_one_sentence(
    tmp_path: Path, body: bytes, access: dict[str, Any], words: str
) -> None:
    from automation.core.errors import UserError
    from automation.kube.clients import ClusterAccess, build_clients

    path = tmp_path / "kubeconfig"
    path.write_bytes(body)

    with pytest.raises(UserError) as caught:
        build_clients(ClusterAccess(**{"kubeconfig": path, **access}))

    message = str(caught.value)
    assert words in message and "\n" not in message and message.endswith(".")
    assert "--context" not in message and "--kubeconfig" not in message


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("stacks/Pulumi.t.yaml", "exists; write the proposal to a new file"),
        ("stacks/proposed.yaml", "Pulumi.t.kept.yaml exists"),
        ("missing/proposed.yaml", "is not a directory"),
    ],
)
def test_a_proposal_that_could_not_be_written_is_refused_before_the_account_is_read(
    scratch: Scratch, target: str, words: str
) -> None:
    (scratch.project / "stacks" / "Pulumi.t.kept.yaml").write_text("names: {}\n")
    before = _snapshot(scratch.project, scratch.state)

    argv = ["--stack", "t", "adopt", "--write-config", str(scratch.project / target)]
    result = CliRunner().invoke(app, argv)

    assert result.exit_code == 2, (result.output, result.exception)
    text = result.stderr.strip()
    assert len(text.splitlines()) == 1 and text.startswith("error: "), text
    assert words in text, text
    assert "AWS" not in text and "credentials" not in text  # the account was not read
    assert _snapshot(scratch.project, scratch.state) == before


@pytest.mark.parametrize(
    "argv",
    [("adopt", "--dry-run"), ("adopt", "--write-config", "proposed.yaml")],
    ids=["adopt", "write-config"],
)
def test_an_account_that_cannot_be_reached_is_one_sentence_not_one_per_resource(
    scratch: Scratch, monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...]
) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{probe.getsockname()[1]}"
    scratch.runtime({"aws": {"endpoint_url": endpoint, "max_attempts": 1}})
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    before = _snapshot(scratch.project, scratch.state)

    target = [str(scratch.project / a) if a.endswith(".yaml") else a for a in argv]
    result = CliRunner().invoke(app, ["--stack", "t", *target])

    assert result.exit_code == 2, (result.output, result.exception)
    text = result.stderr.strip()
    assert len(text.splitlines()) == 1 and text.startswith("error: "), text
    assert f"{endpoint} could not be reached" in text, text
    assert _snapshot(scratch.project, scratch.state) == before


def _fifo_stack(s: Scratch) -> None:
    s.stack_file.unlink()
    os.mkfifo(s.stack_file)


def _alias_bomb_stack(s: Scratch) -> None:
    from tests.support.yaml_bombs import BILLION_LAUGHS

    laughs = "".join(f"    {line}\n" for line in BILLION_LAUGHS.splitlines())
    s.stack_file.write_text(s.stack_file.read_text() + "  kubeshift:laughs:\n" + laughs)


def _device_kept_file(s: Scratch) -> None:
    (s.stack_file.parent / "Pulumi.t.kept.yaml").symlink_to("/dev/zero")
    s.config("kubeshift:kept", "Pulumi.t.kept.yaml")


def _fifo_journal(s: Scratch) -> None:
    s.state.mkdir(parents=True)
    os.mkfifo(s.journal)


# (id, setup, argv, words): files that would hang or flood a plain read
FLOODS: list[tuple[str, Setup, tuple[str, ...], tuple[str, ...]]] = [
    ("stack-fifo", _fifo_stack, PLAN, ("Pulumi.t.yaml", "is a FIFO")),
    ("stack-alias-bomb", _alias_bomb_stack, PLAN, ("Pulumi.t.yaml", "through its aliases")),
    ("kept-file-device", _device_kept_file, PLAN, ("Pulumi.t.kept.yaml", "character device")),
    ("journal-fifo", _fifo_journal, STATUS, ("t.journal.json", "is a FIFO")),
]


@pytest.mark.parametrize(
    ("setup", "argv", "words"), [c[1:] for c in FLOODS], ids=[c[0] for c in FLOODS]
)
def test_a_file_that_would_hang_or_flood_is_one_sentence_from_the_console_script(
    scratch: Scratch, setup: Setup, argv: tuple[str, ...], words: tuple[str, ...]
) -> None:
    """Run as a user runs it, apart and with a deadline: a read that blocked on a FIFO or
    expanded a bomb would otherwise hang the suite."""
    import subprocess
    import sys

    setup(scratch)
    before = _snapshot(scratch.project, scratch.state)
    console = Path(sys.executable).parent / "kubeshift"

    done = subprocess.run(
        [str(console), *argv], capture_output=True, text=True, timeout=30, env=dict(os.environ)
    )

    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stdout + done.stderr
    text = done.stderr.strip()
    assert len(text.splitlines()) == 1 and text.startswith("error: "), text
    for word in words:
        assert word in text, text
    assert _snapshot(scratch.project, scratch.state) == before, "the command wrote something"


def _value_params() -> set[str]:
    """``command --option`` (or ``command ARGUMENT``) for each parameter that takes a
    value, of every command."""
    found: set[str] = set()

    def walk(command: Any, path: str) -> None:
        for param in command.params:
            if getattr(param, "is_flag", False) or param.name == "help":
                continue
            if param.opts[0] == "--stack":  # one option, checked alike wherever it is given
                found.add("--stack")
            else:
                name = param.opts[0] if param.opts[0].startswith("-") else param.name
                found.add(f"{path} {name}")
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, f"{path} {name}".strip())

    walk(typer.main.get_command(app), "")
    return {p.strip() for p in found}


def _params_tried(argv: tuple[str, ...]) -> set[str]:
    """The value parameters ``argv`` gives, named as ``_value_params`` names them."""
    command: Any = typer.main.get_command(app)
    path, tried, index = "", set(), 0
    while index < len(argv):
        token = argv[index]
        subcommands = getattr(command, "commands", None) or {}
        if token in subcommands:
            command, path = subcommands[token], f"{path} {token}".strip()
        elif token.startswith("-"):
            param = next((p for p in command.params if token in p.opts), None)
            if token in ("--stack", "-s"):  # the global option, or a command's
                if argv[index + 1 : index + 2] != ("t",):  # not the scratch stack: tried
                    tried.add("--stack")
                index += 1
            elif param is not None and not getattr(param, "is_flag", False):
                tried.add(f"{path} {param.opts[0]}".strip())
                index += 1
        else:
            argument = next((p for p in command.params if not p.opts[0].startswith("-")), None)
            if argument is not None:
                tried.add(f"{path} {argument.name}")
        index += 1
    return tried


def test_every_option_and_argument_that_takes_a_value_has_a_bad_input_case() -> None:
    tried = {param for case in CASES for param in _params_tried(case[2])}
    missing = _value_params() - tried
    assert "replace-nodes --timeout" in tried  # the walk reads the table
    assert not missing, f"no bad-input case gives {sorted(missing)}"


def test_more_managed_policies_than_iams_default_quota_is_said_once_and_not_refused(
    scratch: Scratch,
) -> None:
    policies = [f"arn:aws:iam::123456789012:policy/p{i}" for i in range(11)]
    scratch.config("kubeshift:cluster.managed_policies", {"node": policies})

    result = CliRunner().invoke(app, ["--stack", "t", "plan"])

    assert result.exit_code == 0, result.output
    said = " ".join(result.stderr.split())  # the log wraps long lines
    assert said.count("managed_policies.node lists 11 policies") == 1, result.stderr
    assert "unless the account's quota was raised" in said, result.stderr
