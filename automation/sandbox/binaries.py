"""Locate the binaries the sandbox and the tests start: control plane, kwok, pulumi.

Built by ``scripts/testbin`` (and ``scripts/build-pulumi``) into a version-keyed cache.

The versions are read from the wrapper modules in ``tools/go/`` (kwok and the cloud
controller are pinned in Kubernetes' wrapper, which they share) so the build script and
the tests can never disagree about which cache directory to use.
Binaries in ``KUBEBUILDER_ASSETS`` (the envtest convention) take precedence.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUILD_HINT = "run `scripts/testbin` (builds them from Go modules into the cache)"

_PINS = {
    "kubernetes": "k8s.io/kubernetes",
    "etcd": "go.etcd.io/etcd/server/v3",
    "kwok": "sigs.k8s.io/kwok",
}
_TOOLS = {
    "external-dns": "sigs.k8s.io/external-dns",
    "cloud-provider-aws": "k8s.io/cloud-provider-aws",
}
_BINARIES = {
    "etcd": "etcd",
    "kube-apiserver": "kubernetes",
    "kube-controller-manager": "kubernetes",
    "kube-scheduler": "kubernetes",
    "kwok": "kwok",
}


class MissingBinaries(RuntimeError):
    """Raised when a binary the control plane needs is not built yet."""


@dataclass(frozen=True)
class Binaries:
    """Absolute paths of every executable the control-plane fixtures start."""

    etcd: Path
    kube_apiserver: Path
    kube_controller_manager: Path
    kube_scheduler: Path
    kwok: Path
    kwok_stages: Path
    versions: dict[str, str]


def cache_root() -> Path:
    """``$KUBESHIFT_TESTBIN_DIR`` or ``~/.cache/kubeshift/testbin``."""
    env = os.environ.get("KUBESHIFT_TESTBIN_DIR")
    return Path(env) if env else Path.home() / ".cache" / "kubeshift" / "testbin"


_SHARED_WRAPPER = {"kwok": "kubernetes", "cloud-provider-aws": "kubernetes"}
"""Components pinned in another's wrapper module (compiled against the same libraries)."""


def pinned_version(component: str) -> str:
    """The version a wrapper module pins, e.g. ``v1.36.3`` for ``kubernetes``."""
    gomod = REPO / "tools" / "go" / _SHARED_WRAPPER.get(component, component) / "go.mod"
    module = {**_PINS, **_TOOLS}[component]
    pattern = rf"^\s*(?:require\s+)?{re.escape(module)}\s+(v\S+)"
    match = re.search(pattern, gomod.read_text(), re.M)
    if not match:
        raise MissingBinaries(f"{gomod} does not pin {module}")
    return match.group(1)


def component_dir(component: str) -> Path:
    return cache_root() / f"{component}-{pinned_version(component)}"


def _find(binary: str) -> Path | None:
    assets = os.environ.get("KUBEBUILDER_ASSETS")
    candidates = [Path(assets) / binary] if assets else []
    candidates.append(component_dir(_BINARIES[binary]) / binary)
    return next((c for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)


def locate() -> Binaries:
    """Every binary, or :class:`MissingBinaries` naming what is absent and how to build it."""
    found = {name: _find(name) for name in _BINARIES}
    stages = component_dir("kwok") / "stages"
    missing = sorted(name for name, path in found.items() if path is None)
    from automation.sandbox.kwok import STAGE_FILES

    absent = [name for name in STAGE_FILES if not (stages / name).is_file()]
    if absent:
        missing.append(f"kwok stages {', '.join(absent)} (in {stages})")
    if missing:
        raise MissingBinaries(
            f"control-plane binaries missing from {cache_root()}: {', '.join(missing)}; "
            f"{BUILD_HINT}"
        )
    paths = {name.replace("-", "_"): path for name, path in found.items()}
    return Binaries(
        **paths,  # type: ignore[arg-type]
        kwok_stages=stages,
        versions={c: pinned_version(c) for c in _PINS},
    )


def tool(component: str, binary: str) -> Path:
    """A controller the tests run beside the control plane (external-dns, the AWS
    cloud-controller-manager), from its component's cache directory."""
    path = component_dir(component) / binary
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise MissingBinaries(f"{binary} is missing from {cache_root()}; {BUILD_HINT}")
    return path


def external_dns() -> Path:
    """The external-dns binary the DNS-writers tests run against moto."""
    return tool("external-dns", "external-dns")


def cloud_controller_manager() -> Path:
    """The AWS cloud-controller-manager whose route controller the routes tests run."""
    return tool("cloud-provider-aws", "aws-cloud-controller-manager")


# --- the pulumi CLI ------------------------------------------------------------------
WRAPPER_GOMOD = REPO / "tools" / "go" / "pulumi" / "go.mod"
CLI_MODULE = "github.com/pulumi/pulumi/pkg/v3"
ENGINE_BUILD_HINT = (
    "run `scripts/build-pulumi` (builds the pulumi CLI and Python language host from Go "
    "modules into the cache), or point KUBESHIFT_PULUMI_BIN_DIR at a Pulumi install's bin directory"
)


class MissingEngine(RuntimeError):
    """Raised when no usable ``pulumi`` CLI can be found."""


@dataclass(frozen=True)
class PulumiInstall:
    """Where the engine is and which version it reports."""

    bin_dir: Path
    pulumi: Path
    version: str
    source: str  # "KUBESHIFT_PULUMI_BIN_DIR", "cache" or "PATH"

    def env_path(self, path: str | None = None) -> str:
        """A PATH value with this engine's directory first."""
        rest = os.environ.get("PATH", "") if path is None else path
        return os.pathsep.join([str(self.bin_dir), rest]) if rest else str(self.bin_dir)


def pinned_pulumi_version() -> str:
    """The Pulumi version the wrapper module pins, e.g. ``v3.259.0``."""
    match = re.search(
        rf"^\s*(?:require\s+)?{re.escape(CLI_MODULE)}\s+(v\S+)", WRAPPER_GOMOD.read_text(), re.M
    )
    if not match:
        raise MissingEngine(f"{WRAPPER_GOMOD} does not require {CLI_MODULE}.")
    return match.group(1)


def cache_bin_dir() -> Path:
    """The directory ``scripts/build-pulumi`` builds into."""
    return cache_root() / f"pulumi-{pinned_pulumi_version()}" / "bin"


def _version_of(pulumi: Path) -> str:
    try:
        out = subprocess.run(
            [str(pulumi), "version"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PULUMI_SKIP_UPDATE_CHECK": "true"},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MissingEngine(f"{pulumi} does not run ({exc}); {ENGINE_BUILD_HINT}.") from exc
    if out.returncode != 0:
        raise MissingEngine(
            f"`{pulumi} version` failed: {out.stderr.strip()}; {ENGINE_BUILD_HINT}."
        )
    return out.stdout.strip()


def _from_dir(bin_dir: Path, source: str) -> PulumiInstall:
    pulumi = bin_dir / "pulumi"
    if not os.access(pulumi, os.X_OK):
        raise MissingEngine(f"{source}: no executable pulumi in {bin_dir}; {ENGINE_BUILD_HINT}.")
    return PulumiInstall(bin_dir=bin_dir, pulumi=pulumi, version=_version_of(pulumi), source=source)


def find_engine() -> PulumiInstall:
    """Find the engine by override variable, then build cache, then ``PATH``."""
    override = os.environ.get("KUBESHIFT_PULUMI_BIN_DIR")
    if override:
        return _from_dir(Path(override), "KUBESHIFT_PULUMI_BIN_DIR")
    cached = cache_bin_dir()
    if (cached / "pulumi").exists():
        return _from_dir(cached, "cache")
    on_path = shutil.which("pulumi")
    if on_path:
        return _from_dir(Path(on_path).resolve().parent, "PATH")
    raise MissingEngine(f"no pulumi CLI in {cached} nor on PATH; {ENGINE_BUILD_HINT}.")
