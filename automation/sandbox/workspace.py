"""The rehearsal's own copy of the project: nothing of the real stack is touched.

Running a phase writes ``kubeshift:phase`` into the stack file and records state in a
backend, so the rehearsal works on a copy: ``<sandbox>/workspace/Pulumi.yaml`` points
at the repository's program and virtualenv, ``workspace/stacks/Pulumi.<stack>.yaml`` is
the user's stack file with the runtime settings aimed at the sandbox (its clusters and
moto), its external ids mapped to ones that exist in moto, and secrets replaced by
placeholders (the rehearsal cannot and must not decrypt them). The backend is a file
backend with its own passphrase, whatever ``PULUMI_BACKEND_URL`` the user has.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from automation.cli.doors import SANDBOX_VARIABLE
from automation.sandbox.layout import SandboxPaths
from automation.sandbox.state import SandboxState

PASSPHRASE = "kubeshift-sandbox"  # protects nothing: the rehearsal holds no real secret
SECRET_PLACEHOLDER = "sandbox-placeholder"
SANDBOX_MIRROR_TTL = 10  # seconds: the TTL cni-swap's records carry while they move
SANDBOX_DRAIN_MARGIN = 5.0  # seconds beyond each record's TTL before a load balancer goes
SANDBOX_API_PROBE_INTERVAL = 2.0  # seconds between the API probe's requests
FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "sandbox",
    "AWS_SECRET_ACCESS_KEY": "sandbox",
    "AWS_SESSION_TOKEN": "sandbox",
}


def _placeholders(value: Any, found: list[str], path: str) -> Any:
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            found.append(path)
            return SECRET_PLACEHOLDER
        return {k: _placeholders(v, found, f"{path}.{k}" if path else k) for k, v in value.items()}
    if isinstance(value, list):
        return [_placeholders(v, found, f"{path}[{i}]") for i, v in enumerate(value)]
    return value


def zone_name(api_record: str) -> str:
    """The hosted zone a stack's records live in: the API record's parent domain."""
    labels = api_record.rstrip(".").split(".")
    return ".".join(labels[1:]) if len(labels) > 2 else api_record


def _mirror_settings(runtime: dict[str, Any], project: Path | None) -> list[str]:
    """cni-swap's runtime.mirror in the sandbox: the CNIs' manifests found from the
    workspace, a short TTL on the records that move, and no pod-to-pod probe (kwok
    nodes carry no pod traffic)."""
    mirror = dict(runtime.get("mirror") or {})
    lines = []
    for key in ("new_cni_manifest", "old_cni_manifest"):
        manifest = mirror.get(key)
        if manifest and project is not None and not Path(str(manifest)).is_absolute():
            mirror[key] = str((project / str(manifest)).resolve())
            lines.append(f"runtime.mirror.{key}: {manifest} -> {mirror[key]}")
    if "dns_ttl" not in mirror:
        mirror["dns_ttl"] = SANDBOX_MIRROR_TTL
        lines.append(
            f"runtime.mirror.dns_ttl: {SANDBOX_MIRROR_TTL} s (the DNS drain before the mirror "
            "goes waits one TTL)"
        )
    mirror["pod_network"] = {**(mirror.get("pod_network") or {}), "enabled": False}
    lines.append(
        "runtime.mirror.pod_network: off (kwok's nodes carry no pod traffic; the probe's "
        "logic is tested against real probe pods)"
    )
    runtime["mirror"] = mirror
    return lines


def _dns_drain_settings(runtime: dict[str, Any]) -> list[str]:
    """A short DNS drain margin: nobody outside the sandbox resolves its records, and the
    rehearsal still waits each record's TTL before a load balancer goes."""
    drain = dict(runtime.get("dns_drain") or {})
    if "margin" in drain:
        return []
    drain["margin"] = SANDBOX_DRAIN_MARGIN
    runtime["dns_drain"] = drain
    return [f"runtime.dns_drain.margin: {SANDBOX_DRAIN_MARGIN:g} s (no resolver outside it)"]


def _api_probe_settings(runtime: dict[str, Any]) -> list[str]:
    """The API probe follows the API record through moto: the sandbox has no DNS, and its
    one API server per cluster would answer whatever the record said."""
    probe = dict(runtime.get("api_probe") or {})
    probe["resolve"] = "route53"
    probe.setdefault("interval", SANDBOX_API_PROBE_INTERVAL)
    runtime["api_probe"] = probe
    return [
        "runtime.api_probe.resolve: route53 (a request counts while the API record reaches "
        "a running member whose etcd answers)"
    ]


def _preview_scope_setting(runtime: dict[str, Any]) -> list[str]:
    """Every judgement of what a phase changes checked against the engine's preview of
    every resource, unless the stack file chose (``docs/using.md``, "What a preview
    reaches"): a rehearsal proves the judgement a production run trusts."""
    if "preview_scope" in runtime:
        return []
    runtime["preview_scope"] = "verify"
    return [
        "runtime.preview_scope: verify (each phase previewed whole, and the run stops where "
        "the engine changes what the judgement against the checkpoint left out)"
    ]


def rehearsal_config(
    config: dict[str, Any],
    state: SandboxState,
    hosted_zone: Callable[[str], str],
    *,
    project: Path | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The stack's config aimed at the sandbox, and one line per mapping made."""
    mappings: list[str] = []
    secrets: list[str] = []
    values = _placeholders(config, secrets, "")
    mappings += [f"secret {p}: replaced by a placeholder" for p in secrets]

    cluster = dict(values.get("kubeshift:cluster") or {})
    dns = dict(cluster.get("dns") or {})
    if dns.get("zone_id") and dns.get("api_record"):
        name = zone_name(str(dns["api_record"]))
        zone_id = hosted_zone(name)
        mappings.append(f"hosted zone {dns['zone_id']} -> {zone_id} ({name}, created in moto)")
        dns["zone_id"] = zone_id
        cluster["dns"] = dns
    if cluster.get("image_id"):
        mappings.append(f"AMI {cluster['image_id']}: kept (moto launches any image id)")
    values["kubeshift:cluster"] = cluster

    runtime = dict(values.get("kubeshift:runtime") or {})
    runtime["clusters"] = {
        c.role: {"kubeconfig": c.kubeconfig, "context": c.context} for c in state.clusters
    }
    runtime["aws"] = {"region": state.region, "endpoint_url": state.moto_endpoint}
    if state.etcd is not None:
        if runtime.get("etcd"):
            mappings.append("runtime.etcd: the stack's endpoints and TLS -> the sandbox's members")
        runtime["etcd"] = state.etcd.settings().model_dump(mode="json", exclude_defaults=True)
        ranges = ", ".join(f"{vpc} -> {lo}" for vpc, lo in state.etcd.address_map.items())
        if state.etcd.managed:
            mappings.append(
                f"etcd members: {len(state.etcd.members)} main and as many events, as kops's "
                "etcd-manager runs them, each member's names on a loopback address of its own"
            )
        else:
            mappings.append(f"etcd members: {len(state.etcd.members)} on loopback ({ranges})")
    if state.scenario == "cni-swap":
        mappings += _mirror_settings(runtime, project)
    mappings += _dns_drain_settings(runtime)
    mappings += _api_probe_settings(runtime)
    mappings += _preview_scope_setting(runtime)
    if state.probe_services and not runtime.get("probe_services"):
        runtime["probe_services"] = list(state.probe_services)
    values["kubeshift:runtime"] = runtime
    mappings.append(f"runtime: clusters -> sandbox, AWS -> {state.moto_endpoint}")
    return values, mappings


def write_workspace(repo: Path, paths: SandboxPaths, stack: str, config: dict[str, Any]) -> Path:
    """Write the workspace's Pulumi.yaml and stack file; return the workspace directory."""
    work = paths.workspace
    (work / "stacks").mkdir(parents=True, exist_ok=True)
    project = yaml.safe_load((repo / "Pulumi.yaml").read_text())
    project["main"] = os.path.relpath(repo, work)
    options = project.setdefault("runtime", {}).setdefault("options", {})
    if "virtualenv" in options:
        options["virtualenv"] = str((repo / options["virtualenv"]).resolve())
    project["stackConfigDir"] = "stacks"
    (work / "Pulumi.yaml").write_text(yaml.safe_dump(project, sort_keys=False))
    target = work / "stacks" / f"Pulumi.{stack}.yaml"
    if not target.exists():  # keep the phase a rehearsal already wrote
        target.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    return work


STATE_BUCKET = "kubeshift-sandbox-state"
"""The bucket in the sandbox's moto that holds the stack's state with ``--backend s3``."""


def backend_url(paths: SandboxPaths, state: SandboxState) -> str:
    """The engine's backend: the sandbox's directory, or its moto's bucket, addressed as
    go-cloud's s3blob reads an S3-compatible endpoint (plain HTTP, path-style)."""
    if state.backend == "s3":
        endpoint = urlsplit(state.moto_endpoint).netloc
        return (
            f"s3://{STATE_BUCKET}?region={state.region}&endpoint={endpoint}"
            "&disableSSL=true&s3ForcePathStyle=true"
        )
    return f"file://{paths.backend}"


def sandbox_env(paths: SandboxPaths, state: SandboxState) -> dict[str, str]:
    """The exports that aim a shell (pulumi, kubectl, aws, kubeshift) at the sandbox."""
    paths.aws_dir.mkdir(parents=True, exist_ok=True)
    for name in ("config", "credentials"):
        (paths.aws_dir / name).touch()
    primary = state.cluster("primary")
    bin_dir = str(Path(state.pulumi_bin).parent)
    return {
        "KUBESHIFT_PROJECT_DIR": str(paths.workspace),
        "KUBESHIFT_STATE_DIR": str(paths.workspace / ".kubeshift"),
        SANDBOX_VARIABLE: str(paths.root),
        "PULUMI_HOME": str(paths.pulumi_home),
        "PULUMI_BACKEND_URL": backend_url(paths, state),
        "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        "KUBESHIFT_SANDBOX_PROVIDER_LOG": str(paths.logs / "aws-provider.log"),
        "AWS_ENDPOINT_URL": state.moto_endpoint,
        "AWS_REGION": state.region,
        "AWS_DEFAULT_REGION": state.region,
        "AWS_CONFIG_FILE": str(paths.aws_dir / "config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(paths.aws_dir / "credentials"),
        **FAKE_CREDENTIALS,
        "KUBECONFIG": primary.kubeconfig if primary else "",
        "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")]),
    }


def unset_for_sandbox() -> tuple[str, ...]:
    """Variables that would leak the user's real account into the sandbox."""
    return ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "PULUMI_ACCESS_TOKEN")
